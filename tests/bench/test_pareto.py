"""The Pareto frontier of accuracy against cost, computed without matplotlib."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dialectic.bench.arms import parse_arms
from dialectic.bench.pareto import CostPoint, cost_points, dominates, frontier
from dialectic.bench.plot import pareto_path
from dialectic.bench.summary import summarize

from .test_summary import outcome_of, spec_of


def point(arm: str, cost: float, accuracy: float) -> CostPoint:
    return CostPoint(arm, cost, accuracy, accuracy - 0.1, accuracy + 0.1)


def names(points: list[CostPoint]) -> list[str]:
    return [p.arm for p in points]


def test_frontier_keeps_the_arms_no_other_beats_on_both_cheapest_first() -> None:
    points = [
        point("debate:3x2", 6, 0.6),  # dominated by self-consistency: the same cost, less accurate
        point("single", 1, 0.5),
        point("self-consistency", 6, 0.7),
        point("majority:3", 3, 0.4),  # dominated by single: cheaper and more accurate
        point("dialectic", 20, 0.9),
    ]
    assert names(frontier(points)) == ["single", "self-consistency", "dialectic"]


def test_equal_accuracy_at_higher_cost_and_equal_cost_at_lower_accuracy_are_dominated() -> None:
    assert dominates(point("a", 1, 0.5), point("b", 2, 0.5))
    assert dominates(point("a", 2, 0.6), point("b", 2, 0.5))
    assert not dominates(point("a", 2, 0.5), point("b", 2, 0.5))
    assert not dominates(point("a", 1, 0.4), point("b", 2, 0.5))


def test_identical_points_are_both_on_the_frontier() -> None:
    points = [point("x", 3, 0.5), point("y", 3, 0.5), point("z", 4, 0.5)]
    assert names(frontier(points)) == ["x", "y"]
    assert frontier([]) == []


def test_cost_points_are_means_per_item_of_calls_or_of_all_tokens() -> None:
    arms = "single,self-consistency:3"
    results = [outcome_of("single", i, i < 3, calls=1, tokens=50) for i in range(4)]
    results += [outcome_of("self-consistency:3", i, True, calls=3, tokens=600) for i in range(2)]
    summary = summarize(spec_of(arms), "arithmetic", 4, parse_arms(arms), results, resamples=50)
    calls = {p.arm: (p.cost, p.accuracy) for p in cost_points(summary.arms, "calls")}
    tokens = {p.arm: p.cost for p in cost_points(summary.arms, "tokens")}
    assert calls == {"single": (1.0, 0.75), "self-consistency:3": (3.0, 1.0)}
    assert tokens == {"single": 100.0, "self-consistency:3": 1200.0}


def test_the_frontier_needs_no_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert names(frontier([point("a", 1, 0.5)])) == ["a"]


def test_the_pareto_figure_goes_beside_the_plot() -> None:
    assert pareto_path(Path("out/results.png")) == Path("out/results-pareto.png")
    assert pareto_path(Path("plot")) == Path("plot-pareto.png")


def test_labels_of_nearby_points_are_spread_apart_and_far_ones_stay() -> None:
    from dialectic.bench.plot import label_offsets

    # two points almost on top of each other, one far to the right at the same height
    offsets = label_offsets([(100.0, 200.0), (104.0, 198.0), (400.0, 200.0)], [80.0, 80.0, 80.0], 10.0)
    assert offsets[0] == 4.0 and offsets[2] == 4.0
    low, high = sorted([200.0 + offsets[0], 198.0 + offsets[1]])
    assert high - low >= 10.0


def test_a_merged_runs_title_names_the_first_run_and_counts_the_rest() -> None:
    from dialectic.bench.plot import run_title

    assert run_title("bench-a") == "bench-a"
    assert run_title("bench-a + bench-b") == "bench-a + bench-b"
    assert run_title("bench-a + bench-b + bench-a + bench-c") == "bench-a + 2 more runs"


def test_a_merged_run_id_splits_back_into_its_runs_each_once() -> None:
    from dialectic.bench.records import merged_run_id, merged_runs

    run_id = merged_run_id(["bench-a", "bench-b", "bench-a"])
    assert run_id == "bench-a + bench-b + bench-a"
    assert merged_runs(run_id) == ["bench-a", "bench-b"]
    assert merged_runs("bench-a") == ["bench-a"]
