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


def test_a_lone_label_sits_level_with_its_point_on_the_right() -> None:
    from dialectic.bench.labels import place_labels

    assert place_labels([(100.0, 200.0)], [(80.0, 10.0)], bars=[]) == [(6.0, -5.0)]


def test_labels_of_nearby_points_never_overlap_each_other_or_a_marker() -> None:
    from dialectic.bench.labels import Box, place_labels

    anchors = [(100.0, 200.0), (104.0, 198.0), (400.0, 200.0)]
    sizes = [(80.0, 10.0)] * 3
    markers = [Box(x - 4, y - 4, x + 4, y + 4) for x, y in anchors]
    offsets = place_labels(anchors, sizes, bars=[], obstacles=markers)
    placed = zip(anchors, offsets, sizes, strict=True)
    boxes = [Box(x + dx, y + dy, x + dx + w, y + dy + h) for (x, y), (dx, dy), (w, h) in placed]
    assert all(a.overlap(b) == 0 for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    assert all(box.overlap(marker) == 0 for box in boxes for marker in markers)
    assert offsets[2] == (6.0, -5.0)  # the far point keeps the first choice


def test_a_label_steps_off_a_neighbours_error_bar_and_stays_inside_the_frame() -> None:
    from dialectic.bench.labels import Box, place_labels

    bar = Box(146.0, 150.0, 154.0, 250.0)  # a neighbour's error bar, 50 points to the right
    frame = Box(0.0, 0.0, 300.0, 400.0)
    ((dx, dy),) = place_labels([(100.0, 200.0)], [(80.0, 10.0)], bars=[bar], bounds=frame)
    label = Box(100 + dx, 200 + dy, 180 + dx, 210 + dy)
    assert label.overlap(bar) == 0 and label.outside(frame) == 0
    # at the frame's right edge, the label goes to the left of its point
    ((dx, _),) = place_labels([(280.0, 200.0)], [(80.0, 10.0)], bars=[], bounds=frame)
    assert dx == -86.0


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
