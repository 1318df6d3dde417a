"""The literature's arithmetic problems (Du et al., 2023): ``a+b*c+d-e*f`` over integers 0–29."""

from __future__ import annotations

import random

from dialectic.bench.tasks.base import Item, Task, check_count, make_task
from dialectic.core.errors import InvalidArgumentsError

ARITHMETIC_PATTERN = "a+b*c+d-e*f"
"""The literature's expression (Du et al., 2023); ``--operands k`` keeps its first ``k`` operands."""
MIN_OPERANDS = 2
MAX_OPERANDS = 6
OPERAND_MAX = 29
DEFAULT_ARITHMETIC_ITEMS = 100


def arithmetic_form(operands: int) -> str:
    """The expression pattern for ``operands`` numbers: 6 → ``a+b*c+d-e*f``, 4 → ``a+b*c+d``, 2 → ``a+b``."""
    if not MIN_OPERANDS <= operands <= MAX_OPERANDS:
        raise InvalidArgumentsError(f"--operands must be between {MIN_OPERANDS} and {MAX_OPERANDS} (got {operands})")
    return ARITHMETIC_PATTERN[: 2 * operands - 1]


def arithmetic_task(n: int, seed: int, operands: int = MAX_OPERANDS) -> Task:
    """``n`` problems whose operands are drawn uniformly from 0–29 by ``random.Random(seed)``.

    Items are drawn in order from one generator, so the first ``k`` items of a run with
    ``n > k`` are the items of a run with ``n = k`` (a larger run extends a smaller one).
    """
    check_count(n)
    form = arithmetic_form(operands)
    rng = random.Random(seed)
    items: list[Item] = []
    for index in range(n):
        values = [rng.randint(0, OPERAND_MAX) for _ in range(operands)]
        expression = "".join(str(values[i // 2]) if i % 2 == 0 else form[i] for i in range(len(form)))
        truth = eval_expression(expression)
        items.append(
            Item(
                id=f"arith-{index:04d}",
                index=index,
                question=f"What is the result of {expression}?",
                truth=str(truth),
                match="numeric",
            )
        )
    return make_task("arithmetic", f"arithmetic ({operands} operands, {form})", items)


def eval_expression(expression: str) -> int:
    """Evaluate ``+``, ``-`` and ``*`` over non-negative integers with the usual precedence."""
    total = 0
    for term in expression.replace("-", "+-").split("+"):
        product = 1
        for factor in term.lstrip("-").split("*"):
            product *= int(factor)
        total += -product if term.startswith("-") else product
    return total
