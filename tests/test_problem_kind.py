"""Which prompts a problem gets: the detection rule, on examples of both kinds."""

from __future__ import annotations

import pytest

from dialectic.engine.problem_kind import choose_kind, detect_kind


@pytest.mark.parametrize(
    "question",
    [
        "What is the result of 27+12*24+28-13*1?",
        "Compute 17 * 23 - 4.",
        "How many minutes are there in 3.5 hours?",
        "A train leaves at 9:40 and arrives at 13:05. How long is the trip in minutes?",
    ],
)
def test_short_questions_with_numbers_are_reasoning(question: str) -> None:
    assert detect_kind(question).kind == "reasoning"


@pytest.mark.parametrize(
    "question",
    [
        "What is the value of the Boolean expression `not (True and False) or False`? Answer True or False.",
        "Is the statement 'every prime is odd' true or false?",
        "What day of the week follows Friday?",
    ],
)
def test_questions_answered_by_a_word_are_reasoning(question: str) -> None:
    """No number in them, one right answer all the same (the bench's boolean-logic items were read as
    design briefs, and got the design prompts, before this rule)."""
    choice = detect_kind(question)
    assert choice.kind == "reasoning" and "one right answer" in choice.reason


@pytest.mark.parametrize(
    "problem",
    [
        "Design a rate limiter for a public API serving 10k requests per second.",
        "How should we migrate 2 TB from MySQL 5.7 to PostgreSQL 16 with under 5 minutes of downtime?",
        "Our service has 12 stateless nodes behind a load balancer; what cache should we build?",
        "Write a plan for onboarding new engineers.",
        "Should our service return true or false for an expired token, or raise?",
        "x" * 700 + " what is 2+2?",
    ],
)
def test_design_briefs_stay_design(problem: str) -> None:
    assert detect_kind(problem).kind == "design"


def test_a_configured_kind_wins_and_says_so() -> None:
    choice = choose_kind("reasoning", "Design a cache")
    assert choice.kind == "reasoning" and "configuration" in choice.reason
    assert choose_kind("auto", "What is 6*7?").kind == "reasoning"
