"""The output formats: JSON and Markdown shapes, CSV rows that accumulate, the terminal table."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from dialectic.core.domain import DebateState
from dialectic.core.errors import InvalidArgumentsError, ProviderAuthError
from dialectic.eval.config import load_eval_config
from dialectic.eval.evaluator import EvaluationReport, plan_evaluation, run_evaluation
from dialectic.eval.output import (
    CSV_COLUMNS,
    append_csv,
    check_csv_target,
    output_format,
    render_json,
    render_markdown,
    report_to_json,
    scores_table,
)
from dialectic.eval.scores import CRITERION_KEYS
from dialectic.llm.base import CompletionRequest
from dialectic.llm.registry import ProviderPool
from dialectic.llm.retry import RetryPolicy
from dialectic.llm.scripted import Script, ScriptedProvider, ScriptedReply


@pytest.fixture
def make_report(
    solved_state: DebateState, write_config: Callable[..., Path], scripted_reply: Callable[..., ScriptedReply]
) -> Callable[..., EvaluationReport]:
    """Alpha scores 6 then 8, beta fails, gamma scores 9 and 9 (two samples each)."""

    def make(state: DebateState | None = None) -> EvaluationReport:
        queues: dict[str, list[Script]] = {
            "model-alpha": [scripted_reply(6, reason="Thin | on security"), scripted_reply(8)],
            "model-beta": [ProviderAuthError("bad key"), ProviderAuthError("bad key")],
            "model-gamma": [scripted_reply(9), scripted_reply(9)],
        }

        def respond(request: CompletionRequest) -> Script:
            return queues[request.model].pop(0)

        config = write_config(["alpha", "beta", "gamma"])
        plan = plan_evaluation(state or solved_state, load_eval_config(config))
        pool = ProviderPool(overrides={"scripted": ScriptedProvider(respond)})
        return asyncio.run(
            run_evaluation(plan, pool, samples=2, source="debate.json", retry=RetryPolicy(max_attempts=1))
        )

    return make


def test_json_holds_the_aggregate_and_every_evaluator(make_report: Callable[..., EvaluationReport]) -> None:
    data = json.loads(render_json(make_report()))
    assert data["debateId"] == "deb-20240501-090000-ABCD"
    assert data["source"] == "debate.json" and data["samples"] == 2
    assert data["problem"].startswith("Design a rate limiter")
    assert set(data["scores"]) == set(CRITERION_KEYS)
    assert data["scores"]["overall"] == {"mean": 8.0, "sd": 1.41, "min": 6, "max": 9, "n": 4}
    alpha, beta, gamma = data["evaluators"]
    assert (alpha["id"], alpha["status"], beta["status"], gamma["status"]) == ("alpha", "ok", "failed", "ok")
    assert alpha["provider"] == "scripted" and alpha["model"] == "model-alpha"
    assert alpha["prompts"] == {"system": "built-in default", "user": "built-in default"}
    assert alpha["scores"]["overall"] == {"mean": 7.0, "sd": 1.41, "min": 6, "max": 8, "n": 2}
    assert [s["sample"] for s in alpha["samples"]] == [1, 2]
    first = next(s for s in alpha["samples"] if s["sample"] == 1)
    assert first["scores"]["security"] == {"score": 6, "reason": "Thin | on security"}
    assert set(first) == {"sample", "model", "latencyMs", "usage", "scores", "scorePattern"}
    assert first["scorePattern"] == "every criterion scored 6"
    assert beta["scores"] == {} and beta["samples"] == []
    assert beta["failures"] == [{"sample": 1, "error": "bad key"}, {"sample": 2, "error": "bad key"}]


def test_markdown_has_the_summary_table_reasons_and_failures(make_report: Callable[..., EvaluationReport]) -> None:
    text = render_markdown(make_report())
    assert text.startswith("# Evaluation of debate deb-20240501-090000-ABCD\n")
    assert "- Evaluators: 2 of 3 succeeded; samples per evaluator: 2" in text
    assert "| Criterion | Mean | SD | Min | Max | N |" in text
    assert "| Overall | 8.00 | 1.41 | 6 | 9 | 4 |" in text
    assert "### Alpha (`alpha`, scripted/model-alpha)" in text
    assert "Sample 2:" in text
    assert "| Security | 6 | Thin \\| on security |" in text
    assert "### Beta (`beta`, scripted/model-beta)\n\nNo valid evaluation." in text
    assert "## Failures" in text and "- Beta (`beta`), sample 1: bad key" in text
    warning = "Warning: the criterion scores follow a pattern down the list (every criterion scored 9), not the"
    assert f"\n\n{warning} solution;" in text


def test_csv_appends_one_row_per_run_and_writes_the_header_once(
    tmp_path: Path, make_report: Callable[..., EvaluationReport], solved_state: DebateState
) -> None:
    path = tmp_path / "out" / "scores.csv"
    check_csv_target(path)
    append_csv(path, make_report())
    other = solved_state.model_copy(update={"id": "deb-other"})
    check_csv_target(path)
    append_csv(path, make_report(other))
    rows = list(csv.reader(path.open(encoding="utf-8", newline="")))
    assert rows[0] == list(CSV_COLUMNS)
    assert len(rows) == 3
    first, second = (dict(zip(rows[0], row, strict=True)) for row in rows[1:])
    assert (first["debateId"], second["debateId"]) == ("deb-20240501-090000-ABCD", "deb-other")
    assert first["evaluators"] == "2" and first["samples"] == "2"
    assert first["overall"] == "8.00" and first["security"] == "8.00"


def test_an_empty_csv_file_gets_a_header(tmp_path: Path, make_report: Callable[..., EvaluationReport]) -> None:
    path = tmp_path / "scores.csv"
    path.write_text("", encoding="utf-8")
    append_csv(path, make_report())
    assert path.read_text(encoding="utf-8").splitlines()[0] == ",".join(CSV_COLUMNS)


def test_a_csv_file_with_other_columns_is_refused_up_front(tmp_path: Path) -> None:
    path = tmp_path / "scores.csv"
    path.write_text("name,value\nx,1\n", encoding="utf-8")
    with pytest.raises(InvalidArgumentsError, match="other columns"):
        check_csv_target(path)


@pytest.mark.parametrize(("name", "fmt"), [("a.json", "json"), ("a.CSV", "csv"), ("a.md", "md")])
def test_the_output_format_follows_the_suffix(tmp_path: Path, name: str, fmt: str) -> None:
    assert output_format(tmp_path / name) == fmt


def test_an_unknown_suffix_or_a_directory_is_an_invalid_argument(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentsError, match=".json, .csv or .md"):
        output_format(tmp_path / "scores.txt")
    folder = tmp_path / "out.json"
    folder.mkdir()
    with pytest.raises(InvalidArgumentsError, match="is a directory"):
        output_format(folder)


def test_the_table_shows_the_spread_and_each_evaluators_mean(make_report: Callable[..., EvaluationReport]) -> None:
    console = Console(width=200, record=True, file=io.StringIO())
    report = make_report()
    console.print(scores_table(report))
    text = console.export_text()
    overall = next(line for line in text.splitlines() if "Overall" in line)
    cells = [c.strip() for c in overall.strip("│ ").split("│")]
    assert cells == ["Overall", "8.00", "1.41", "6", "9", "4", "7.00", "—", "9.00"]
    assert "2 of 3 evaluator(s), 2 sample(s) each" in text
    assert report_to_json(report)["scores"]["overall"]["n"] == 4
