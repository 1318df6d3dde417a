"""``--plot``: a PNG of accuracy per arm with its 95% CI (needs the optional ``plot`` extra)."""

from __future__ import annotations

from pathlib import Path

from dialectic.bench.summary import BenchSummary
from dialectic.core.extras import require_extra


def require_matplotlib() -> None:
    """Fail before any call is made when ``--plot`` cannot be honoured (exit 4, naming the extra)."""
    require_extra("--plot", "plot")


def write_plot(summary: BenchSummary, path: Path) -> None:
    require_matplotlib()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
        axes.set_title(f"{summary.task} — run {summary.spec.id}", fontsize=9)
        axes.tick_params(axis="x", labelrotation=20)
        figure.tight_layout()
        figure.savefig(path, dpi=120)
    finally:
        plt.close(figure)
