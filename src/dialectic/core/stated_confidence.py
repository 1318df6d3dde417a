"""Whether a judge's stated confidence has earned a place beside its solution.

A judge writes "confidence: 95" whatever the quality of its solution; shown as a number it reads as a
probability. It is shown only for a model whose stated confidences were measured on the bench and scored
a Brier score below the *base rate*'s — what always stating the judge's own hit rate scores — over at least
:data:`MIN_FORECASTS` items. The measurements ship with the package (``measured_calibration.json``, written
by ``benchmarks/bench_tables.py --calibration`` from the committed results files); a model that was not
measured, or measured and not calibrated, gets no number, and the reason instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

MIN_FORECASTS = 50
TABLE = "measured_calibration.json"


@dataclass(frozen=True)
class Measured:
    model: str
    brier: float
    """The Brier score of the judge's stated confidences against the bench items' outcomes."""
    base_rate: float
    """The Brier score of always stating the judge's hit rate on the same items: p(1 − p)."""
    forecasts: int
    measured: str
    """Where: the task(s) and date."""

    @property
    def earned(self) -> bool:
        return self.forecasts >= MIN_FORECASTS and self.brier < self.base_rate


@cache
def measurements() -> dict[str, Measured]:
    """The shipped table: model name → its measurement."""
    text = resources.files("dialectic.core").joinpath(TABLE).read_text(encoding="utf-8")
    return {row["model"]: Measured(**row) for row in json.loads(text)["models"]}


def withheld_reason(model: str | None) -> str | None:
    """Why a confidence stated by ``model`` is not shown; ``None`` when it has earned its place."""
    found = measurements().get(model or "")
    if found is None:
        return "the judge's model has no measured calibration"
    if found.earned:
        return None
    if found.forecasts < MIN_FORECASTS:
        return f"the judge's model has only {found.forecasts} measured confidences"
    return (
        f"the judge's model stated confidences no better than a constant: Brier {found.brier:.2f} "
        f"against {found.base_rate:.2f} for always stating its hit rate, over {found.forecasts} bench items"
    )
