"""``dialectic bench`` on the generated tasks, end to end on a scripted model that knows the answers.

The model finds the item whose question the prompt asks, and answers it right on even items and
wrong on odd ones, so each run's accuracy is known before it starts.
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from dialectic.bench.tasks import GENERATORS, Item, generated_task
from dialectic.cli.bench_command import bench
from dialectic.core.errors import InvalidArgumentsError
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script, ScriptedProvider

from .conftest import SCRIPTED_ARGS, Invoke

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def questions(document: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(i["id"], i["question"], i["truth"]) for i in document["items"]]


def argument_error(*args: str) -> str:
    """The message ``dialectic bench *args`` fails with, which must be an argument error."""
    app = typer.Typer()
    app.command("bench")(bench)

    @app.callback()
    def root() -> None:
        """Test app."""

    result = CliRunner().invoke(app, ["bench", *args])
    assert isinstance(result.exception, InvalidArgumentsError), result.exception
    return str(result.exception)


def wrong(item: Item) -> str:
    if item.truth in ("True", "False"):
        return "False" if item.truth == "True" else "True"
    if item.truth in WEEKDAYS:
        return WEEKDAYS[(WEEKDAYS.index(item.truth) + 1) % 7]
    if item.match == "exact":
        return (date.fromisoformat(item.truth) + timedelta(days=1)).isoformat()
    return str(int(item.truth) + 1)


def knowing(items: tuple[Item, ...]) -> ScriptedProvider:
    def respond(request: CompletionRequest) -> Script:
        (item,) = [item for item in items if item.question in request.last_user]
        answer = item.truth if item.index % 2 == 0 else wrong(item)
        return f"Working it out step by step.\n\nFinal: \\boxed{{{answer}}}"

    return ScriptedProvider(respond)


@pytest.mark.parametrize(
    ("task", "level", "prefix"), [("word-problems", 3, "word"), ("boolean-logic", 4, "bool"), ("dates", 5, "date")]
)
def test_a_generated_task_runs_and_scores_its_answers(
    invoke: Invoke, use_provider: Any, home: Path, task: str, level: int, prefix: str
) -> None:
    items = generated_task(task, 5, 0, level).items
    use_provider(knowing(items))
    out = invoke(task, "-n", "5", "--difficulty", str(level), "--arms", "single", *SCRIPTED_ARGS, "-o", "r.json")
    assert out.code == 0, out.stderr
    document = json.loads((home / "r.json").read_text())
    assert document["task"].startswith(f"{task} (") and str(level) in document["task"]
    assert document["run"]["task"] == task and document["run"]["difficulty"] == level
    assert [i["id"] for i in document["items"]] == [f"{prefix}-{k:04d}" for k in range(5)]
    assert [i["arms"]["single"]["correct"] for i in document["items"]] == [True, False, True, False, True]
    assert f"## Bench: {document['task']}" in out.stdout


def test_the_default_difficulty_is_used_and_resume_rebuilds_the_questions(
    invoke: Invoke, use_provider: Any, home: Path
) -> None:
    default = GENERATORS["dates"].default
    items = generated_task("dates", 4, 0, default).items
    use_provider(knowing(items))
    first = invoke("dates", "-n", "4", "--arms", "single", *SCRIPTED_ARGS, "-o", "a.json")
    assert first.code == 0, first.stderr
    run = json.loads((home / "a.json").read_text())["run"]
    assert run["difficulty"] == default
    assert invoke("dates", "--difficulty", str(default + 1), "--resume", run["id"]).code == 2
    again = invoke("dates", "--difficulty", str(default), "--resume", run["id"], "-o", "b.json")
    assert again.code == 0, again.stderr
    resumed = json.loads((home / "b.json").read_text())
    assert questions(resumed) == [(i.id, i.question, i.truth) for i in items]
    assert resumed["run"]["id"] == run["id"]


def test_arithmetic_difficulty_is_its_operands(invoke: Invoke, use_provider: Any, home: Path) -> None:
    items = generated_task("arithmetic", 3, 0, 3).items
    use_provider(knowing(items))
    for flags, name in ((("--difficulty", "3"), "d.json"), (("--operands", "3"), "o.json")):
        out = invoke("arithmetic", "-n", "3", *flags, "--arms", "single", *SCRIPTED_ARGS, "-o", name)
        assert out.code == 0, out.stderr
    by_difficulty, by_operands = (json.loads((home / name).read_text()) for name in ("d.json", "o.json"))
    assert questions(by_difficulty) == questions(by_operands) == [(i.id, i.question, i.truth) for i in items]
    assert by_difficulty["run"]["operands"] == by_operands["run"]["operands"] == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("word-problems", "--difficulty", "6"), "--difficulty of word-problems must be between 1 and 5 (got 6)"),
        (("boolean-logic", "--difficulty", "0"), "--difficulty of boolean-logic must be between 1 and 8 (got 0)"),
        (("dates", "--difficulty", "9"), "--difficulty of dates must be between 1 and 6 (got 9)"),
        (("arithmetic", "--difficulty", "7"), "--difficulty of arithmetic must be between 2 and 6 (got 7)"),
        (("arithmetic", "--operands", "9"), "--operands of arithmetic must be between 2 and 6 (got 9)"),
        (("arithmetic", "--operands", "3", "--difficulty", "4"), "--operands 3 and --difficulty 4 disagree"),
        (("dates", "--operands", "3"), "--operands applies to the arithmetic task only; use --difficulty"),
        (("dates", "--match", "exact"), "--match applies to the jsonl task"),
        (("word-problems", "data.jsonl"), "the word-problems task takes no PATH"),
        (("jsonl", "data.jsonl", "--difficulty", "2"), "--difficulty applies to the generated tasks"),
    ],
)
def test_bad_difficulty_arguments_are_one_line_errors(
    invoke: Invoke, home: Path, args: tuple[str, ...], message: str
) -> None:
    (home / "data.jsonl").write_text('{"id": "a", "question": "q", "answer": "1"}\n', encoding="utf-8")
    assert invoke(*args, *SCRIPTED_ARGS).code == 2
    error = argument_error(*args, *SCRIPTED_ARGS)
    assert message in error and "\n" not in error
