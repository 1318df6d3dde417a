"""What every task is made of: its items, the task itself, and the checks all generators share."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from dialectic.core.answers import Extraction, MatchMode, extract_answer, is_correct
from dialectic.core.bounds import MAX_BENCH_ITEMS, check_range

TaskName = str
"""One of :data:`TASK_NAMES`, or ``rg:NAME`` for a reasoning-gym dataset (:func:`is_task_name`)."""
TASK_NAMES: tuple[str, ...] = ("arithmetic", "word-problems", "boolean-logic", "dates", "jsonl")
REASONING_GYM_PREFIX = "rg:"


def is_task_name(name: str) -> bool:
    return name in TASK_NAMES or (name.startswith(REASONING_GYM_PREFIX) and len(name) > len(REASONING_GYM_PREFIX))


AnswerForm = Literal["boxed", "tagged"]
"""How a reply is asked to give its answer: ``\\boxed{…}`` (ours), or ``<answer>…</answer>`` (third-party tasks)."""
Scorer = Callable[[str | None], float]
"""A task's own judgement of an answer, 0–1 (1: right; between: partial credit)."""


@dataclass(frozen=True)
class Item:
    id: str
    index: int
    question: str
    truth: str
    """The reference answer; for a ``scored`` item one valid answer among many (or a description of them)."""
    match: MatchMode
    scorer: Scorer | None = field(default=None, compare=False, repr=False)
    """``scored`` items: the task's scorer, which accepts any valid answer."""
    form: AnswerForm = "boxed"

    def extract(self, text: str, *, truncated: bool = False) -> Extraction:
        """The answer ``text`` gives, read the way this item is scored."""
        return extract_answer(text, self.match, truncated=truncated)

    def score(self, answer: str | None) -> float:
        """How right ``answer`` is, 0–1: the task's scorer where it has one, else 1 for a match and 0."""
        if self.scorer is not None:
            return 0.0 if answer is None else float(self.scorer(answer))
        return 1.0 if is_correct(answer, self.truth, self.match) else 0.0


@dataclass(frozen=True)
class Task:
    name: TaskName
    description: str
    items: tuple[Item, ...]
    fingerprint: str
    """A hash of the items: a resumed run refuses to continue on different questions."""


def fingerprint(items: Iterable[Item]) -> str:
    digest = hashlib.sha256()
    for item in items:
        digest.update(json.dumps([item.id, item.question, item.truth, item.match]).encode("utf-8"))
    return digest.hexdigest()[:16]


def check_count(n: int) -> None:
    """``-n``: at least one item, at most :data:`~dialectic.core.bounds.MAX_BENCH_ITEMS` (they are made up front)."""
    check_range("-n", n, 1, MAX_BENCH_ITEMS)


def item_rng(kind: str, seed: int, difficulty: int, index: int) -> random.Random:
    """The generator of one item: item ``index`` never depends on how many items the run has.

    A string seed is hashed (SHA-512) by :class:`random.Random`, the same on every platform and run.
    """
    return random.Random(f"{kind}/{seed}/{difficulty}/{index}")


def make_task(name: TaskName, description: str, items: list[Item]) -> Task:
    return Task(name, description, tuple(items), fingerprint(items))
