"""Percentile-bootstrap confidence intervals, plain and paired, with a seeded RNG, and the exact
McNemar test (pure Python).

The paired version resamples *items*, keeping each item's two outcomes together, so the
interval of a difference between two arms reflects that both answered the same questions
(much narrower than two independent intervals would suggest when the arms agree a lot).
McNemar's test asks the same question of the same pairs, with no resampling: of the items
exactly one of the two arms got right, is the split further from even than chance would make it?
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_RESAMPLES = 2000
DEFAULT_CONFIDENCE = 0.95


@dataclass(frozen=True)
class Interval:
    estimate: float
    """The mean over the observed data (not over the resamples)."""
    low: float
    high: float
    n: int

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


def bootstrap_ci(
    values: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
) -> Interval | None:
    """The mean of ``values`` with a percentile-bootstrap interval; ``None`` for no data.

    With ``B`` resampled means sorted, the bounds are the ``floor(B·α/2)``-th and the
    ``ceil(B·(1−α/2))−1``-th (0-based), ``α = 1 − confidence``. Constant data (all right,
    all wrong) gives a zero-width interval: the bootstrap cannot see variation it never observed.
    """
    if not values:
        return None
    if resamples < 1 or not 0.0 < confidence < 1.0:
        raise ValueError("resamples must be positive and confidence strictly between 0 and 1")
    data = [float(v) for v in values]
    n = len(data)
    rng = random.Random(seed)
    means = sorted(math.fsum(rng.choices(data, k=n)) / n for _ in range(resamples))
    alpha = 1.0 - confidence
    low = means[max(0, math.floor(resamples * alpha / 2))]
    high = means[min(resamples - 1, math.ceil(resamples * (1 - alpha / 2)) - 1)]
    return Interval(math.fsum(data) / n, low, high, n)


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
) -> Interval | None:
    """The mean of ``a[i] − b[i]`` with a bootstrap interval resampling the pairs ``i``."""
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length ({len(a)} and {len(b)})")
    differences = [x - y for x, y in zip(a, b, strict=True)]
    return bootstrap_ci(differences, resamples=resamples, confidence=confidence, seed=seed)


@dataclass(frozen=True)
class McNemar:
    """The discordant pairs of two arms on the same items, and the exact McNemar p-value."""

    only_this: int
    """Items this arm got right and the reference arm got wrong (*b*)."""
    only_reference: int
    """Items the reference arm got right and this arm got wrong (*c*)."""
    p_value: float
    """Two-sided exact p-value: :func:`mcnemar_exact_p` of the two counts."""


def mcnemar_exact_p(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: ``min(1, 2·P(X ≤ min(b, c)))`` for ``X ~ Binomial(b + c, ½)``.

    ``b`` and ``c`` are the discordant counts (items only one of the two arms got right); with
    none (``b + c = 0``) there is no evidence either way and the p-value is 1. Computed in exact
    integer arithmetic, so it holds for any number of items.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must not be negative (got {b} and {c})")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2**n)


def mcnemar(a: Sequence[bool], b: Sequence[bool]) -> McNemar:
    """McNemar's test of ``a[i]`` against ``b[i]`` (right or wrong on the same item ``i``)."""
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length ({len(a)} and {len(b)})")
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    return McNemar(only_a, only_b, mcnemar_exact_p(only_a, only_b))
