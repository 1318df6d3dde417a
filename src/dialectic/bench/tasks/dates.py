"""Date arithmetic: the date, or the day of the week, some days or weeks after or before a date.

From level 2 on, half the items in expectation ask for a date (answered as ``YYYY-MM-DD``),
half for a day of the week (answered with its name); the question says which. Start dates are
drawn from 2000–2030 and given with their weekday (``Tuesday, 3 March 2026``). The difficulty
sets the offsets and the number of steps:

===== ================================================================================
level offsets
===== ================================================================================
1     one step forward of 1–9 days within the month; a date asked from a ``YYYY-MM-DD`` date
2     one step forward of 1–9 days
3     one step forward or back of 10–60 days
4     one step forward or back of 61–400 days
5     two steps forward or back of 10–120 days each
6     three steps forward or back of 2–20 weeks or 10–200 days each
===== ================================================================================

Level 1 exists for small models: Qwen2.5 0.5B answered 1 in 20 right at level 2 (see
``docs/bench.md``).
"""

from __future__ import annotations

import random
from datetime import date, timedelta

from dialectic.bench.tasks.base import Item, Task, check_count, item_rng, make_task

MIN_LEVEL = 1
MAX_LEVEL = 6
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
FIRST_START = date(2000, 1, 1)
LAST_START = date(2030, 12, 31)
LEVELS = {
    1: "1 step of 1–9 days within a month",
    2: "1 step of 1–9 days",
    3: "1 step of 10–60 days",
    4: "1 step of 61–400 days",
    5: "2 steps of 10–120 days",
    6: "3 steps of weeks or days",
}


def dates_task(n: int, seed: int, level: int) -> Task:
    """``n`` questions at ``level``; item ``i`` depends only on (seed, level, i)."""
    check_count(n)
    items = []
    for index in range(n):
        rng = item_rng("dates", seed, level, index)
        question, truth = date_question(rng, level)
        items.append(Item(id=f"date-{index:04d}", index=index, question=question, truth=truth, match="exact"))
    return make_task("dates", f"dates (level {level}: {LEVELS[level]})", items)


def long_date(day: date) -> str:
    """``Tuesday, 3 March 2026``."""
    return f"{WEEKDAYS[day.weekday()]}, {day.day} {MONTHS[day.month - 1]} {day.year}"


def date_question(rng: random.Random, level: int) -> tuple[str, str]:
    start = FIRST_START + timedelta(days=rng.randint(0, (LAST_START - FIRST_START).days))
    if level == 1:
        start = start.replace(day=min(start.day, 19))
        days = rng.randint(1, 9)
        end = start + timedelta(days=days)
        question = f"What is the date {_amount(days)} after {start.isoformat()}? Give the date as YYYY-MM-DD."
        return question, end.isoformat()
    steps = _steps(rng, level)
    end = start + timedelta(days=sum(steps))
    wants_weekday = rng.random() < 0.5
    asked = "What day of the week is it" if wants_weekday else "What is the date"
    if len(steps) == 1:
        (days,) = steps
        question = f"{asked} {_amount(days)} {'after' if days > 0 else 'before'} {long_date(start)}?"
    else:
        moves = ", then ".join(f"{'forward' if days > 0 else 'back'} {_amount(days)}" for days in steps)
        question = f"Start from {long_date(start)} and go {moves}. {asked} then?"
    if wants_weekday:
        return f"{question} Answer with the name of the day.", WEEKDAYS[end.weekday()]
    return f"{question} Give the date as YYYY-MM-DD.", end.isoformat()


def _steps(rng: random.Random, level: int) -> list[int]:
    """Signed day offsets, one per step."""
    if level == 2:
        return [rng.randint(1, 9)]
    low, high, count = {3: (10, 60, 1), 4: (61, 400, 1), 5: (10, 120, 2), 6: (10, 200, 3)}[level]
    steps = []
    for _ in range(count):
        days = 7 * rng.randint(2, 20) if level == 6 and rng.random() < 0.5 else rng.randint(low, high)
        steps.append(days if rng.random() < 0.5 else -days)
    return steps


def _amount(days: int) -> str:
    """``45 days``, ``1 day``; a whole number of weeks (two or more) as ``3 weeks``."""
    size = abs(days)
    if size % 7 == 0 and size >= 14:
        return f"{size // 7} weeks"
    return f"{size} day" if size == 1 else f"{size} days"
