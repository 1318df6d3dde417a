"""Boolean expressions to evaluate: ``not (True and False) or (False and not True)`` → ``True``.

The difficulty is the number of ``and``/``or`` operators (1–8), combined in a random tree;
any literal or combination may be negated with ``not``, and every operand that is not a bare
literal is parenthesised (``(not True) and (False or True)``), so no answer depends on operator
precedence. Half the
items are true and half false in expectation (each item's value is drawn first, and the
expression is drawn until it has that value), so always answering the same is worth 50%.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from dialectic.bench.tasks.base import Item, Task, check_count, item_rng, make_task

MIN_OPERATORS = 1
MAX_OPERATORS = 8
NOT_PROBABILITY = 0.3
"""The chance that a literal, or a parenthesised combination, is negated."""


@dataclass(frozen=True)
class Expression:
    text: str
    value: bool
    combined: bool
    """Whether the text is ``x and y``, ``x or y`` or ``not x``: it is bracketed when it is an operand."""

    def operand(self) -> str:
        return f"({self.text})" if self.combined else self.text


def boolean_logic_task(n: int, seed: int, operators: int) -> Task:
    """``n`` expressions of ``operators`` binary operators; item ``i`` depends only on (seed, operators, i)."""
    check_count(n)
    items = []
    for index in range(n):
        rng = item_rng("boolean-logic", seed, operators, index)
        wanted = rng.random() < 0.5
        expression = random_expression(rng, operators)
        while expression.value != wanted:
            expression = random_expression(rng, operators)
        items.append(
            Item(
                id=f"bool-{index:04d}",
                index=index,
                question=f"What is the value of the Boolean expression `{expression.text}`? Answer True or False.",
                truth=str(expression.value),
                match="exact",
            )
        )
    noun = "operator" if operators == 1 else "operators"
    return make_task("boolean-logic", f"boolean-logic ({operators} and/or {noun}, with nots)", items)


def random_expression(rng: random.Random, operators: int) -> Expression:
    """A random tree of ``operators`` ``and``/``or`` nodes over ``True``/``False`` leaves, its value computed."""
    if operators == 0:
        value = rng.random() < 0.5
        expression = Expression(str(value), value, combined=False)
    else:
        left_size = rng.randint(0, operators - 1)
        left = random_expression(rng, left_size)
        right = random_expression(rng, operators - 1 - left_size)
        if rng.random() < 0.5:
            expression = Expression(f"{left.operand()} and {right.operand()}", left.value and right.value, True)
        else:
            expression = Expression(f"{left.operand()} or {right.operand()}", left.value or right.value, True)
    if rng.random() < NOT_PROBABILITY:
        return Expression(f"not {expression.operand()}", not expression.value, combined=True)
    return expression
