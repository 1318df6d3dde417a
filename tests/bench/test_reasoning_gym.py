"""reasoning-gym tasks (``bench rg:NAME``): built offline from a seed, scored by the library's own scorer."""

from __future__ import annotations

import pytest

from dialectic.bench.tasks import rg_task
from dialectic.bench.tasks.reasoning_gym import ANY_VALID, parse_task_options
from dialectic.core.errors import InvalidArgumentsError

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
