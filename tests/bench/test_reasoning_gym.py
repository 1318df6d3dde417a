"""reasoning-gym tasks (``bench rg:NAME``): built offline from a seed, scored by the library's own scorer."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dialectic.bench.tasks import rg_task
from dialectic.bench.tasks.reasoning_gym import ANY_VALID, parse_task_options
from dialectic.core.errors import InvalidArgumentsError
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import ScriptedProvider, ScriptedReply

from .conftest import SCRIPTED_ARGS, Invoke

reasoning_gym = pytest.importorskip("reasoning_gym")


def library_entry(name: str, index: int, seed: int, **options: object) -> tuple[object, dict[str, object]]:
    dataset = reasoning_gym.create_dataset(name, seed=seed, size=index + 1, **options)
    return dataset, dataset[index]


@pytest.mark.parametrize(
    ("name", "answer"),
    [
        ("countdown", "12 + 71 + 33"),  # the reference answer of item 0 at seed 1
        ("countdown", "33 + 71 + 12"),  # another valid expression: any valid answer counts
        ("countdown", "71 - 33 + 12"),  # uses every number but misses the target: partial credit
        ("countdown", "not an expression"),
        ("palindrome_generation", "oucuo"),
        ("palindrome_generation", "uocou"),
        ("palindrome_generation", "ouocu"),
    ],
)
def test_our_score_is_the_librarys_score_answer(name: str, answer: str) -> None:
    options = {"min_numbers": 3, "max_numbers": 3} if name == "countdown" else {}
    task = rg_task(f"rg:{name}", 2, 1, options)
    dataset, entry = library_entry(name, 0, 1, **options)
    item = task.items[0]
    assert item.question == str(entry["question"]).strip()
    assert item.score(answer) == pytest.approx(dataset.score_answer(answer, entry))  # type: ignore[attr-defined]


def test_a_reply_is_read_from_its_answer_tags_then_scored() -> None:
    item = rg_task("rg:countdown", 1, 1, {"min_numbers": 3, "max_numbers": 3}).items[0]
    found = item.extract("I add them all.\n<answer>33 + 71 + 12</answer>")
    assert (found.answer, found.method) == ("33 + 71 + 12", "tagged")
    assert item.score(found.answer) == 1.0
    assert item.extract("<answer></answer>").answer is None
    assert item.match == "scored"


def test_a_dataset_with_numeric_answers_is_read_as_numbers_and_still_scored_by_its_scorer() -> None:
    item = rg_task("rg:gsm_symbolic", 3, 7).items[0]
    assert item.match == "numeric" and item.form == "tagged"
    found = item.extract(f"So the total is <answer>{item.truth}</answer>.")
    assert found.answer == item.truth and item.score(found.answer) == 1.0
    assert item.score("-123456") < 1.0


def test_items_depend_on_seed_and_index_only() -> None:
    small, large = rg_task("rg:graph_color", 3, 5), rg_task("rg:graph_color", 6, 5)
    assert [i.question for i in small.items] == [i.question for i in large.items[:3]]
    assert small.items[0].truth == ANY_VALID  # graph colouring has no single reference answer
    assert rg_task("rg:graph_color", 3, 6).fingerprint != small.fingerprint


def test_options_are_read_as_yaml_values() -> None:
    assert parse_task_options(["min_numbers=3", "operators=['+', '-']", "p=0.5", "flag=true", "name=abc"]) == {
        "min_numbers": 3,
        "operators": ["+", "-"],
        "p": 0.5,
        "flag": True,
        "name": "abc",
    }


@pytest.mark.parametrize(
    ("task", "options", "message"),
    [
        ("rg:countdwn", {}, "— did you mean `rg:countdown`?"),
        ("rg:countdown", {"min_number": 3}, "— did you mean `min_numbers`?"),
        ("rg:countdown", {"seed": 3}, "use --seed"),
        ("rg:countdown", {"min_numbers": 5, "max_numbers": 2}, "refused its options"),
    ],
)
def test_bad_names_and_options_are_one_line_errors(task: str, options: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidArgumentsError, match=message):
        rg_task(task, 2, 0, options)


@pytest.mark.parametrize("pair", ["novalue", "=3"])
def test_malformed_options_are_refused(pair: str) -> None:
    with pytest.raises(InvalidArgumentsError, match="key=value"):
        parse_task_options([pair])


COUNTDOWN = ["--task-option", "min_numbers=3", "--task-option", "max_numbers=3", "--task-option", "max_value=20"]


def countdown_reference(index: int, seed: int) -> str:
    _, entry = library_entry("countdown", index, seed, min_numbers=3, max_numbers=3, max_value=20)
    return str(entry["answer"])


def test_the_command_runs_a_dataset_with_its_options_and_scores_every_arm(
    invoke: Invoke, use_provider: Any, home: Path
) -> None:
    """``bench rg:countdown --task-option …``: items built with the options, each reply scored by the library."""

    def respond(request: CompletionRequest) -> ScriptedReply:
        _, arm, item_id, who, *_ = request.tag.split("/")
        index = int(item_id.rsplit("-", 1)[1])
        if who == "judge":
            return ScriptedReply(text="Candidate 2 is right.\n<choice>2</choice>")
        right = index % 2 == 0 or who.endswith("-2")  # odd items: only the second sample is right
        answer = countdown_reference(index, seed=7) if right else "1 + 1"
        return ScriptedReply(text=f"Working.\n<answer>{answer}</answer>")

    use_provider(ScriptedProvider(respond))
    out = invoke(
        "rg:countdown",
        *COUNTDOWN,
        "-n",
        "4",
        "--seed",
        "7",
        "--arms",
        "single,best-of:3",
        "-o",
        "run.json",
        *SCRIPTED_ARGS,
    )
    assert out.code == 0, out.stderr
    document = json.loads((home / "run.json").read_text(encoding="utf-8"))
    assert document["run"]["task_options"] == {"min_numbers": 3, "max_numbers": 3, "max_value": 20}
    items = document["items"]
    assert [item["id"] for item in items] == [f"countdown-{i:04d}" for i in range(4)]
    assert all(len(re.findall(r"\b\d+\b", item["question"].split("=")[0])) >= 3 for item in items)
    single = [item["arms"]["single"] for item in items]
    assert [arm["correct"] for arm in single] == [True, False, True, False]
    assert all(arm["score"] is not None for arm in single)
    best = [item["arms"]["best-of:3"] for item in items]
    assert all(arm["correct"] for arm in best)  # the judge picked the right second sample where the first was wrong
    assert "### Scores" in out.stdout


def test_an_unknown_option_on_the_command_line_is_a_one_line_error(home: Path) -> None:
    """The installed command: exit 2, one line naming the option meant, before any call."""
    args = ["bench", "rg:countdown", "--task-option", "min_numbrs=3", "-n", "2", *SCRIPTED_ARGS]
    out = subprocess.run([sys.executable, "-m", "dialectic", *args], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    assert "min_numbers" in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "Traceback" not in out.stderr
