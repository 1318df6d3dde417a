"""Majority vote and its tie rule: the earliest-given of the tied answers wins."""

from __future__ import annotations

from dialectic.bench.vote import TIE_RULE, majority_vote


def test_clear_majority() -> None:
    vote = majority_vote(["3", "4", "4"])
    assert (vote.winner, vote.tied, vote.counts) == ("4", False, {"3": 1, "4": 2})


def test_two_way_tie_goes_to_the_answer_given_first() -> None:
    assert majority_vote(["7", "9", "9", "7"]).winner == "7"
    assert majority_vote(["9", "7", "7", "9"]).winner == "9"
    assert majority_vote(["9", "7", "7", "9"]).tied


def test_three_way_tie_of_single_votes_goes_to_the_first_sample() -> None:
    vote = majority_vote(["5", "6", "8"])
    assert vote.winner == "5" and vote.tied


def test_tie_rule_ignores_answers_outside_the_tie() -> None:
    vote = majority_vote(["1", "2", "3", "3", "2"])
    assert vote.winner == "2" and vote.tied


def test_missing_answers_cast_no_vote() -> None:
    vote = majority_vote([None, "4", None, "5", "5"])
    assert (vote.winner, vote.tied) == ("5", False)
    assert majority_vote([None, None]).winner is None
    assert majority_vote([None, "8"]).winner == "8"


def test_the_rule_says_earliest() -> None:
    assert "earliest" in TIE_RULE
