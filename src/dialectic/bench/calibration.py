"""The judges' stated confidences, measured: one row per judge model, from bench results files.

The ``dialectic`` and ``format:`` arms record the confidence the judge stated in its solution beside the
item's outcome. Pooled over every such item of every file given, per judge model, they give the Brier
score that :mod:`dialectic.core.stated_confidence` compares with the base rate's before it lets a judge's
confidence be shown (``benchmarks/bench_tables.py --calibration`` writes the shipped table).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict

from dialectic.bench.results_file import ResultsFile
from dialectic.core.stated_confidence import Measured


def judge_model(results: ResultsFile) -> str | None:
    """The model of the judge in the run's dialectic configuration, if it has one."""
    judge = results.spec.dialectic_config.get("judge")
    model = judge.get("model") if isinstance(judge, dict) else None
    return model if isinstance(model, str) else None


def measure(files: Sequence[ResultsFile]) -> list[Measured]:
    """Per judge model, the Brier score of its stated confidences and the base rate's, over every forecast."""
    pairs: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    where: dict[str, set[str]] = defaultdict(set)
    for results in files:
        model = judge_model(results)
        if model is None:
            continue
        for result in results.results:
            if result.judge is not None and result.judge.stated is not None:
                pairs[model].append((result.judge.stated, result.correct))
                where[model].add(f"{results.task} ({results.spec.created_at:%Y-%m-%d})")
    rows = []
    for model, forecasts in sorted(pairs.items()):
        rate = sum(right for _, right in forecasts) / len(forecasts)
        brier = sum((p - float(right)) ** 2 for p, right in forecasts) / len(forecasts)
        rows.append(
            Measured(
                model=model,
                brier=round(brier, 4),
                base_rate=round(rate * (1 - rate), 4),
                forecasts=len(forecasts),
                measured="; ".join(sorted(where[model])),
            )
        )
    return rows


def table(rows: Sequence[Measured], about: str) -> dict[str, object]:
    """The document :func:`dialectic.core.stated_confidence.measurements` reads."""
    return {"about": about, "models": [asdict(row) for row in rows]}
