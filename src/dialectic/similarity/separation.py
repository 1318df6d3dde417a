"""How well a similarity measure separates labelled pairs: paraphrases from disagreements.

Used by ``benchmarks/similarity.py`` to choose the default model and by the tests to hold each
backend to it. A pair is two design positions labelled ``paraphrase`` (the same position in
other words), ``disagreement`` (an opposing position on the same topic: a ``negation`` of the
first statement, sharing its words, or an ``alternative`` design in words of its own) or
``unrelated`` (another topic).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from dialectic.similarity.detectors import SimilarityModel

Kind = Literal["paraphrase", "disagreement", "unrelated"]


@dataclass(frozen=True)
class LabelledPair:
    id: str
    kind: Kind
    topic: str
    a: str
    b: str
    style: str | None = None
    """For a disagreement: ``negation`` or ``alternative``."""

    @property
    def group(self) -> str:
        """The kind, with the style of a disagreement (``disagreement/negation``)."""
        return f"{self.kind}/{self.style}" if self.style else self.kind


@dataclass(frozen=True)
class Separation:
    auc: float
    """ROC AUC of paraphrases against disagreements: the chance a paraphrase scores above a disagreement."""
    auc_by_group: dict[str, float]
    """The same against each group of other pairs alone (``disagreement/negation``, ``unrelated``, ...)."""
    intervals: dict[str, tuple[float, float]]
    """95% bootstrap intervals of ``auc`` (key ``disagreement``) and of each ``auc_by_group``."""
    accuracy: float
    """Balanced accuracy on paraphrase versus disagreement at the best single threshold."""
    threshold: float
    """That threshold (a pair at or above it is called a paraphrase)."""
    paired: float
    """Share of disagreements scoring below their topic's paraphrase (the two share the first statement)."""
    means: dict[str, float]
    """Mean similarity per group."""


def load_pairs(path: Path) -> list[LabelledPair]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [LabelledPair(p["id"], p["kind"], p["topic"], p["a"], p["b"], p.get("style")) for p in data["pairs"]]


def roc_auc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """The probability that a random positive outscores a random negative (ties count half)."""
    if not positives or not negatives:
        raise ValueError("ROC AUC needs at least one positive and one negative")
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


BOOTSTRAP_ROUNDS = 2000


def auc_interval(
    positives: Sequence[float], negatives: Sequence[float], *, rounds: int = BOOTSTRAP_ROUNDS, seed: int = 0
) -> tuple[float, float]:
    """A 95% percentile-bootstrap interval of :func:`roc_auc` (both samples resampled; seeded, so reproducible).

    With 20 pairs a side the interval is wide (about ±0.15): differences smaller than that
    between two models are not evidence that one separates better.
    """
    rng = random.Random(seed)
    values = sorted(
        roc_auc(rng.choices(positives, k=len(positives)), rng.choices(negatives, k=len(negatives)))
        for _ in range(rounds)
    )
    return values[int(0.025 * rounds)], values[int(0.975 * rounds) - 1]


def auc_difference(
    pairs: Sequence[LabelledPair],
    first: dict[str, float],
    second: dict[str, float],
    group: str,
    *,
    rounds: int = BOOTSTRAP_ROUNDS,
    seed: int = 0,
) -> tuple[float, float, float]:
    """How much higher ``second`` scores' AUC is than ``first``'s, paraphrases against ``group``
    (``disagreement`` for both kinds), with a 95% paired-bootstrap interval: the same resampled
    pairs score both measures, so what the two share cancels out.
    """
    positives = [p.id for p in pairs if p.kind == "paraphrase"]
    negatives = [p.id for p in pairs if group in (p.kind, p.group)]

    def gain(pos: Sequence[str], neg: Sequence[str]) -> float:
        return roc_auc([second[i] for i in pos], [second[i] for i in neg]) - roc_auc(
            [first[i] for i in pos], [first[i] for i in neg]
        )

    rng = random.Random(seed)
    values = sorted(
        gain(rng.choices(positives, k=len(positives)), rng.choices(negatives, k=len(negatives))) for _ in range(rounds)
    )
    return gain(positives, negatives), values[int(0.025 * rounds)], values[int(0.975 * rounds) - 1]


def best_threshold(positives: Sequence[float], negatives: Sequence[float]) -> tuple[float, float]:
    """The threshold with the best balanced accuracy (score ≥ threshold → positive), and that accuracy.

    Balanced accuracy is the mean of the rates of positives and negatives classified right, so a
    threshold that calls everything negative scores 50% however the classes are sized.
    """
    if not positives or not negatives:
        raise ValueError("a threshold needs at least one positive and one negative")
    best = (float("inf"), 0.5)
    for candidate in sorted({*positives, *negatives}):
        hits = sum(p >= candidate for p in positives) / len(positives)
        rejections = sum(n < candidate for n in negatives) / len(negatives)
        if (hits + rejections) / 2 > best[1]:
            best = (candidate, (hits + rejections) / 2)
    return best


def pair_scores(model: SimilarityModel, pairs: Sequence[LabelledPair]) -> dict[str, float]:
    """Each pair's similarity (the two statements compared on their own, as the detectors do)."""
    return {pair.id: model.similarities([pair.a, pair.b])[0][1] for pair in pairs}


def separation(pairs: Sequence[LabelledPair], scores: dict[str, float]) -> Separation:
    """How ``scores`` (by pair id) separate the paraphrases in ``pairs`` from the other pairs."""
    groups: dict[str, list[float]] = {}
    for pair in pairs:
        groups.setdefault(pair.group, []).append(scores[pair.id])
    paraphrases = groups.get("paraphrase", [])
    disagreements = [scores[p.id] for p in pairs if p.kind == "disagreement"]
    threshold, accuracy = best_threshold(paraphrases, disagreements)
    paraphrase_of = {p.topic: scores[p.id] for p in pairs if p.kind == "paraphrase"}
    matched = [p for p in pairs if p.kind == "disagreement" and p.topic in paraphrase_of]
    wins = sum(paraphrase_of[p.topic] > scores[p.id] for p in matched)
    others = {g: values for g, values in groups.items() if g != "paraphrase"}
    return Separation(
        auc=roc_auc(paraphrases, disagreements),
        auc_by_group={g: roc_auc(paraphrases, values) for g, values in others.items()},
        intervals={
            "disagreement": auc_interval(paraphrases, disagreements),
            **{g: auc_interval(paraphrases, values) for g, values in others.items()},
        },
        accuracy=accuracy,
        threshold=threshold,
        paired=wins / len(matched) if matched else 0.0,
        means={g: sum(values) / len(values) for g, values in groups.items()},
    )
