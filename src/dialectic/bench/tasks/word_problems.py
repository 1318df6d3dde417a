"""Multi-step word problems from templates: shopping, wages, travel, and a collection that changes.

The difficulty is the number of arithmetic operations the answer needs (1–5); every answer
is a positive integer, computed here from the numbers drawn for the question. Item ``i`` uses
template ``i mod 4``, so every template is equally represented in any run of 4 or more items.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from dialectic.bench.tasks.base import Item, Task, check_count, item_rng, make_task

MIN_STEPS = 1
MAX_STEPS = 5

NAMES = ("Maya", "Liam", "Aisha", "Noah", "Sofia", "Omar", "Elena", "Kenji", "Priya", "Lucas", "Zoe", "Mateo")
SHOP_GOODS = (
    ("pen", "pens"),
    ("notebook", "notebooks"),
    ("eraser", "erasers"),
    ("ruler", "rulers"),
    ("marker", "markers"),
    ("folder", "folders"),
    ("glue stick", "glue sticks"),
)
BILLS = (10, 20, 50, 100)
PURCHASES = ("a book", "a pair of shoes", "a concert ticket", "groceries", "a gift")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
VEHICLES = (
    # (subject, verb, lowest speed, highest speed, speed step) in km per hour
    ("cyclist", "rides", 8, 20, 1),
    ("train", "travels", 60, 120, 10),
    ("car", "drives", 40, 90, 5),
    ("runner", "runs", 6, 12, 1),
)
COLLECTIONS = ("stickers", "marbles", "stamps", "trading cards", "shells", "coins")

Problem = tuple[str, int]
"""A question and its answer."""


def word_problems_task(n: int, seed: int, steps: int) -> Task:
    """``n`` problems needing ``steps`` operations each; item ``i`` depends only on (seed, steps, i)."""
    check_count(n)
    items = []
    for index in range(n):
        rng = item_rng("word-problems", seed, steps, index)
        question, answer = TEMPLATES[index % len(TEMPLATES)](rng, steps)
        items.append(Item(id=f"word-{index:04d}", index=index, question=question, truth=str(answer), match="numeric"))
    noun = "step" if steps == 1 else "steps"
    return make_task("word-problems", f"word-problems ({steps} {noun})", items)


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _count(quantity: int, noun: tuple[str, str]) -> str:
    return f"{quantity} {noun[0] if quantity == 1 else noun[1]}"


def shopping(rng: random.Random, steps: int) -> Problem:
    """Steps: one multiplication per kind of goods, the additions, and the change from a bill."""
    kinds, change = {1: (1, False), 2: (1, True), 3: (2, False), 4: (2, True), 5: (3, False)}[steps]
    name = rng.choice(NAMES)
    goods = rng.sample(SHOP_GOODS, kinds)
    prices = [rng.randint(2, 9) for _ in goods]
    counts = [rng.randint(2, 5) for _ in goods]
    total = sum(p * c for p, c in zip(prices, counts, strict=True))
    catalog = _join([f"{noun[1]} at ${price} each" for noun, price in zip(goods, prices, strict=True)])
    bought = _join([_count(c, noun) for noun, c in zip(goods, counts, strict=True)])
    text = f"A shop sells {catalog}. {name} buys {bought}"
    if not change:
        return f"{text}. How many dollars does {name} pay in total?", total
    bill = next(b for b in BILLS if b > total)
    return f"{text} and pays with a ${bill} bill. How many dollars of change does {name} get?", bill - total


def wages(rng: random.Random, steps: int) -> Problem:
    """Steps: the additions of the hours, the multiplication by the rate, a purchase, and savings."""
    days, spends, saved = {
        1: (1, False, False),
        2: (2, False, False),
        3: (2, True, False),
        4: (3, True, False),
        5: (3, True, True),
    }[steps]
    name = rng.choice(NAMES)
    rate = rng.randint(8, 20)
    hours = [rng.randint(2, 8) for _ in range(days)]
    worked = _join([f"{h} hours on {day}" for h, day in zip(hours, DAYS, strict=False)])
    earned = rate * sum(hours)
    savings = rng.randint(2, 30) * 5
    text = f"{name} already has ${savings} in savings. " if saved else ""
    text += f"{name} earns ${rate} per hour and works {worked}."
    if not spends:
        return f"{text} How many dollars does {name} earn in total?", earned
    cost = rng.randint(5, earned // 2)
    text += f" Then {name} spends ${cost} on {rng.choice(PURCHASES)}."
    if saved:
        return f"{text} How many dollars does {name} have now?", savings + earned - cost
    return f"{text} How many dollars of these earnings are left?", earned - cost


def travel(rng: random.Random, steps: int) -> Problem:
    """Steps: one multiplication per leg, the additions, and the distance still to go."""
    legs, remaining = {1: (1, False), 2: (1, True), 3: (2, False), 4: (2, True), 5: (3, False)}[steps]
    subject, verb, low, high, step = rng.choice(VEHICLES)
    speeds = [rng.randrange(low, high + 1, step) for _ in range(legs)]
    hours = [rng.randint(1, 4) for _ in range(legs)]
    parts = [f"at {s} km per hour for {_count(h, ('hour', 'hours'))}" for s, h in zip(speeds, hours, strict=True)]
    moves = parts[0] + "".join(f", then {p}" for p in parts[1:])
    covered = sum(s * h for s, h in zip(speeds, hours, strict=True))
    if not remaining:
        return f"A {subject} {verb} {moves}. How many kilometres does the {subject} cover in total?", covered
    left = rng.randint(1, 20) * step * 5
    journey = covered + left
    return (
        f"A {subject} sets out on a journey of {journey} km. The {subject} {verb} {moves}. "
        f"How many kilometres of the journey are left?",
        left,
    )


def collection(rng: random.Random, steps: int) -> Problem:
    """One operation per sentence: more, fewer, doubled or tripled, or split into equal piles."""
    name, friend = rng.sample(NAMES, 2)
    things = rng.choice(COLLECTIONS)
    count = rng.randint(10, 40)
    sentences = [f"{name} has {count} {things}."]
    for _ in range(steps):
        count, sentence = _change(rng, count, name, friend, things)
        sentences.append(sentence)
    sentences.append(f"How many {things} does {name} have now?")
    return " ".join(sentences), count


def _change(rng: random.Random, count: int, name: str, friend: str, things: str) -> tuple[int, str]:
    options: list[Callable[[], tuple[int, str]]] = []

    def more() -> tuple[int, str]:
        extra = rng.randint(3, 25)
        if rng.random() < 0.5:
            return count + extra, f"{friend} gives {name} {extra} more {things}."
        return count + extra, f"{name} buys {extra} more {things}."

    def fewer() -> tuple[int, str]:
        lost = rng.randint(2, count - 2)
        if rng.random() < 0.5:
            return count - lost, f"{name} gives {lost} {things} to {friend}."
        return count - lost, f"{name} loses {lost} {things}."

    def times() -> tuple[int, str]:
        factor = 2 if count > 30 or rng.random() < 0.6 else 3
        word = {2: "doubles", 3: "triples"}[factor]
        return count * factor, f"After a lucky trade, the number of {things} {name} has {word}."

    def split() -> tuple[int, str]:
        piles = rng.choice([k for k in range(2, 6) if count % k == 0 and count // k >= 3])
        return count // piles, f"{name} splits the {things} into {piles} equal piles and keeps only one pile."

    options.append(more)
    if count >= 5:
        options.append(fewer)
    if count <= 60:
        options.append(times)
    if any(count % k == 0 and count // k >= 3 for k in range(2, 6)):
        options.append(split)
    return rng.choice(options)()


TEMPLATES: tuple[Callable[[random.Random, int], Problem], ...] = (shopping, wages, travel, collection)
