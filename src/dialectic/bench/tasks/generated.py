"""The tasks generated from a seed, each with its difficulty range and default level.

A generated task is deterministic: the same (n, seed, difficulty) give the same items with
the same ids, and the first ``k`` items of a run with ``n > k`` are the items of a run with
``n = k``. Each generator computes its own answers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dialectic.bench.tasks.arithmetic import MAX_OPERANDS, MIN_OPERANDS, arithmetic_task
from dialectic.bench.tasks.base import Task, TaskName
from dialectic.bench.tasks.boolean_logic import MAX_OPERATORS, MIN_OPERATORS, boolean_logic_task
from dialectic.bench.tasks.dates import MAX_LEVEL, MIN_LEVEL, dates_task
from dialectic.bench.tasks.word_problems import MAX_STEPS, MIN_STEPS, word_problems_task
from dialectic.core.errors import InvalidArgumentsError

DEFAULT_GENERATED_ITEMS = 100


@dataclass(frozen=True)
class Generator:
    name: TaskName
    build: Callable[[int, int, int], Task]
    """``build(n, seed, difficulty)``."""
    low: int
    high: int
    default: int
    unit: str
    """What the difficulty counts, for the help: ``operands``, ``steps``…"""

    def help(self) -> str:
        return f"{self.name} {self.low}–{self.high} {self.unit}, default {self.default}"


# The defaults of the new kinds are where the embedded 0.5B model's `single` arm scored 30–80%
# (docs/bench.md, "Calibration"); arithmetic keeps the literature's six operands.
GENERATORS: dict[str, Generator] = {
    g.name: g
    for g in (
        Generator("arithmetic", arithmetic_task, MIN_OPERANDS, MAX_OPERANDS, MAX_OPERANDS, "operands"),
        Generator("word-problems", word_problems_task, MIN_STEPS, MAX_STEPS, 4, "steps"),
        Generator("boolean-logic", boolean_logic_task, MIN_OPERATORS, MAX_OPERATORS, 2, "and/or operators"),
        Generator("dates", dates_task, MIN_LEVEL, MAX_LEVEL, 1, "levels of offset size and steps"),
    )
}
GENERATED_TASKS: tuple[str, ...] = tuple(GENERATORS)


def difficulty_help() -> str:
    """``arithmetic 2–6 operands, default 6; word-problems 1–5 steps, default …; …``."""
    return "; ".join(g.help() for g in GENERATORS.values())


def check_difficulty(name: str, difficulty: int | None, flag: str = "--difficulty") -> int:
    """The level to build ``name`` at: ``difficulty``, or the task's default; out of range is an error."""
    generator = GENERATORS[name]
    if difficulty is None:
        return generator.default
    if not generator.low <= difficulty <= generator.high:
        raise InvalidArgumentsError(
            f"{flag} of {name} must be between {generator.low} and {generator.high} (got {difficulty})"
        )
    return difficulty


def generated_task(name: str, n: int, seed: int, difficulty: int | None = None) -> Task:
    """``n`` items of the generated task ``name`` at ``difficulty`` (default: the task's)."""
    return GENERATORS[name].build(n, seed, check_difficulty(name, difficulty))
