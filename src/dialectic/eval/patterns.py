"""Criterion scores that follow a pattern down the list rather than the solution.

A small evaluator model filling the reply's fields in order can score by position: the same
number for every criterion, two numbers taking turns, or a count falling (or rising) one field
after the next. Measured on the embedded 1.5B model, 11 of 21 design-problem evaluations did
one of these, and two of them gave the lowest overall scores of the set. Such scores cannot rank
solutions; the command says so instead of averaging them in silence.

The checks look at the criteria in the order the reply lists them, leaving out ``overall``
(a judgement of the whole, expected to echo the others). They are deliberately narrow: a
near-alternation or a single repeated pair is not flagged.
"""

from __future__ import annotations

from collections.abc import Sequence

from dialectic.eval.scores import CRITERION_KEYS, EvaluationOutput

OVERALL = "overall"
MONOTONE_RUN = 6
"""Consecutive criteria whose scores fall (or rise) at every step before the run counts as a pattern."""


def _number(value: float) -> str:
    return f"{value:g}"


def _monotone_run(scores: Sequence[float]) -> list[float] | None:
    """The longest run of at least :data:`MONOTONE_RUN` scores falling, or rising, at every step."""
    best: list[float] = []
    for sign in (-1, 1):
        start = 0
        for end in range(1, len(scores) + 1):
            if end == len(scores) or (scores[end] - scores[end - 1]) * sign <= 0:
                if end - start > len(best):
                    best = list(scores[start:end])
                start = end
    return best if len(best) >= MONOTONE_RUN else None


def score_pattern(scores: Sequence[float]) -> str | None:
    """Describe the pattern ``scores`` (criteria in reply order) follow, or ``None`` when they follow none."""
    if len(scores) < 2:
        return None
    if len(set(scores)) == 1:
        return f"every criterion scored {_number(scores[0])}"
    first, second = scores[0], scores[1]
    if len(scores) >= 4 and all(score == (first, second)[i % 2] for i, score in enumerate(scores)):
        return f"alternating {_number(first)}, {_number(second)}"
    run = _monotone_run(scores)
    if run is not None:
        way = "falling" if run[1] < run[0] else "rising"
        return f"{way} at every step over {len(run)} criteria: {', '.join(_number(s) for s in run)}"
    return None


def evaluation_pattern(output: EvaluationOutput) -> str | None:
    """The pattern of one evaluation's criterion scores, ``overall`` left out."""
    scored = output.scores()
    return score_pattern([scored[key].score for key in CRITERION_KEYS if key != OVERALL])
