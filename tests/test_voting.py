"""Counting votes: tables of ballots for every rule, and the votes that are refused."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from dialectic.core.domain import Vote, VoteRule
from dialectic.engine.voting import count_votes

AGENTS = ("a", "b", "c", "d", "e")


def ballot(*choices: str, confidences: tuple[int, ...] | None = None) -> list[Vote]:
    """One vote per choice, cast by the agents in order: ``ballot("b", "a")`` is a→b, b→a."""
    return [
        Vote(voter_id=AGENTS[i], choice_id=choice, confidence=None if confidences is None else confidences[i])
        for i, choice in enumerate(choices)
    ]


@dataclass(frozen=True)
class Case:
    name: str
    rule: VoteRule
    votes: list[Vote]
    tally: dict[str, float]
    winner: str | None
    consensus: bool
    tie: bool = False
    threshold: float | None = None
    weights: dict[str, float] | None = None
    candidates: tuple[str, ...] = ("a", "b", "c")


CASES = [
    # majority: more than half of the votes cast
    Case("majority 2 of 3", "majority", ballot("b", "a", "b"), {"a": 1, "b": 2, "c": 0}, "b", True),
    Case("majority unanimous", "majority", ballot("c", "c", "c"), {"a": 0, "b": 0, "c": 3}, "c", True),
    Case("majority three-way tie", "majority", ballot("b", "c", "a"), {"a": 1, "b": 1, "c": 1}, None, False, tie=True),
    Case(
        "majority 2-2 tie",
        "majority",
        ballot("b", "a", "b", "a"),
        {"a": 2, "b": 2, "c": 0, "d": 0},
        None,
        False,
        tie=True,
        candidates=("a", "b", "c", "d"),
    ),
    Case(
        "majority plurality 2 of 4 is half, not more",
        "majority",
        ballot("b", "a", "b", "c"),
        {"a": 1, "b": 2, "c": 1, "d": 0},
        "b",
        False,
        candidates=("a", "b", "c", "d"),
    ),
    Case(
        "majority plurality 2 of 5",
        "majority",
        ballot("b", "a", "b", "c", "d"),
        {"a": 1, "b": 2, "c": 1, "d": 1, "e": 0},
        "b",
        False,
        candidates=AGENTS,
    ),
    # abstentions: only the votes cast count
    Case("majority 1 vote cast of 3 voters", "majority", ballot("a"), {"a": 1, "b": 0, "c": 0}, "a", True),
    Case("majority no votes at all", "majority", [], {"a": 0, "b": 0, "c": 0}, None, False),
    Case("majority one voter", "majority", ballot("a"), {"a": 1}, "a", True, candidates=("a",)),
    # supermajority: at least the threshold
    Case(
        "supermajority 2 of 3 reaches 2/3", "supermajority", ballot("b", "b", "a"), {"a": 1, "b": 2, "c": 0}, "b", True
    ),
    Case(
        "supermajority 3 of 5 misses 2/3",
        "supermajority",
        ballot("a", "a", "a", "b", "b"),
        {"a": 3, "b": 2, "c": 0, "d": 0, "e": 0},
        "a",
        False,
        candidates=AGENTS,
    ),
    Case(
        "supermajority 3 of 4 reaches 3/4 exactly",
        "supermajority",
        ballot("a", "a", "a", "b"),
        {"a": 3, "b": 1, "c": 0, "d": 0},
        "a",
        True,
        threshold=0.75,
        candidates=("a", "b", "c", "d"),
    ),
    Case(
        "supermajority 4 of 5 misses 0.9",
        "supermajority",
        ballot("a", "a", "a", "a", "b"),
        {"a": 4, "b": 1, "c": 0, "d": 0, "e": 0},
        "a",
        False,
        threshold=0.9,
        candidates=AGENTS,
    ),
    Case(
        "supermajority under a threshold below half: 2 of 5 reaches 0.4",
        "supermajority",
        ballot("a", "a", "b", "c", "d"),
        {"a": 2, "b": 1, "c": 1, "d": 1, "e": 0},
        "a",
        True,
        threshold=0.4,
        candidates=AGENTS,
    ),
    Case(
        "supermajority under a threshold below half: a tie at the top still has no winner",
        "supermajority",
        ballot("a", "a", "b", "b", "c"),
        {"a": 2, "b": 2, "c": 1, "d": 0, "e": 0},
        None,
        False,
        tie=True,
        threshold=0.4,
        candidates=AGENTS,
    ),
    Case(
        "supermajority tie",
        "supermajority",
        ballot("a", "b"),
        {"a": 1, "b": 1, "c": 0},
        None,
        False,
        tie=True,
    ),
    Case("supermajority no votes", "supermajority", [], {"a": 0, "b": 0, "c": 0}, None, False),
    # weighted: each vote counts its voter's weight (1 unless given); more than half of the weight cast
    Case(
        "weighted: a weight flips the plurality",  # b gets 2 votes of weight 1, a one vote of weight 3
        "weighted",
        ballot("b", "a", "b"),
        {"a": 3, "b": 2, "c": 0},
        "a",
        True,  # 3 of 5 > 2.5
        weights={"b": 3},
    ),
    Case(
        "weighted: default weight 1 is a majority count",
        "weighted",
        ballot("b", "a", "b"),
        {"a": 1, "b": 2, "c": 0},
        "b",
        True,
    ),
    Case(
        "weighted: weights that tie",  # a: 1 + 1 = 2 against b: 2
        "weighted",
        ballot("a", "a", "b"),
        {"a": 2, "b": 2, "c": 0},
        None,
        False,
        tie=True,
        weights={"c": 2},
    ),
    Case(
        "weighted: plurality short of half the weight",  # 2.5 of 6 is no more than 3
        "weighted",
        ballot("a", "b", "c"),
        {"a": 2.5, "b": 1.5, "c": 2},
        "a",
        False,
        weights={"a": 2.5, "b": 1.5, "c": 2},
    ),
    Case(
        "weighted: floats that add up to the same weight tie",  # 0.1 + 0.2 = 0.30000000000000004 against 0.3
        "weighted",
        ballot("a", "a", "b"),
        {"a": 0.1 + 0.2, "b": 0.3, "c": 0},
        None,
        False,
        tie=True,
        weights={"a": 0.1, "b": 0.2, "c": 0.3},
    ),
    Case(
        "weighted: every weight zero decides nothing",
        "weighted",
        ballot("a", "b"),
        {"a": 0, "b": 0, "c": 0},
        None,
        False,
        weights={"a": 0, "b": 0},
    ),
    # confidence: each vote counts confidence/100; more than half of the total
    Case(
        "confidence flips the plurality",  # b: 0.3 + 0.2 = 0.5 against a: 0.9; 0.9 of 1.4 > 0.7
        "confidence",
        ballot("b", "a", "b", confidences=(30, 90, 20)),
        {"a": 0.9, "b": 0.5, "c": 0},
        "a",
        True,
    ),
    Case(
        "confidence that ties whole percents",  # 0.7 + 0.2 against 0.9
        "confidence",
        ballot("a", "a", "b", confidences=(70, 20, 90)),
        {"a": 0.9, "b": 0.9, "c": 0},
        None,
        False,
        tie=True,
    ),
    Case(
        "confidence plurality short of half",  # 0.6 of 1.5 is not more than 0.75
        "confidence",
        ballot("a", "b", "c", confidences=(60, 50, 40)),
        {"a": 0.6, "b": 0.5, "c": 0.4},
        "a",
        False,
    ),
    Case(
        "confidence all zero decides nothing",
        "confidence",
        ballot("a", "b", "a", confidences=(0, 0, 0)),
        {"a": 0, "b": 0, "c": 0},
        None,
        False,
    ),
    Case(
        "confidence: a zero-confidence vote is an abstention in effect",
        "confidence",
        ballot("a", "b", "b", confidences=(10, 0, 0)),
        {"a": 0.1, "b": 0, "c": 0},
        "a",
        True,
    ),
    Case(
        "confidence one voter", "confidence", ballot("a", confidences=(55,)), {"a": 0.55}, "a", True, candidates=("a",)
    ),
    Case("confidence no votes", "confidence", [], {"a": 0, "b": 0, "c": 0}, None, False),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_count_votes(case: Case) -> None:
    outcome = count_votes(
        case.votes,
        case.rule,
        threshold=case.threshold,
        weights=case.weights,
        candidates=case.candidates,
        voters=AGENTS,
    )
    assert outcome.rule == case.rule
    assert list(outcome.tally) == list(case.candidates), "every candidate, in ballot order"
    assert outcome.tally == pytest.approx(case.tally)
    assert (outcome.winner_id, outcome.consensus, outcome.tie) == (case.winner, case.consensus, case.tie)
    assert outcome.votes == case.votes


def test_supermajority_records_its_threshold_and_the_others_none() -> None:
    default = count_votes(ballot("a"), "supermajority", candidates=["a", "b"])
    chosen = count_votes(ballot("a"), "supermajority", threshold=0.8, candidates=["a", "b"])
    majority = count_votes(ballot("a"), "majority", candidates=["a", "b"])
    assert default.threshold == pytest.approx(2 / 3)
    assert chosen.threshold == 0.8
    assert majority.threshold is None


def test_voters_default_to_the_candidates() -> None:
    outcome = count_votes(ballot("b", "a", "b"), "majority", candidates=["a", "b", "c"])
    assert outcome.winner_id == "b"
    with pytest.raises(ValueError, match="'d' is not a voter"):
        count_votes(ballot("a", "a", "a", "a"), "majority", candidates=["a", "b", "c"])


def test_an_outcome_round_trips_through_json() -> None:
    outcome = count_votes(ballot("b", "a", "b", confidences=(30, 90, 20)), "confidence", candidates=["a", "b", "c"])
    assert type(outcome).model_validate(outcome.to_json_dict()) == outcome


@pytest.mark.parametrize(
    ("votes", "rule", "kwargs", "message"),
    [
        ([Vote(voter_id="a", choice_id="z")], "majority", {}, "voted for 'z', who is not a candidate"),
        ([Vote(voter_id="x", choice_id="a")], "majority", {}, "'x' is not a voter"),
        (
            [Vote(voter_id="a", choice_id="b"), Vote(voter_id="a", choice_id="c")],
            "majority",
            {},
            "'a' voted twice",
        ),
        ([Vote(voter_id="a", choice_id="b")], "confidence", {}, "'a' gave none"),
        ([], "majority", {"threshold": 0.6}, "only for the supermajority rule"),
        ([], "supermajority", {"threshold": 0.0}, "above 0 and at most 1"),
        ([], "supermajority", {"threshold": 1.5}, "above 0 and at most 1"),
        ([], "confidence", {"weights": {"a": 2.0}}, "only for the weighted rule"),
        ([], "weighted", {"weights": {"x": 2.0}}, "'x', who does not vote"),
        ([], "weighted", {"weights": {"a": -1.0}}, "finite number ≥ 0"),
        ([], "weighted", {"weights": {"a": float("nan")}}, "finite number ≥ 0"),
        ([], "majority", {"candidates": []}, "at least one candidate"),
        ([], "majority", {"candidates": ["a", "a"]}, "candidate 'a' is listed twice"),
    ],
)
def test_refused(votes: list[Vote], rule: VoteRule, kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"candidates": ["a", "b", "c"], **kwargs}
    with pytest.raises(ValueError, match=message):
        count_votes(votes, rule, **arguments)  # type: ignore[arg-type]
