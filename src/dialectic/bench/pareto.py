"""Accuracy against cost: each arm as a point, and the arms no other arm beats on both (no matplotlib here).

An arm is *dominated* when another arm is at least as accurate at no more cost per item, and strictly
better on one of the two; the arms left form the Pareto frontier — the only ones worth their price on
these items. Two arms at the same point do not dominate each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from dialectic.bench.summary import ArmSummary

Cost = Literal["calls", "tokens"]
COSTS: tuple[Cost, ...] = ("calls", "tokens")


@dataclass(frozen=True)
class CostPoint:
    arm: str
    cost: float
    """Mean cost per item: provider calls, or tokens (input + output)."""
    accuracy: float
    low: float
    high: float
    """The accuracy's 95% interval."""


def cost_per_item(arm: ArmSummary, cost: Cost) -> float:
    spent = arm.calls if cost == "calls" else arm.input_tokens + arm.output_tokens
    return spent / arm.items


def cost_points(arms: Sequence[ArmSummary], cost: Cost) -> list[CostPoint]:
    """One point per arm that finished an item (an arm with none has no accuracy to place)."""
    return [
        CostPoint(a.arm, cost_per_item(a, cost), a.accuracy.estimate, a.accuracy.low, a.accuracy.high)
        for a in arms
        if a.items and a.accuracy is not None
    ]


def dominates(a: CostPoint, b: CostPoint) -> bool:
    """``a`` is at least as accurate as ``b`` at no more cost, and strictly better on one of them."""
    return a.accuracy >= b.accuracy and a.cost <= b.cost and (a.accuracy > b.accuracy or a.cost < b.cost)


def frontier(points: Sequence[CostPoint]) -> list[CostPoint]:
    """The points no other point dominates, cheapest first (ties by accuracy, then name)."""
    kept = [p for p in points if not any(dominates(q, p) for q in points)]
    return sorted(kept, key=lambda p: (p.cost, -p.accuracy, p.arm))
