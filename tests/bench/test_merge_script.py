"""``benchmarks/bench_merge.py``: one report from runs that asked the same questions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dialectic.llm.scripted import ScriptedProvider

from .conftest import SCRIPTED_ARGS, Invoke, benchmark_script, designed


def run_id(invoke: Invoke, *args: str) -> str:
    out = invoke("arithmetic", *args, *SCRIPTED_ARGS)
    assert out.code == 0, out.stderr
    return out.stderr.split("bench run ", 1)[1].split(":", 1)[0]


def test_arms_of_two_runs_in_one_report_on_their_common_items(
    invoke: Invoke, use_provider: Any, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    use_provider(ScriptedProvider(designed))
    first = run_id(invoke, "-n", "10", "--arms", "single,self-consistency:6")
    second = run_id(invoke, "-n", "10", "--arms", "single,debate:3x2")
    store = str(home / "home")
    merge = benchmark_script("bench_merge")

    assert merge.main(["--store", store, f"{first}=single,self-consistency:6", f"{second}=debate:3x2"]) == 0
    report = capsys.readouterr().out
    assert f"Run `{first} + {second}`" in report
    # The designed model (conftest): single right on 4 of 10, self-consistency and debate on 6 and 4.
    assert "| single | 10 | 40.0% |" in report
    assert "| self-consistency:6 | 10 | 60.0% |" in report
    assert "| debate:3x2 | 10 | 40.0% |" in report
    # Differences are paired across the runs: debate against the other run's self-consistency.
    debate_row = next(line for line in report.splitlines() if line.startswith("| debate:3x2 | 10 "))
    assert "| +0.0 pp [" in debate_row and "| −20.0 pp [" in debate_row
    assert "| debate:3x2 | round 1 → round 2 |" in report
    assert "### From the last replies to the final answer" in report


def test_runs_on_other_questions_and_doubled_arms_are_refused(invoke: Invoke, use_provider: Any, home: Path) -> None:
    use_provider(ScriptedProvider(designed))
    first = run_id(invoke, "-n", "4", "--arms", "single")
    other_seed = run_id(invoke, "-n", "4", "--seed", "1", "--arms", "single,majority:3")
    store = str(home / "home")
    merge = benchmark_script("bench_merge")

    with pytest.raises(SystemExit, match="did not ask the questions"):
        merge.main(["--store", store, f"{first}=single", f"{other_seed}=majority:3"])
    with pytest.raises(SystemExit, match="an arm is listed twice"):
        merge.main(["--store", store, f"{first}=single", f"{other_seed}=single"])
    with pytest.raises(SystemExit, match="has no arm majority:5"):
        merge.main(["--store", store, f"{first}=single,majority:5"])
    with pytest.raises(SystemExit, match="expected RUN=ARM"):
        merge.main(["--store", store, first])
