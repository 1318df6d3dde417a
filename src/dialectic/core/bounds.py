"""The ranges of the numbers a user gives on the command line, checked before anything is allocated.

A typo such as ``-k 1000000000`` must be one line and exit 2, not a billion workers: every count a
command takes is held to a range here, with one wording (``--concurrency must be between 1 and
1,000 (got 1000000000)``). A configuration file's numbers are held to theirs by the configuration
models (:mod:`dialectic.core.config`).
"""

from __future__ import annotations

from dialectic.core.errors import InvalidArgumentsError

MAX_CONCURRENCY = 1_000
"""``batch -k`` and ``bench --concurrency``: debates, or (arm, item) pairs, at the same time. Workers are never
more than the work there is, whatever this allows."""
MAX_BENCH_ITEMS = 100_000
"""``bench -n``: the items of one run (a generated task makes them all before the first call)."""
MAX_LISTED = 1_000_000
"""``list --limit`` and ``memory list --limit``: rows read from the store at most."""
MAX_SAMPLES = 100
"""``eval --samples``: the times each evaluator is asked."""
MAX_SEED = 2**63 - 1
"""``bench --seed``: kept in the store as an integer (SQLite's largest)."""
MAX_TOKENS = 10_000_000
"""A number of tokens a reply may have (``bench --max-tokens``, ``maxTokens``): far above any model's."""


def check_range(name: str, value: int, low: int, high: int) -> int:
    """``value`` when ``low <= value <= high``; else :class:`InvalidArgumentsError` (exit 2) naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentsError(f"{name} must be a whole number (got {value!r})")
    if not low <= value <= high:
        raise InvalidArgumentsError(f"{name} must be between {low:,} and {high:,} (got {value})")
    return value
