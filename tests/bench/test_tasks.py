"""The arithmetic generator's determinism and forms, and the JSONL loader."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dialectic.bench.tasks import arithmetic_form, arithmetic_task, eval_expression, jsonl_task
from dialectic.core.errors import InvalidArgumentsError


def test_same_seed_and_n_give_the_same_items() -> None:
    assert arithmetic_task(20, 7) == arithmetic_task(20, 7)
    assert arithmetic_task(20, 7).items != arithmetic_task(20, 8).items


def test_a_longer_run_extends_a_shorter_one() -> None:
    assert arithmetic_task(30, 0).items[:10] == arithmetic_task(10, 0).items


def test_questions_follow_the_literature_pattern_and_operand_range() -> None:
    task = arithmetic_task(50, 0)
    for item in task.items:
        found = re.fullmatch(r"What is the result of (\d+)\+(\d+)\*(\d+)\+(\d+)-(\d+)\*(\d+)\?", item.question)
        assert found is not None
        a, b, c, d, e, f = (int(x) for x in found.groups())
        assert all(0 <= v <= 29 for v in (a, b, c, d, e, f))
        assert item.truth == str(a + b * c + d - e * f)
        assert item.match == "numeric"
    assert [i.id for i in task.items[:2]] == ["arith-0000", "arith-0001"]
    assert len({i.id for i in task.items}) == 50


@pytest.mark.parametrize(
    ("operands", "form"), [(6, "a+b*c+d-e*f"), (5, "a+b*c+d-e"), (4, "a+b*c+d"), (3, "a+b*c"), (2, "a+b")]
)
def test_fewer_operands_keep_a_prefix_of_the_pattern(operands: int, form: str) -> None:
    assert arithmetic_form(operands) == form
    question = arithmetic_task(1, 0, operands).items[0].question
    expression = question.removeprefix("What is the result of ").removesuffix("?")
    assert re.sub(r"\d+", "x", expression) == re.sub(r"[a-f]", "x", form)


@pytest.mark.parametrize("operands", [1, 7])
def test_operands_out_of_range_are_rejected(operands: int) -> None:
    with pytest.raises(InvalidArgumentsError):
        arithmetic_task(5, 0, operands)


def test_expression_evaluation_respects_precedence() -> None:
    assert eval_expression("3+4*5+6-7*8") == 3 + 4 * 5 + 6 - 7 * 8
    assert eval_expression("0-29*29") == -841
    assert eval_expression("2+3") == 5


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_jsonl_items_and_default_match_modes(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "d.jsonl",
        [{"id": "q1", "question": "2+2?", "answer": 4}, {"id": 2, "question": "Capital of France?", "answer": "Paris"}],
    )
    task = jsonl_task(path, None, None)
    assert [(i.id, i.truth, i.match) for i in task.items] == [("q1", "4", "numeric"), ("2", "Paris", "exact")]
    assert [i.id for i in jsonl_task(path, 1, None).items] == ["q1"]
    assert all(i.match == "exact" for i in jsonl_task(path, None, "exact").items)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"id": "a", "question": "q"}], "missing answer"),
        ([{"id": "a", "question": "q", "answer": 1}, {"id": "a", "question": "r", "answer": 2}], "duplicate id"),
        (["not an object"], "expected an object"),
        ([], "holds no items"),
    ],
)
def test_jsonl_errors_name_the_line(tmp_path: Path, rows: list[object], message: str) -> None:
    with pytest.raises(InvalidArgumentsError, match=message):
        jsonl_task(write_jsonl(tmp_path / "d.jsonl", rows), None, None)


def test_numeric_match_needs_numeric_answers(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": "a", "question": "q", "answer": "Paris"}])
    with pytest.raises(InvalidArgumentsError, match="not a number"):
        jsonl_task(path, None, "numeric")


def test_missing_dataset_is_an_argument_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentsError, match="dataset not found"):
        jsonl_task(tmp_path / "absent.jsonl", None, None)
    with pytest.raises(InvalidArgumentsError, match="is a device, not a regular file"):
        jsonl_task(Path("/dev/zero"), None, None)
