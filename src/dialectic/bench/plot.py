"""``--plot``: PNGs of a run (needs the optional ``plot`` extra).

``--plot PATH`` writes two figures: PATH, the accuracy of each arm with its 95% CI, and beside it
``<stem>-pareto.png`` (:func:`pareto_path`), accuracy against cost — mean calls per item on the left
panel, mean tokens (input + output) per item on the right — with the Pareto frontier drawn
(:mod:`dialectic.bench.pareto`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialectic.bench.labels import SIDE_GAP, Box, place_labels
from dialectic.bench.pareto import COSTS, Cost, CostPoint, cost_points, frontier
from dialectic.bench.records import merged_run_id, merged_runs
from dialectic.bench.summary import BenchSummary
from dialectic.core.extras import require_extra

PARETO_SUFFIX = "-pareto"
_COST_LABELS: dict[Cost, str] = {
    "calls": "mean provider calls per item",
    "tokens": "mean tokens per item (input + output)",
}


def require_matplotlib() -> None:
    """Fail before any call is made when ``--plot`` cannot be honoured (exit 4, naming the extra)."""
    require_extra("--plot", "plot")


def pareto_path(path: Path) -> Path:
    """Where ``--plot PATH`` puts the accuracy-against-cost figure: ``results.png`` → ``results-pareto.png``."""
    return path.with_name(f"{path.stem}{PARETO_SUFFIX}{path.suffix or '.png'}")


def _pyplot() -> Any:
    require_matplotlib()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def run_title(run_id: str) -> str:
    """A run's name for a figure title: a merged table's ``A + B + A + C`` becomes ``A + 2 more runs``."""
    runs = merged_runs(run_id)
    if len(runs) <= 2:
        return merged_run_id(runs)
    return f"{runs[0]} + {len(runs) - 1} more runs"


def write_plot(summary: BenchSummary, path: Path) -> None:
    """The accuracy bars to ``path`` and the Pareto figure to :func:`pareto_path` of it."""
    write_accuracy(summary, path)
    write_pareto(summary, pareto_path(path))


def write_accuracy(summary: BenchSummary, path: Path) -> None:
    plt = _pyplot()
    arms = [a for a in summary.arms if a.accuracy is not None]
    names = [a.arm for a in arms]
    means = [100 * a.accuracy.estimate for a in arms if a.accuracy]
    below = [100 * (a.accuracy.estimate - a.accuracy.low) for a in arms if a.accuracy]
    above = [100 * (a.accuracy.high - a.accuracy.estimate) for a in arms if a.accuracy]
    figure, axes = plt.subplots(figsize=(max(4.0, 1.4 * len(names) + 1.5), 4.0))
    try:
        axes.bar(names, means, yerr=[below, above], capsize=6, color="#4C72B0")
        for x, (mean, high, arm) in enumerate(zip(means, above, arms, strict=True)):
            label = f"{mean:.0f}% (n={arm.items})"
            axes.text(x, min(mean + high + 2, 104), label, ha="center", va="bottom", fontsize=8)
        axes.set_ylim(0, 112)
        axes.set_ylabel("accuracy (%), 95% bootstrap CI")
        axes.set_title(f"{summary.task} — run {run_title(summary.spec.id)}", fontsize=9)
        axes.tick_params(axis="x", labelrotation=20)
        figure.tight_layout()
        figure.savefig(path, dpi=120)
    finally:
        plt.close(figure)


def write_pareto(summary: BenchSummary, path: Path) -> None:
    """Accuracy (95% CI bars) against mean calls and mean tokens per item, one panel each, the arms on
    the Pareto frontier joined by a line and drawn filled, the dominated ones hollow; every arm labelled."""
    plt = _pyplot()
    figure, panels = plt.subplots(1, 2, figsize=(11.0, 4.6), sharey=True)
    try:
        panel_points = [_pareto_panel(axes, summary, cost) for axes, cost in zip(panels, COSTS, strict=True)]
        panels[0].set_ylabel("accuracy (%), 95% bootstrap CI")
        figure.suptitle(f"{summary.task} — run {run_title(summary.spec.id)}: accuracy against cost", fontsize=9)
        figure.tight_layout()  # the labels are spread over the final layout's scales
        for axes, points in zip(panels, panel_points, strict=True):
            _annotate(axes, points)
        figure.tight_layout()
        figure.savefig(path, dpi=120)
    finally:
        plt.close(figure)


def _pareto_panel(axes: Any, summary: BenchSummary, cost: Cost) -> list[CostPoint]:
    """Draw one cost's panel; return its points for :func:`_annotate` to label."""
    points = cost_points(summary.arms, cost)
    best = frontier(points)
    on_frontier = {p.arm for p in best}
    for p in points:
        kept = p.arm in on_frontier
        axes.errorbar(
            [p.cost],
            [100 * p.accuracy],
            yerr=[[100 * (p.accuracy - p.low)], [100 * (p.high - p.accuracy)]],
            fmt="o",
            capsize=4,
            color="#C44E52" if kept else "#4C72B0",
            markerfacecolor="#C44E52" if kept else "white",
            zorder=3,
        )
    if best:
        axes.plot(
            [p.cost for p in best],
            [100 * p.accuracy for p in best],
            linestyle="--",
            color="#C44E52",
            linewidth=1.2,
            label="Pareto frontier (filled: not dominated)",
            zorder=2,
        )
        axes.legend(loc="lower right", fontsize=8)
    costs = [p.cost for p in points if p.cost > 0]
    if costs and len(costs) == len(points) and max(costs) / min(costs) >= 10:
        axes.set_xscale("log")
    axes.set_xlabel(_COST_LABELS[cost] + (" (log scale)" if axes.get_xscale() == "log" else ""))
    axes.margins(x=0.15)  # room beside the outermost points; _annotate widens it further for labels
    axes.set_ylim(0, 105)
    axes.grid(True, alpha=0.3)
    return points


_LABEL_POINTS = 8  # font size of the arm labels
_LINE_HEIGHT = 1.3  # one label line, in font sizes
_BAR_HALF_WIDTH = 4.0  # half the width of an error bar's caps (capsize 4), in points
_MARKER_HALF_WIDTH = 4.0  # half a marker's width, in points
_LABEL_PAD = 2.0  # room past a label's measured end, in points


def _annotate(axes: Any, points: list[CostPoint]) -> None:
    """Label every point once the axes' scales are final: the x-axis is widened until every label
    fits to the right of its point, and :func:`dialectic.bench.labels.place_labels` keeps each label
    clear of the other labels, the markers and the legend, and off the error bars where it can."""
    from matplotlib.font_manager import FontProperties

    axes.autoscale_view()
    figure = axes.get_figure()
    renderer = figure.canvas.get_renderer()
    to_points = 72.0 / figure.dpi
    font = FontProperties(size=_LABEL_POINTS)
    widths = [renderer.get_text_width_height_descent(p.arm, font, ismath=False)[0] * to_points for p in points]

    def in_points(x: float, y: float) -> tuple[float, float]:
        px, py = axes.transData.transform((x, y))
        return px * to_points, py * to_points

    def box_of(extent: Any) -> Box:
        return Box(extent.x0 * to_points, extent.y0 * to_points, extent.x1 * to_points, extent.y1 * to_points)

    frame = box_of(axes.get_window_extent(renderer))
    span = frame.right - frame.left
    # a point at distance d from the left edge fits its label when d / factor + gap + pad + width <= span
    factor = max(
        (in_points(p.cost, 0)[0] - frame.left) / max(span - SIDE_GAP - _LABEL_PAD - w, span / 4)
        for p, w in zip(points, widths, strict=True)
    )
    if factor > 1:
        _widen_right(axes, factor)
    anchors = [in_points(p.cost, 100 * p.accuracy) for p in points]
    bars, obstacles = [], []
    for p, (x, y) in zip(points, anchors, strict=True):
        low, high = in_points(p.cost, 100 * p.low)[1], in_points(p.cost, 100 * p.high)[1]
        bars.append(Box(x - _BAR_HALF_WIDTH, low, x + _BAR_HALF_WIDTH, high))
        m = _MARKER_HALF_WIDTH
        obstacles.append(Box(x - m, y - m, x + m, y + m))
    legend = axes.get_legend()
    if legend is not None:
        obstacles.append(box_of(legend.get_window_extent(renderer)))
    sizes = [(w + _LABEL_PAD, _LINE_HEIGHT * _LABEL_POINTS) for w in widths]
    offsets = place_labels(anchors, sizes, bars, obstacles, frame)
    for p, offset, (_, height) in zip(points, offsets, sizes, strict=True):
        far = abs(offset[1] + height / 2) > height  # moved off its point's level: draw a leader
        axes.annotate(
            p.arm,
            (p.cost, 100 * p.accuracy),
            textcoords="offset points",
            xytext=offset,
            va="bottom",
            fontsize=_LABEL_POINTS,
            zorder=4,
            arrowprops=_leader(offset) if far else None,
        )


def _leader(offset: tuple[float, float]) -> dict[str, Any]:
    """A thin line from the label's corner nearest its point to the point."""
    corner = (0.0 if offset[0] > 0 else 1.0, 1.0 if offset[1] < 0 else 0.0)
    return {"arrowstyle": "-", "color": "grey", "linewidth": 0.6, "shrinkA": 0, "shrinkB": 4, "relpos": corner}


def _widen_right(axes: Any, factor: float) -> None:
    """Stretch the x-axis's span (in its scale: linear or log) by ``factor``, keeping its left end."""
    scale = axes.xaxis.get_transform()
    left, right = scale.transform(list(axes.get_xlim()))
    wider = scale.inverted().transform([left + (right - left) * factor])[0]
    axes.set_xlim(axes.get_xlim()[0], wider)
