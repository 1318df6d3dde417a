"""``dialectic bench`` end to end on the designed scripted model: the expected numbers are known.

With ``-n 20 --seed 0`` each class of the designed model (see ``conftest``) holds four items:

* single: right on classes 2 and 4 → 8/20; wrong on 0 and 1; class 3 → 2 unparseable, 2 cut off;
  calls 20 + 2 × 1 continuation = 22;
* majority:3: right on 1, 3, 4 → 12/20, no ties; its three draws are self-consistency's first three
  (shared samples: asked once, counted by both arms);
* self-consistency (6 samples, matched to debate:3x2): right on 1, 3, 4 → 12/20; class 2 is a
  3–3 tie, decided for the first sample's wrong answer → 4 ties;
* debate:3x2: right on 1 and 4 → 8/20; round 1 → 2: 4 wrong→right (class 1), 8 right→wrong
  (classes 2 and 3); unanimous last round on every item;
* dialectic: right exactly on the items whose answer is even.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from dialectic.bench.plot import require_matplotlib
from dialectic.bench.tasks import arithmetic_task
from dialectic.bench.vote import TIE_RULE
from dialectic.core.errors import ProviderAuthError
from dialectic.core.extras import MissingExtraError
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script, ScriptedProvider

from .conftest import SCRIPTED_ARGS, Invoke, designed

ARMS = "single,majority:3,self-consistency,debate:3x2,dialectic"
DIALECTIC_CONFIG = {
    "agents": [
        {"id": "agent-architect", "name": "Architect", "role": "architect", "provider": "scripted", "model": "m"},
        {"id": "agent-kiss", "name": "Simplicity", "role": "kiss", "provider": "scripted", "model": "m"},
    ],
    "judge": {"id": "judge", "name": "Judge", "role": "generalist", "provider": "scripted", "model": "m"},
    "debate": {"rounds": 2},
}


def arms_by_name(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {arm["arm"]: arm for arm in document["arms"]}


def even_truths(n: int) -> int:
    return sum(int(item.truth) % 2 == 0 for item in arithmetic_task(n, 0).items)


@pytest.fixture
def config_file(home: Path) -> Path:
    path = home / "bench-config.json"
    path.write_text(json.dumps(DIALECTIC_CONFIG), encoding="utf-8")
    return path


def test_designed_accuracies_costs_ties_and_flips(
    invoke: Invoke, use_provider: Any, config_file: Path, home: Path
) -> None:
    provider = ScriptedProvider(designed)
    use_provider(provider)
    out = invoke(
        "arithmetic", "-n", "20", "--arms", ARMS, "-c", str(config_file), "-o", "results.json", "--report", "results.md"
    )
    assert out.code == 0, out.stderr
    document = json.loads((home / "results.json").read_text())
    arms = arms_by_name(document)

    single = arms["single"]
    assert (single["correct"], single["wrong"], single["unparsed"], single["truncated"]) == (8, 8, 2, 2)
    assert single["calls"] == 22 and single["truncated_replies"] == 2 and single["unparsed_replies"] == 2
    assert single["accuracy"]["estimate"] == pytest.approx(0.4)
    assert single["accuracy"]["low"] < 0.4 < single["accuracy"]["high"]

    assert (arms["majority:3"]["correct"], arms["majority:3"]["ties"], arms["majority:3"]["calls"]) == (12, 0, 60)
    sc = arms["self-consistency"]
    assert (sc["correct"], sc["ties"], sc["calls"], sc["planned_calls"]) == (12, 4, 120, 6)
    assert sc["matched_to"] == "debate:3x2"
    assert sum(sc["decisions"].values()) == 20 and single["decisions"] is None
    assert sc["decisions"]["split_picked_right"] + sc["decisions"]["all_right_kept"] == 12
    assert sc["vs_single"]["estimate"] == pytest.approx(0.2)

    debate = arms["debate:3x2"]
    assert (debate["correct"], debate["ties"], debate["calls"]) == (8, 0, 120)
    assert debate["transitions"] == [{"label": "round 1 → round 2", "wrong_to_right": 4, "right_to_wrong": 8}]
    assert debate["agreement"] == 1.0
    assert debate["vs_single"]["estimate"] == pytest.approx(0.0)
    assert debate["vs_self_consistency"]["estimate"] == pytest.approx(-0.2)

    assert arms["dialectic"]["correct"] == even_truths(20)
    assert arms["dialectic"]["calls"] == sum(1 for c in provider.calls if not c.tag.startswith("bench/"))
    # every arm counts its calls as if alone; majority:3's three draws are self-consistency's first three
    assert sum(a["calls"] for a in arms.values()) - len(provider.calls) == 3 * 20

    assert len(document["items"]) == 20
    first = document["items"][0]
    assert set(first["arms"]) == set(ARMS.split(","))
    assert first["question"] == arithmetic_task(1, 0).items[0].question
    assert first["truth"] == arithmetic_task(1, 0).items[0].truth
    assert len(first["arms"]["debate:3x2"]["rounds"]) == 2 and len(first["arms"]["debate:3x2"]["rounds"][1]) == 3
    assert document["method"]["tie_rule"] == TIE_RULE

    markdown = (home / "results.md").read_text()
    assert markdown == out.stdout
    assert TIE_RULE in markdown
    assert "| single | 20 | 40.0% |" in markdown
    assert "| debate:3x2 | round 1 → round 2 | 4 | 8 |" in markdown
    assert "### From the last replies to the final answer" in markdown
    debate_row = next(line for line in markdown.splitlines() if line.startswith("| debate:3x2 | 20 "))
    assert "| −20.0 pp [" in debate_row and "| loses |" in debate_row
    assert "bench run bench-" in out.stderr and "resume with: dialectic bench --resume bench-" in out.stderr


def test_same_seed_same_questions_and_same_results(invoke: Invoke, use_provider: Any, home: Path) -> None:
    use_provider(ScriptedProvider(designed))
    args = ("arithmetic", "-n", "10", "--arms", "single,debate:3x2", *SCRIPTED_ARGS)
    first = invoke(*args, "-o", "a.json")
    second = invoke(*args, "-o", "b.json")
    assert first.code == second.code == 0
    a, b = (json.loads((home / name).read_text()) for name in ("a.json", "b.json"))
    strip = lambda doc: [(i["question"], {k: v["final"] for k, v in i["arms"].items()}) for i in doc["items"]]  # noqa: E731
    assert strip(a) == strip(b)
    assert a["run"]["id"] != b["run"]["id"]


def failing_from(index: int) -> Any:
    """The designed model, but every call about item ``index`` or later fails for good (exit 3)."""

    def respond(request: CompletionRequest) -> Script:
        if request.tag.startswith("bench/") and int(request.tag.split("/")[2].rsplit("-", 1)[1]) >= index:
            return ProviderAuthError("key revoked", provider="scripted", status_code=401)
        return designed(request)

    return respond


def test_resume_runs_only_the_unfinished_items(invoke: Invoke, use_provider: Any, home: Path) -> None:
    args = ("arithmetic", "-n", "20", "--arms", "single,majority:3,debate:3x2", *SCRIPTED_ARGS, "--concurrency", "1")
    use_provider(ScriptedProvider(failing_from(12)))
    stopped = invoke(*args)
    assert stopped.code == 3
    assert "stopped with 36 of 60 results saved" in stopped.stderr
    run_id = stopped.stderr.split("bench run ", 1)[1].split(":", 1)[0]

    second = ScriptedProvider(designed)
    use_provider(second)
    resumed = invoke(*args, "--resume", run_id, "-o", "resumed.json")
    assert resumed.code == 0, resumed.stderr
    items_called = {c.tag.split("/")[2] for c in second.calls}
    assert items_called == {f"arith-{i:04d}" for i in range(12, 20)}
    per_arm = {"single": 1, "majority:3": 3, "debate:3x2": 6}
    assert len(second.calls) == 8 * sum(per_arm.values()) + 1  # item 18's cut-off single is continued once

    document = json.loads((home / "resumed.json").read_text())
    assert document["run"]["id"] == run_id
    arms = arms_by_name(document)
    assert {name: arm["items"] for name, arm in arms.items()} == {name: 20 for name in per_arm}
    assert (arms["single"]["correct"], arms["majority:3"]["correct"], arms["debate:3x2"]["correct"]) == (8, 12, 8)

    again = ScriptedProvider(designed)
    use_provider(again)
    assert invoke("--resume", run_id).code == 0
    assert again.calls == []


def test_resume_refuses_a_different_run_definition(invoke: Invoke, use_provider: Any) -> None:
    use_provider(ScriptedProvider(designed))
    first = invoke("arithmetic", "-n", "3", "--arms", "single", *SCRIPTED_ARGS)
    run_id = first.stderr.split("bench run ", 1)[1].split(":", 1)[0]
    assert invoke("arithmetic", "-n", "4", "--resume", run_id).code == 2
    assert invoke("arithmetic", "--seed", "1", "--resume", run_id).code == 2
    assert invoke("arithmetic", "--model", "other", "--resume", run_id).code == 2
    assert invoke("--resume", "bench-nope").code == 2


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("arithmetic", "--arms", "single,bogus"), 2),
        (("arithmetic", "--operands", "9"), 2),
        (("arithmetic", "-n", "0"), 2),
        (("algebra",), 2),
        (("jsonl",), 2),
        (("jsonl", "missing.jsonl"), 2),
        (("arithmetic", "--match", "exact"), 2),
        (("arithmetic", "--temperature", "3"), 2),
        (("arithmetic", "--concurrency", "0"), 2),
        (("arithmetic", "--provider", "nonesuch"), 4),
        (("arithmetic", "-c", "absent.json"), 4),
        ((), 2),
    ],
)
def test_bad_arguments_and_config_exit_codes(invoke: Invoke, args: tuple[str, ...], code: int) -> None:
    assert invoke(*args).code == code


def test_missing_api_key_is_a_config_error_before_any_call(invoke: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    out = invoke("arithmetic", "-n", "2", "--provider", "openai", "--model", "gpt-4o-mini")
    assert out.code == 4


def test_jsonl_task_with_exact_and_numeric_answers(invoke: Invoke, use_provider: Any, home: Path) -> None:
    rows = [
        {"id": "n1", "question": "What is the result of 2+3*4?", "answer": "14"},
        {"id": "n2", "question": "What is the result of 5+5?", "answer": 11},
        {"id": "t1", "question": "Capital of France? What is the result of 1+1?", "answer": "Paris"},
    ]
    (home / "data.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")

    def respond(request: CompletionRequest) -> Script:
        if "France" in request.last_user:
            return "The final answer is Paris."
        return "\\boxed{14}" if "2+3" in request.last_user else "\\boxed{10}"

    use_provider(ScriptedProvider(respond))
    out = invoke("jsonl", "data.jsonl", "--arms", "single", *SCRIPTED_ARGS, "-o", "r.json")
    assert out.code == 0, out.stderr
    items = {i["id"]: i for i in json.loads((home / "r.json").read_text())["items"]}
    assert {k: (v["match"], v["arms"]["single"]["correct"]) for k, v in items.items()} == {
        "n1": ("numeric", True),
        "n2": ("numeric", False),
        "t1": ("exact", True),
    }


def test_plot_without_matplotlib_names_the_plot_extra(invoke: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    out = invoke("arithmetic", "-n", "2", "--arms", "single", *SCRIPTED_ARGS, "--plot", "p.png")
    assert out.code == 4
    message = "--plot needs the 'plot' extra, which is not installed (no module named 'matplotlib'): "
    with pytest.raises(MissingExtraError, match=re.escape(message + "pip install 'dialectic-debate[plot]'")):
        require_matplotlib()


def test_plots_are_written_when_matplotlib_is_installed(invoke: Invoke, use_provider: Any, home: Path) -> None:
    pytest.importorskip("matplotlib")
    use_provider(ScriptedProvider(designed))
    arms = "single,majority:3,self-consistency,debate:3x2"
    out = invoke("arithmetic", "-n", "10", "--arms", arms, *SCRIPTED_ARGS, "--plot", "plots/p.png")
    assert out.code == 0, out.stderr
    assert (home / "plots" / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (home / "plots" / "p-pareto.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
