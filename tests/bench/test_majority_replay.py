"""``benchmarks/majority_replay.py``: judged items decided again under the majority rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .conftest import benchmark_script

ROOT = Path(__file__).parents[2]
replay = benchmark_script("majority_replay")


def item(answers: list[str | None], final: str | None, *, method: str = "boxed", truth: str = "44") -> dict[str, Any]:
    replies = [{"who": f"solver-{k}", "text": "...", "answer": a, "method": method} for k, a in enumerate(answers)]
    judge = {"who": "judge", "text": f"The final answer is {final}.", "answer": final}
    result = {"final": final, "correct": final == truth, "outcome": "correct" if final == truth else "wrong"}
    return {"truth": truth, "match": "numeric", "arms": {"format:x": {**result, "rounds": [replies], "judge": judge}}}


def decided(entry: dict[str, Any]) -> dict[str, Any] | None:
    result: dict[str, Any] | None = replay.replayed(entry, entry["arms"]["format:x"])
    return result


def test_a_unanimous_panel_overrules_the_judge() -> None:
    result = decided(item(["44", "44", "44"], "22"))
    assert result is not None
    assert (result["final"], result["correct"], result["outcome"]) == ("44", True, "correct")


def test_a_unanimous_wrong_panel_stays_wrong() -> None:
    result = decided(item(["45", "45", "45"], "44"))
    assert result is not None
    assert (result["final"], result["correct"], result["outcome"]) == ("45", False, "wrong")


def test_a_majority_overrules_the_judge() -> None:
    result = decided(item(["44", "22", "44"], "22"))
    assert result is not None
    assert result["final"] == "44"
    result = decided(item(["44", None, "44"], "22"))  # one reply stated nothing: 2 of 3 still
    assert result is not None
    assert result["final"] == "44"


def test_the_rule_leaves_the_rest_alone() -> None:
    assert decided(item(["44", "44", "44"], "44")) is None  # the judge agrees
    assert decided(item(["44", "21", "22"], "22")) is None  # no majority: the judge decides
    assert decided(item(["44", None, None], "22")) is None  # 1 of 3 is no majority
    assert decided(item(["44", "44", "44"], "22", method="last-number")) is None  # read, not stated
    assert decided(item(["44"], "22")) is None  # one reply is no panel


def test_the_replayed_file_reads_as_results(tmp_path: Path) -> None:
    source = ROOT / "benchmarks" / "results" / "word-problems-0.5b-convergence-gpu.json"
    out = tmp_path / "replayed.json"
    assert replay.main([str(source), "-o", str(out)]) == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    right = sum(entry["arms"]["format:convergence-seeking"]["correct"] for entry in document["items"])
    assert right == 60  # 54 recorded; 6 items where a majority of the replies had the right answer
