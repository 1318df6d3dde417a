"""Criterion scores that follow a pattern down the list, on scores the embedded 1.5B evaluator gave.

Each row is one evaluation of a design-problem debate (the seven criteria in reply order,
``overall`` left out), labelled by reading the evaluator's reasons beside the solution.
"""

from __future__ import annotations

import pytest

from dialectic.eval.patterns import evaluation_pattern, score_pattern
from dialectic.eval.scores import CRITERION_KEYS, EvaluationOutput

FOLLOWS_A_PATTERN = [
    ([10, 10, 10, 10, 10, 10, 10], "every criterion scored 10"),
    ([5, 5, 5, 5, 5, 5, 5], "every criterion scored 5"),
    ([10, 9, 10, 9, 10, 9, 10], "alternating 10, 9"),
    ([8, 6, 8, 6, 8, 6, 8], "alternating 8, 6"),
    ([8, 6, 5, 4, 3, 2, 1], "falling at every step over 7 criteria: 8, 6, 5, 4, 3, 2, 1"),
    ([8, 6, 4, 3, 2, 1, 3], "falling at every step over 6 criteria: 8, 6, 4, 3, 2, 1"),
    ([2, 1, 2, 3, 4, 5, 6], "rising at every step over 6 criteria: 1, 2, 3, 4, 5, 6"),
]

READ_THE_TEXT = [
    [10, 8, 7, 8, 7, 6, 10],
    [10, 8, 7, 9, 8, 9, 10],
    [8, 8, 7, 8, 7, 8, 7],  # alternates after the first score only
    [10, 8, 10, 8, 7, 8, 10],
    [10, 8, 7, 9, 8, 7, 6],  # falls for four steps, not five
]


@pytest.mark.parametrize(("scores", "description"), FOLLOWS_A_PATTERN)
def test_scores_that_follow_the_list_are_described(scores: list[float], description: str) -> None:
    assert score_pattern([float(s) for s in scores]) == description


@pytest.mark.parametrize("scores", READ_THE_TEXT)
def test_scores_that_vary_with_the_criteria_are_not_flagged(scores: list[float]) -> None:
    assert score_pattern([float(s) for s in scores]) is None


def test_fractional_scores_are_shown_as_given() -> None:
    assert score_pattern([7.5, 7.5, 7.5]) == "every criterion scored 7.5"
    assert score_pattern([7.0, 6.5]) is None  # two scores alternate trivially: too few to call a pattern
    assert score_pattern([]) is None and score_pattern([4.0]) is None


def test_the_overall_score_is_left_out() -> None:
    """``overall`` judges the whole; the seven criteria before it decide the pattern."""
    scores = dict(zip(CRITERION_KEYS, [6, 6, 6, 6, 6, 6, 6, 9], strict=True))
    output = EvaluationOutput.model_validate({key: {"score": s, "reason": "r"} for key, s in scores.items()})
    assert evaluation_pattern(output) == "every criterion scored 6"
    varied = dict(scores, security=8)
    output = EvaluationOutput.model_validate({key: {"score": s, "reason": "r"} for key, s in varied.items()})
    assert evaluation_pattern(output) is None
