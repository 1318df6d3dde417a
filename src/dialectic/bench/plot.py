"""``--plot``: PNGs of a run (needs the optional ``plot`` extra).

``--plot PATH`` writes two figures: PATH, the accuracy of each arm with its 95% CI, and beside it
``<stem>-pareto.png`` (:func:`pareto_path`), accuracy against cost — mean calls per item on the left
panel, mean tokens (input + output) per item on the right — with the Pareto frontier drawn
(:mod:`dialectic.bench.pareto`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialectic.bench.pareto import COSTS, Cost, cost_points, frontier
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
        labels = [_pareto_panel(axes, summary, cost) for axes, cost in zip(panels, COSTS, strict=True)]
        panels[0].set_ylabel("accuracy (%), 95% bootstrap CI")
        figure.suptitle(f"{summary.task} — run {run_title(summary.spec.id)}: accuracy against cost", fontsize=9)
        figure.tight_layout()  # the labels are spread over the final layout's scales
        for axes, panel_labels in zip(panels, labels, strict=True):
            _annotate(axes, panel_labels)
        figure.tight_layout()
        figure.savefig(path, dpi=120)
    finally:
        plt.close(figure)


def _pareto_panel(axes: Any, summary: BenchSummary, cost: Cost) -> list[tuple[str, float, float]]:
    """Draw one cost's panel; return its labels (arm, cost, accuracy %) for :func:`_annotate`."""
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
    axes.margins(x=0.15)  # room for the labels of the costliest arms
    axes.set_ylim(0, 105)
    axes.grid(True, alpha=0.3)
    return [(p.arm, p.cost, 100 * p.accuracy) for p in points]


_LABEL_POINTS = 8  # font size of the arm labels
_CHAR_WIDTH = 0.55  # mean character width, in font sizes
_LINE_HEIGHT = 1.3  # one label line, in font sizes


def _annotate(axes: Any, labels: list[tuple[str, float, float]]) -> None:
    """Label every point once the axes' scales and limits are final, spread so no two labels overlap."""
    axes.autoscale_view()
    figure = axes.get_figure()
    to_points = 72.0 / figure.dpi
    anchors = [tuple(axes.transData.transform((x, y)) * to_points) for _, x, y in labels]
    widths = [_CHAR_WIDTH * _LABEL_POINTS * len(text) for text, _, _ in labels]
    lifts = label_offsets(anchors, widths, _LINE_HEIGHT * _LABEL_POINTS)
    for (text, x, y), lift in zip(labels, lifts, strict=True):
        axes.annotate(text, (x, y), textcoords="offset points", xytext=(6, lift), fontsize=_LABEL_POINTS, zorder=4)


def label_offsets(
    anchors: list[tuple[float, float]], widths: list[float], height: float, gap: float = 4.0
) -> list[float]:
    """Vertical offsets (in points) for labels placed to the right of their anchors, none overlapping.

    Each label starts ``gap`` above its point; labels are placed from the highest point down, and one
    whose box would overlap a placed label's moves down below it. Anchors are in points, y upwards.
    """
    order = sorted(range(len(anchors)), key=lambda i: (-anchors[i][1], anchors[i][0]))
    placed: list[tuple[float, float, float, float]] = []  # left, right, bottom, top
    offsets = [0.0] * len(anchors)
    for i in order:
        x, y = anchors[i]
        left, right = x, x + widths[i]
        bottom = y + gap
        moved = True
        while moved:
            moved = False
            for p_left, p_right, p_bottom, p_top in placed:
                if left < p_right and p_left < right and bottom < p_top and p_bottom < bottom + height:
                    bottom = p_bottom - height
                    moved = True
        placed.append((left, right, bottom, bottom + height))
        offsets[i] = bottom - y
    return offsets
