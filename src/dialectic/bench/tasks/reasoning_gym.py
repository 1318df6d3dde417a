"""Third-party tasks: any reasoning-gym dataset (``dialectic bench rg:NAME``), scored by its own scorer.

reasoning-gym (the ``tasks`` extra, pinned) generates each dataset procedurally from a seed, offline, and
ships a ``score_answer`` per dataset that accepts any valid answer: every colouring that colours the graph,
every expression that makes the target. Item ``i`` depends only on the seed and ``i``, so a larger ``-n``
extends a run. The dataset's options come from ``--task-option key=value`` (values read as YAML scalars
or lists: ``3``, ``0.5``, ``true``, ``[2, 3]``) and are checked against the dataset's configuration.

An item whose reference answers are all numbers (``gsm_symbolic``, ``chain_sum``…) is read as a number,
so that answers can be counted in a vote; every other item is ``scored``: its answer is kept as written
and only the scorer says whether it is right. Either way the scorer decides.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

import yaml

from dialectic.bench.tasks.base import REASONING_GYM_PREFIX, Item, Task, check_count, make_task
from dialectic.core.answers import MatchMode, canonical_number
from dialectic.core.errors import InvalidArgumentsError
from dialectic.core.extras import require_extra
from dialectic.core.spelling import did_you_mean, nearest

ANY_VALID = "(any valid answer)"
"""The reference answer of an item whose dataset gives none: its scorer alone knows a right answer."""


def dataset_name(task: str) -> str:
    """``rg:countdown`` → ``countdown``."""
    return task.removeprefix(REASONING_GYM_PREFIX)


def parse_task_options(pairs: list[str] | None) -> dict[str, Any]:
    """``["min_numbers=3", "operators=[+, -]"]`` → ``{"min_numbers": 3, "operators": ["+", "-"]}``."""
    options: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InvalidArgumentsError(f"--task-option takes key=value (got '{pair}')")
        try:
            value = yaml.safe_load(text) if text.strip() else ""
        except yaml.YAMLError:
            value = text
        if key in options:
            raise InvalidArgumentsError(f"--task-option {key} is given twice")
        options[key] = value
    return options


def _library() -> Any:
    require_extra("rg:NAME tasks", "tasks")
    return importlib.import_module("reasoning_gym")


def _check(name: str, options: Mapping[str, Any]) -> None:
    registry: dict[str, tuple[type, type]] = importlib.import_module("reasoning_gym.factory").DATASETS
    if name not in registry:
        close = nearest(name, registry)
        hint = did_you_mean(f"rg:{close}") if close else " (see reasoning-gym's list of datasets)"
        raise InvalidArgumentsError(f"reasoning-gym has no dataset '{name}'{hint}")
    config_type = registry[name][1]
    known = [f.name for f in fields(config_type) if f.name not in ("seed", "size")]
    for key in options:
        if key in ("seed", "size"):
            raise InvalidArgumentsError(f"--task-option {key}: use --seed and -n for the dataset's {key}")
        if key not in known:
            raise InvalidArgumentsError(
                f"rg:{name} has no option '{key}'{did_you_mean(nearest(key, known))} "
                f"(its options: {', '.join(known) or 'none'})"
            )


def rg_task(task: str, n: int, seed: int, options: Mapping[str, Any] | None = None) -> Task:
    """``n`` items of the reasoning-gym dataset ``task`` (``rg:NAME``), generated from ``seed``."""
    check_count(n)
    name = dataset_name(task)
    options = dict(options or {})
    library = _library()
    _check(name, options)
    try:
        dataset = library.create_dataset(name, seed=seed, size=n, **options)
    except (AssertionError, ValueError, TypeError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidArgumentsError(f"rg:{name} refused its options: {reason}") from None
    entries = [dataset[i] for i in range(n)]
    numeric = all(
        isinstance(entry.get("answer"), str) and canonical_number(entry["answer"]) is not None for entry in entries
    )
    items = [_item(name, index, entry, dataset, numeric) for index, entry in enumerate(entries)]
    described = ", ".join(f"{k}={v}" for k, v in sorted(options.items()))
    return make_task(task, f"reasoning-gym {name}" + (f" ({described})" if described else ""), items)


def _item(name: str, index: int, entry: dict[str, Any], dataset: Any, numeric: bool) -> Item:
    def score(answer: str | None) -> float:
        try:
            return max(0.0, min(1.0, float(dataset.score_answer(answer, entry))))
        except Exception:  # a third party's scorer failing on an odd answer scores it as wrong, not the run
            return 0.0

    reference = entry.get("answer")
    match: MatchMode = "numeric" if numeric else "scored"
    return Item(
        id=f"{name}-{index:04d}",
        index=index,
        question=str(entry["question"]).strip(),
        truth=str(reference).strip() if reference is not None else ANY_VALID,
        match=match,
        scorer=score,
        form="tagged",
    )
