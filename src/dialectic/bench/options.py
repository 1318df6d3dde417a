"""What a bench run asks: the task, the arms, the model and its settings (``dialectic bench``'s own flags).

A module of its own, with no imports of the harness, so the command builds it from its flags without
loading the bench.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class BenchOptions:
    task: str | None = None
    dataset: Path | None = None
    arms: str | None = None
    n: int | None = None
    seed: int | None = None
    operands: int | None = None
    difficulty: int | None = None
    match: str | None = None
    task_options: list[str] | None = None
    """``key=value`` options of a reasoning-gym dataset (``--task-option``)."""
    temperature: float | None = None
    max_tokens: int | None = None
    provider: str | None = None
    model: str | None = None
    config: Path | None = None
    lenient: bool = False
    """``--lenient``: unknown keys in the config file are warnings, not an error."""
