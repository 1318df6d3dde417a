"""The generated tasks: determinism, the prefix property, difficulty ranges, and every answer
recomputed here from the question's text by an independent reading of it."""

from __future__ import annotations

import ast
import re
from datetime import date, timedelta

import pytest

from dialectic.bench.tasks import (
    GENERATED_TASKS,
    GENERATORS,
    Item,
    arithmetic_task,
    difficulty_help,
    generated_task,
)
from dialectic.cli.bench_command import DIFFICULTY_HELP
from dialectic.core.answers import extract_answer, is_correct
from dialectic.core.errors import InvalidArgumentsError

NEW_KINDS = ("word-problems", "boolean-logic", "dates")
PREFIXES = {"arithmetic": "arith", "word-problems": "word", "boolean-logic": "bool", "dates": "date"}


def levels(name: str) -> range:
    return range(GENERATORS[name].low, GENERATORS[name].high + 1)


ALL_LEVELS = [(name, level) for name in GENERATED_TASKS for level in levels(name)]
NEW_LEVELS = [(name, level) for name, level in ALL_LEVELS if name in NEW_KINDS]


def test_the_generated_tasks_and_the_help_that_names_their_ranges() -> None:
    assert GENERATED_TASKS == ("arithmetic", "word-problems", "boolean-logic", "dates")
    assert DIFFICULTY_HELP == difficulty_help()


@pytest.mark.parametrize(("name", "level"), ALL_LEVELS)
def test_same_arguments_same_items_and_a_longer_run_extends_a_shorter_one(name: str, level: int) -> None:
    task = generated_task(name, 30, 7, level)
    assert task == generated_task(name, 30, 7, level)
    assert generated_task(name, 10, 7, level).items == task.items[:10]
    assert generated_task(name, 10, 7, level).fingerprint != task.fingerprint
    assert generated_task(name, 30, 8, level).items != task.items
    assert [item.index for item in task.items] == list(range(30))
    assert [item.id for item in task.items[:2]] == [f"{PREFIXES[name]}-0000", f"{PREFIXES[name]}-0001"]
    assert len({item.id for item in task.items}) == 30
    assert task.name == name and task.description.startswith(f"{name} (")
    assert str(level) in task.description


@pytest.mark.parametrize(("name", "level"), NEW_LEVELS)
def test_questions_carry_no_answer_format_instruction(name: str, level: int) -> None:
    items = generated_task(name, 40, 0, level).items
    for item in items:
        assert "boxed" not in item.question and "step by step" not in item.question.lower()
    if name != "boolean-logic" or level >= 3:  # one or two operators over True/False: few expressions exist
        assert len({item.question for item in items}) >= 38


@pytest.mark.parametrize("name", GENERATED_TASKS)
def test_out_of_range_difficulty_is_a_one_line_argument_error(name: str) -> None:
    low, high = GENERATORS[name].low, GENERATORS[name].high
    for bad in (low - 1, high + 1):
        with pytest.raises(InvalidArgumentsError, match=rf"^--difficulty of {name} must be between {low} and {high}"):
            generated_task(name, 5, 0, bad)


@pytest.mark.parametrize("name", GENERATED_TASKS)
def test_without_a_difficulty_the_default_level_is_used(name: str) -> None:
    generator = GENERATORS[name]
    assert generator.low <= generator.default <= generator.high
    assert generated_task(name, 5, 0) == generated_task(name, 5, 0, generator.default)


def test_arithmetic_through_the_registry_is_the_arithmetic_task() -> None:
    assert generated_task("arithmetic", 12, 3, 4) == arithmetic_task(12, 3, 4)
    assert generated_task("arithmetic", 12, 3) == arithmetic_task(12, 3)


@pytest.mark.parametrize("name", NEW_KINDS)
def test_n_must_be_positive(name: str) -> None:
    with pytest.raises(InvalidArgumentsError, match="-n must be between 1 and 100,000 .got 0."):
        generated_task(name, 0, 0)
    with pytest.raises(InvalidArgumentsError, match="-n must be between 1 and 100,000 .got 1000000000."):
        generated_task(name, 1_000_000_000, 0)  # refused before a single item is made


# --- word problems, solved by reading the question -------------------------------------------------


def solve_word_problem(question: str) -> tuple[int, int]:
    """The answer and the number of operations it takes, from the text alone."""
    if question.startswith("A shop sells"):
        catalog = question.split(". ")[0].removeprefix("A shop sells ")
        prices = {}
        for offer in re.split(r", | and ", catalog):
            found = re.fullmatch(r"(.+) at \$(\d+) each", offer)
            assert found is not None, offer
            prices[found.group(1)] = int(found.group(2))
        bought = re.search(r"buys (.+?)(?: and pays|\. How)", question)
        assert bought is not None
        counts = re.findall(r"(\d+) ([a-z ]+?)(?:,| and|$)", bought.group(1))
        total = sum(int(c) * prices[noun if noun in prices else noun + "s"] for c, noun in counts)
        ops = 2 * len(counts) - 1
        bill = re.search(r"with a \$(\d+) bill", question)
        if bill:
            return int(bill.group(1)) - total, ops + 1
        return total, ops
    if "per hour and works" in question:
        rate = int(re.findall(r"earns \$(\d+) per hour", question)[0])
        hours = [int(h) for h in re.findall(r"(\d+) hours on", question)]
        value, ops = rate * sum(hours), len(hours)
        spent = re.search(r"spends \$(\d+)", question)
        if spent:
            value, ops = value - int(spent.group(1)), ops + 1
        saved = re.search(r"has \$(\d+) in savings", question)
        if saved:
            value, ops = value + int(saved.group(1)), ops + 1
        return value, ops
    if "km per hour" in question:
        legs = [(int(s), int(h)) for s, h in re.findall(r"at (\d+) km per hour for (\d+) hours?", question)]
        covered, ops = sum(s * h for s, h in legs), 2 * len(legs) - 1
        journey = re.search(r"journey of (\d+) km", question)
        if journey:
            return int(journey.group(1)) - covered, ops + 1
        return covered, ops
    sentences = question.split(". ")
    start = re.match(r"\w+ has (\d+) ", sentences[0])
    assert start is not None, question
    value, ops = int(start.group(1)), 0
    for sentence in sentences[1:]:
        if sentence.startswith("How many"):
            break
        ops += 1
        if found := re.search(r"(?:gives \w+|buys) (\d+) more", sentence):
            value += int(found.group(1))
        elif found := re.search(r"(?:gives|loses) (\d+) ", sentence):
            value -= int(found.group(1))
        elif sentence.endswith("doubles"):
            value *= 2
        elif sentence.endswith("triples"):
            value *= 3
        elif found := re.search(r"into (\d+) equal piles", sentence):
            assert value % int(found.group(1)) == 0
            value //= int(found.group(1))
        else:
            raise AssertionError(f"unread sentence: {sentence}")
    return value, ops


@pytest.mark.parametrize("steps", levels("word-problems"))
def test_word_problem_answers_and_step_counts(steps: int) -> None:
    task = generated_task("word-problems", 80, 1, steps)
    assert task.description == f"word-problems ({steps} step{'s' if steps > 1 else ''})"
    for item in task.items:
        assert item.match == "numeric"
        assert solve_word_problem(item.question) == (int(item.truth), steps), item.question
        assert int(item.truth) > 0
    starts = {item.question.split(" ")[0:3] == ["A", "shop", "sells"] for item in task.items}
    assert starts == {True, False}


# --- Boolean logic, checked by Python's own evaluation of a whitelisted syntax tree ------------------

ALLOWED = (ast.Expression, ast.BoolOp, ast.UnaryOp, ast.And, ast.Or, ast.Not, ast.Constant)


def evaluate(expression: str) -> tuple[bool, int]:
    """The value, by ``eval`` of a tree holding only and/or/not over True/False; and the binary operator count."""
    tree = ast.parse(expression, mode="eval")
    operators = 0
    for node in ast.walk(tree):
        assert isinstance(node, ALLOWED), ast.dump(node)
        if isinstance(node, ast.Constant):
            assert isinstance(node.value, bool)
        if isinstance(node, ast.BoolOp):
            operators += len(node.values) - 1
    return bool(eval(compile(tree, "<expression>", "eval"), {"__builtins__": {}})), operators


@pytest.mark.parametrize("operators", levels("boolean-logic"))
def test_boolean_answers_operator_counts_and_balance(operators: int) -> None:
    items = generated_task("boolean-logic", 200, 2, operators).items
    for item in items:
        found = re.fullmatch(
            r"What is the value of the Boolean expression `(.+)`\? Answer True or False\.", item.question
        )
        assert found is not None, item.question
        assert evaluate(found.group(1)) == (item.truth == "True", operators)
        assert item.truth in ("True", "False") and item.match == "exact"
    assert 70 <= sum(item.truth == "True" for item in items) <= 130


def test_every_operand_that_is_not_a_literal_is_bracketed() -> None:
    """No answer depends on precedence: no ``not`` or and/or sits bare beside another operator."""
    for item in generated_task("boolean-logic", 100, 0, 6).items:
        expression = item.question.split("`")[1]
        depth, bare = 0, []
        for token in re.findall(r"\(|\)|and|or|not", expression):
            depth += {"(": 1, ")": -1}.get(token, 0)
            if depth == 0 and token in ("and", "or", "not"):
                bare.append(token)
        assert bare in (["and"], ["or"], ["not"]), expression


# --- dates, recomputed with datetime ---------------------------------------------------------------

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]  # fmt: skip


def solve_date(question: str) -> tuple[str, int]:
    start_text = re.search(r"(\w+day), (\d{1,2}) (\w+) (\d{4})", question)
    if start_text is None:
        iso = re.search(r"after (\d{4})-(\d{2})-(\d{2})\?", question)
        assert iso is not None, question
        start = date(*(int(part) for part in iso.groups()))
    else:
        weekday, day, month, year = start_text.groups()
        start = date(int(year), MONTHS.index(month) + 1, int(day))
        assert WEEKDAYS[start.weekday()] == weekday, "the start date's weekday is stated correctly"
    steps = [
        int(n) * (7 if unit == "weeks" else 1) * (1 if way in ("after", "forward") else -1)
        for n, unit, way in re.findall(r"(\d+) (days?|weeks) (after|before)", question)
    ] + [
        int(n) * (7 if unit == "weeks" else 1) * (1 if way == "forward" else -1)
        for way, n, unit in re.findall(r"(forward|back) (\d+) (days?|weeks)", question)
    ]
    end = start + timedelta(days=sum(steps))
    if "YYYY-MM-DD" in question:
        return end.strftime("%Y-%m-%d"), len(steps)
    assert question.endswith("Answer with the name of the day.")
    return end.strftime("%A"), len(steps)


@pytest.mark.parametrize("level", levels("dates"))
def test_date_answers_recomputed_with_datetime(level: int) -> None:
    items = generated_task("dates", 120, 3, level).items
    for item in items:
        truth, steps = solve_date(item.question)
        assert item.truth == truth and item.match == "exact", item.question
        assert steps == {1: 1, 2: 1, 3: 1, 4: 1, 5: 2, 6: 3}[level]
        if level == 1:
            assert item.truth[:8] in item.question, "level 1 stays within the month"
    asks_weekday = sum(item.truth in WEEKDAYS for item in items)
    assert asks_weekday == 0 if level == 1 else 30 <= asks_weekday <= 90


def test_date_offsets_grow_with_the_level() -> None:
    def largest(level: int) -> int:
        return max(max(int(n) for n in re.findall(r"(\d+) days", i.question) or ["0"]) for i in items(level))

    def items(level: int) -> tuple[Item, ...]:
        return generated_task("dates", 200, 0, level).items

    assert largest(1) <= 9 and largest(2) <= 9 < largest(3) <= 60 < largest(4) <= 400


# --- the answers' extraction and matching ----------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "truth"),
    [
        ("not (True and False) is True, so the whole is \\boxed{True}", "True"),
        ("\\boxed{\\text{False}}", "False"),
        ("\\boxed{\\texttt{FALSE}}", "False"),
        ("Final answer: **true**", "True"),
        ("\\boxed{2026-04-17}", "2026-04-17"),
        ("\\boxed{2026-4-7}", "2026-04-07"),
        ("\\boxed{\\text{17 April 2026}}", "2026-04-17"),
        ("The answer is April 17th, 2026.", "2026-04-17"),
        ("\\boxed{Friday, 17 April 2026}", "2026-04-17"),
        ("\\boxed{Thursday}", "Thursday"),
        ("The final answer is thursday.", "Thursday"),
    ],
)
def test_exact_answers_of_the_generated_kinds_match(reply: str, truth: str) -> None:
    found = extract_answer(reply, "exact")
    assert is_correct(found.answer, truth, "exact"), found


@pytest.mark.parametrize(
    ("reply", "truth"),
    [
        ("\\boxed{False}", "True"),
        ("\\boxed{2026-04-18}", "2026-04-17"),
        ("\\boxed{18 April 2026}", "2026-04-17"),
        ("\\boxed{2026-02-30}", "2026-03-02"),
        ("\\boxed{Friday}", "Thursday"),
        ("\\boxed{Friday, 17 April 2026}", "Friday"),
    ],
)
def test_wrong_exact_answers_do_not_match(reply: str, truth: str) -> None:
    assert not is_correct(extract_answer(reply, "exact").answer, truth, "exact")


def test_a_word_problem_answer_in_dollars_is_numeric() -> None:
    assert is_correct(extract_answer("Change: 50 - 36 = 14, so \\boxed{\\$14}", "numeric").answer, "14", "numeric")
    assert extract_answer("Maya gets $14 back.", "numeric").answer == "14"
