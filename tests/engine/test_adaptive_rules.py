"""The adaptive protocol's rules: stopping, splits, the exchange's options, the weighted vote, confidence."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dialectic.engine.adaptive import (
    MIN_CONFIDENCE,
    AdaptivePlan,
    Ballot,
    answer_confidence,
    confidence,
    exchange_options,
    is_contested,
    is_split,
    sampling_done,
    stated_confidence,
    weighted_vote,
)
from dialectic.llm.base import TokenLogprob

PLAN = AdaptivePlan()


@pytest.mark.parametrize(
    ("answers", "done"),
    [
        (["7"], False),  # fewer than `first`
        (["7", "7"], True),  # the greedy answer and a sample agree: 2 of 2
        (["7", "8"], False),
        (["7", "7", "7"], True),  # unanimous: 3 of 3
        (["7", "8", "7"], False),  # 2 of 3, and 8 could still draw level
        (["7", "8", "7", "7"], True),  # 3 to 1 with one left: 7 cannot lose
        (["7", "8", "9", "7"], False),
        (["7", "8", "9", "6", "5"], True),  # the budget is spent
        ([None, None], False),
    ],
)
def test_sampling_stops_when_the_leader_cannot_lose_or_holds_the_share(answers: list[str | None], done: bool) -> None:
    assert sampling_done(answers, PLAN) is done


@given(st.lists(st.sampled_from(["1", "2", "3", None]), min_size=1, max_size=5))
def test_a_leader_that_stopped_sampling_below_the_share_wins_every_continuation(answers: list[str | None]) -> None:
    """'Cannot lose' is checked by brute force: every way the remaining draws could go keeps the leader ahead."""
    drawn = len(answers)
    if drawn >= PLAN.most or not sampling_done(answers, PLAN):
        return
    counts = {a: answers.count(a) for a in set(answers) if a is not None}
    leader = max(counts, key=lambda a: counts[a])
    if counts[leader] / drawn >= PLAN.stop_share:
        return  # stopped on the share rule, which is a bet, not a certainty
    for rest in itertools.product(["1", "2", "3", "4"], repeat=PLAN.most - drawn):
        final = [*answers, *rest]
        assert all(final.count(leader) > final.count(other) for other in set(final) - {leader, None})


@pytest.mark.parametrize(
    ("answers", "split"),
    [
        (["7", "7", "7"], False),
        (["7", "7", "7", "8", "9"], False),  # 3 of 5 is a clear leader
        (["7", "7", "8", "8", "9"], True),  # a tie at the top
        (["7", "7", "8", "9", "6"], True),  # 2 of 5
        ([], False),
    ],
)
def test_split_answers(answers: list[str | None], split: bool) -> None:
    assert is_split(answers, PLAN) is split


@pytest.mark.parametrize(
    ("answers", "contested"),
    [
        (["7", "7", "8", "8", "9"], True),  # two answers given twice each
        (["7", "7", "8", "9", "6"], False),  # split, but scattered: only 7 was given twice
        (["7", "8", "9", "6", "5"], False),  # every answer different
        (["7", "7", "7", "8", "8"], False),  # 3 of 5 is no split
        ([], False),
    ],
)
def test_only_a_split_between_supported_answers_is_contested(answers: list[str | None], contested: bool) -> None:
    assert is_contested(answers, PLAN) is contested


def test_a_contest_threshold_of_one_exchanges_over_every_split() -> None:
    plan = AdaptivePlan(contest=1)
    assert is_contested(["7", "7", "8", "9", "6"], plan) and is_contested(["7", "8", "9", "6", "5"], plan)
    with pytest.raises(ValueError, match="contest"):
        AdaptivePlan(contest=0)


def test_the_exchange_shows_each_distinct_answer_once_most_given_first() -> None:
    options = exchange_options(["8", "7", None, "7", "9"], ["w8", "w7a", "none", "w7b", "w9"])
    assert [(o.label, o.answer, o.given_by, o.working) for o in options] == [
        ("A", "7", 2, "w7a"),
        ("B", "8", 1, "w8"),
        ("C", "9", 1, "w9"),
    ]


def test_the_vote_weighs_confidence_over_numbers() -> None:
    tally = weighted_vote([Ballot("7", 0.2), Ballot("7", 0.2), Ballot("8", 0.9), Ballot(None, 1.0)])
    assert tally.winner == "8"
    assert tally.counts == {"7": 2, "8": 1}
    assert tally.agreement == "1 of 3 agree"
    assert not tally.tied


def test_unknown_confidence_counts_one_and_ties_go_to_the_earliest_answer() -> None:
    tally = weighted_vote([Ballot("8"), Ballot("7"), Ballot("7", 0.5), Ballot("8", 0.5)])
    assert (tally.winner, tally.tied, tally.agreement) == ("8", True, "2 of 4 agree")
    assert weighted_vote([Ballot(None)]).winner is None


def tokens(*pieces: tuple[str, float]) -> list[TokenLogprob]:
    return [TokenLogprob(text, logprob) for text, logprob in pieces]


def test_confidence_is_the_probability_of_the_boxed_answers_tokens() -> None:
    logprobs = tokens(("So ", -0.1), ("\\boxed{", -0.01), ("4", -0.5), ("2", -0.2), ("}", 0.0))
    text = "So \\boxed{42}"
    assert answer_confidence(text, logprobs) == pytest.approx(math.exp(-0.7))
    assert answer_confidence("no box here", tokens(("no box here", -1.0))) is None
    assert answer_confidence(text, []) is None
    assert answer_confidence(text, tokens(("something else", -0.1))) is None
    very_unsure = tokens(("\\boxed{", 0.0), ("9", -50.0), ("}", 0.0))
    assert answer_confidence("\\boxed{9}", very_unsure) == MIN_CONFIDENCE


def test_a_stated_confidence_is_the_fallback() -> None:
    assert stated_confidence("... Confidence: 80%") == pytest.approx(0.8)
    assert stated_confidence("confidence 0.25") == pytest.approx(0.25)
    assert stated_confidence("I am sure.") is None
    assert confidence("\\boxed{3} Confidence: 90%", []) == pytest.approx(0.9)


def test_a_plan_needs_a_sensible_budget() -> None:
    with pytest.raises(ValueError, match="first"):
        AdaptivePlan(first=6, most=5)
