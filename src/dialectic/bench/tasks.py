"""Benchmark tasks: the literature's arithmetic problems, or any JSONL dataset of questions.

An item's ``id`` is what results are stored under, so a task must produce the same items,
with the same ids, every time it is built from the same arguments (resume relies on it).
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from dialectic.bench.extract import MatchMode, canonical_number
from dialectic.core.errors import InvalidArgumentsError
from dialectic.core.files import DATASET_FILE, read_user_text

TaskName = Literal["arithmetic", "jsonl"]
TASK_NAMES: tuple[str, ...] = ("arithmetic", "jsonl")

ARITHMETIC_PATTERN = "a+b*c+d-e*f"
"""The literature's expression (Du et al., 2023); ``--operands k`` keeps its first ``k`` operands."""
MIN_OPERANDS = 2
MAX_OPERANDS = 6
OPERAND_MAX = 29
DEFAULT_ARITHMETIC_ITEMS = 100


@dataclass(frozen=True)
class Item:
    id: str
    index: int
    question: str
    truth: str
    match: MatchMode


@dataclass(frozen=True)
class Task:
    name: TaskName
    description: str
    items: tuple[Item, ...]
    fingerprint: str
    """A hash of the items: a resumed run refuses to continue on different questions."""


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
    if n < 1:
        raise InvalidArgumentsError(f"-n must be at least 1 (got {n})")
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
    return Task("arithmetic", f"arithmetic ({operands} operands, {form})", tuple(items), _fingerprint(items))


def eval_expression(expression: str) -> int:
    """Evaluate ``+``, ``-`` and ``*`` over non-negative integers with the usual precedence."""
    total = 0
    for term in expression.replace("-", "+-").split("+"):
        product = 1
        for factor in term.lstrip("-").split("*"):
            product *= int(factor)
        total += -product if term.startswith("-") else product
    return total


def jsonl_task(path: Path, n: int | None, match: MatchMode | None) -> Task:
    """Items from ``path``: one ``{"id", "question", "answer"}`` object per line, first ``n`` kept.

    Without ``match`` an item is scored numerically when its answer parses as a number and by
    normalised exact match otherwise; ``--match numeric`` on a non-numeric answer is an error.
    """
    if n is not None and n < 1:
        raise InvalidArgumentsError(f"-n must be at least 1 (got {n})")
    lines = read_user_text(path, DATASET_FILE).splitlines()
    items: list[Item] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        item = _parse_line(path, number, line, len(items), match)
        if item.id in seen:
            raise InvalidArgumentsError(f"{path}:{number}: duplicate id '{item.id}'")
        seen.add(item.id)
        items.append(item)
        if n is not None and len(items) == n:
            break
    if not items:
        raise InvalidArgumentsError(f"dataset {path} holds no items")
    return Task("jsonl", f"jsonl ({path.name})", tuple(items), _fingerprint(items))


def _parse_line(path: Path, number: int, line: str, index: int, match: MatchMode | None) -> Item:
    where = f"{path}:{number}"
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise InvalidArgumentsError(f"{where}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise InvalidArgumentsError(f"{where}: expected an object with id, question and answer")
    missing = [key for key in ("id", "question", "answer") if data.get(key) is None]
    if missing:
        raise InvalidArgumentsError(f"{where}: missing {', '.join(missing)}")
    question, answer = str(data["question"]).strip(), str(data["answer"]).strip()
    if not question or not answer:
        raise InvalidArgumentsError(f"{where}: question and answer must not be empty")
    numeric = canonical_number(answer) is not None
    if match == "numeric" and not numeric:
        raise InvalidArgumentsError(f"{where}: --match numeric, but the answer '{answer}' is not a number")
    mode: MatchMode = match or ("numeric" if numeric else "exact")
    return Item(id=str(data["id"]), index=index, question=question, truth=answer, match=mode)


def _fingerprint(items: list[Item]) -> str:
    digest = hashlib.sha256()
    for item in items:
        digest.update(json.dumps([item.id, item.question, item.truth, item.match]).encode("utf-8"))
    return digest.hexdigest()[:16]
