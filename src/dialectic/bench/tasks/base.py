"""What every task is made of: its items, the task itself, and the checks all generators share."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from dialectic.core.answers import MatchMode
from dialectic.core.bounds import MAX_BENCH_ITEMS, check_range

TaskName = Literal["arithmetic", "word-problems", "boolean-logic", "dates", "jsonl"]
TASK_NAMES: tuple[str, ...] = ("arithmetic", "word-problems", "boolean-logic", "dates", "jsonl")


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
