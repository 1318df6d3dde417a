"""ELO ratings on hand-computed examples.

The arithmetic, with E(Ra, Rb) = 1 / (1 + 10^((Rb − Ra) / 400)) and K = 32:

* equal ratings expect 0.5 each, so a win moves the winner +16 and the loser −16;
* 1516 against 1484 (a 32-point gap): 10^(−32/400) = 10^(−0.08) = 0.831764, so the stronger
  expects 1 / 1.831764 = 0.545922 and the weaker 0.454078;
* 1500 against 1516: 10^(16/400) = 10^0.04 = 1.096478, expectation 1 / 2.096478 = 0.476990;
  1500 against 1484: 10^(−0.04) = 0.912011, expectation 1 / 1.912011 = 0.523010.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dialectic.core.domain import DebateState, DroppedParticipant, Participant, Verdict, VoteOutcome
from dialectic.reporting.ratings import Match, RatingEntry, compute_ratings, debate_matches, expected_score

START = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
MODELS = {"a": "model-a", "b": "model-b", "c": "model-c"}


def agent(agent_id: str, *, model: str | None = None, name: str | None = None) -> Participant:
    return Participant(
        id=agent_id,
        name=name or agent_id.upper(),
        role="generalist",
        model=model or MODELS.get(agent_id, "model-x"),
        provider="openai",
    )


def debate(
    number: int,
    players: str | list[Participant],
    *,
    verdict: str | None = "",
    vote: VoteOutcome | None = None,
    structured: bool = True,
) -> DebateState:
    """Debate ``number`` (created ``number`` hours after START); ``verdict=""`` means no verdict, ``None`` no winner."""
    agents = [agent(p) for p in players] if isinstance(players, str) else players
    return DebateState(
        id=f"deb-{number}",
        problem="p",
        status="completed",
        agents=agents,
        verdict=None if verdict == "" else Verdict(summary="s", winner_id=verdict, structured=structured),
        vote=vote,
        created_at=START + timedelta(hours=number),
    )


def vote_for(winner: str | None, *, tie: bool = False) -> VoteOutcome:
    return VoteOutcome(rule="majority", winner_id=winner, tie=tie, consensus=winner is not None)


def table(board_entries: list[RatingEntry]) -> dict[str, tuple[float, int, int, int]]:
    return {e.key: (round(e.rating, 4), e.wins, e.draws, e.losses) for e in board_entries}


def test_expected_score() -> None:
    assert expected_score(1500, 1500) == 0.5
    assert expected_score(1516, 1484) == pytest.approx(0.545922, abs=1e-6)
    assert expected_score(1484, 1516) == pytest.approx(0.454078, abs=1e-6)
    assert expected_score(1900, 1500) == pytest.approx(10 / 11)  # 10^(−400/400) = 0.1 → 1 / 1.1


def test_two_players_one_game() -> None:
    board = compute_ratings([debate(1, "ab", verdict="a")], "agent")
    # E = 0.5 each: a 1500 + 32 × (1 − 0.5) = 1516, b 1500 + 32 × (0 − 0.5) = 1484
    assert table(board.entries) == {"a": (1516.0, 1, 0, 0), "b": (1484.0, 0, 0, 1)}
    assert [e.key for e in board.entries] == ["a", "b"]
    assert board.debates == 1
    assert board.entries[0].matches == 1


def test_three_players_one_debate() -> None:
    board = compute_ratings([debate(1, "abc", verdict="a")], "agent")
    # a beats b and beats c, both from 1500: +16 twice; b and c do not play each other
    assert table(board.entries) == {"a": (1532.0, 2, 0, 0), "b": (1484.0, 0, 0, 1), "c": (1484.0, 0, 0, 1)}


def test_a_draw_between_equals_changes_nothing_but_counts() -> None:
    board = compute_ratings([debate(1, "abc", verdict=None)], "agent")
    # three pairs (a-b, a-c, b-c), each E = 0.5 and score 0.5: no change
    assert table(board.entries) == {k: (1500.0, 0, 2, 0) for k in "abc"}


def test_a_draw_moves_unequal_ratings_together() -> None:
    board = compute_ratings([debate(1, "ab", verdict="a"), debate(2, "ab", verdict=None)], "agent")
    # after debate 1: a 1516, b 1484; the draw: a 1516 + 32 × (0.5 − 0.545922) = 1514.5305, b 1485.4695
    assert table(board.entries) == {"a": (1514.5305, 1, 1, 0), "b": (1485.4695, 0, 1, 1)}


def test_order_of_debates_matters_and_is_chronological() -> None:
    a_then_b = [debate(1, "ab", verdict="a"), debate(2, "ab", verdict="b")]
    b_then_a = [debate(1, "ab", verdict="b"), debate(2, "ab", verdict="a")]
    # a wins first: a 1516, b 1484; then b wins expecting 0.454078: b 1484 + 32 × 0.545922 = 1501.4695, a 1498.5305
    assert table(compute_ratings(a_then_b, "agent").entries) == {"a": (1498.5305, 1, 0, 1), "b": (1501.4695, 1, 0, 1)}
    assert table(compute_ratings(b_then_a, "agent").entries) == {"a": (1501.4695, 1, 0, 1), "b": (1498.5305, 1, 0, 1)}
    # the store lists newest first: the input order does not matter, creation time does
    assert table(compute_ratings(list(reversed(a_then_b)), "agent").entries) == table(
        compute_ratings(a_then_b, "agent").entries
    )


def test_matches_within_one_debate_use_the_ratings_from_before_it() -> None:
    board = compute_ratings([debate(1, "ab", verdict="a"), debate(2, "abc", verdict="c")], "agent")
    # before debate 2: a 1516, b 1484, c 1500.
    # c vs a: c expects 0.476990 → +32 × 0.523010 = +16.7363; c vs b: c expects 0.523010 → +32 × 0.476990 = +15.2637
    # c 1500 + 16.7363 + 15.2637 = 1532, a 1516 − 16.7363 = 1499.2637, b 1484 − 15.2637 = 1468.7363
    assert table(board.entries) == {
        "c": (1532.0, 2, 0, 0),
        "a": (1499.2637, 1, 0, 1),
        "b": (1468.7363, 0, 0, 2),
    }
    assert [e.key for e in board.entries] == ["c", "a", "b"]


def test_a_verdict_and_a_vote_both_count() -> None:
    board = compute_ratings([debate(1, "ab", verdict="a", vote=vote_for("b"))], "agent")
    # both from 1500: a +16 (verdict) −16 (vote), b −16 +16
    assert table(board.entries) == {"a": (1500.0, 1, 0, 1), "b": (1500.0, 1, 0, 1)}
    assert {m.source for m in debate_matches(debate(1, "ab", verdict="a", vote=vote_for("b")), "agent")} == {
        "verdict",
        "vote",
    }


def test_a_vote_alone_its_tie_and_its_plurality() -> None:
    tied = debate(1, "ab", vote=vote_for(None, tie=True))
    assert debate_matches(tied, "agent") == [Match("deb-1", "vote", "a", "b", 0.5)]
    plurality = VoteOutcome(rule="majority", winner_id="b", consensus=False)
    assert debate_matches(debate(2, "ab", vote=plurality), "agent") == [Match("deb-2", "vote", "b", "a", 1.0)]


def test_judgements_that_decide_nothing_are_not_matches() -> None:
    nobody_voted = debate(1, "ab", vote=VoteOutcome(rule="majority"))
    unparsed_verdict = debate(2, "ab", verdict=None, structured=False)
    no_judgement = debate(3, "ab")
    unknown_winner = debate(4, "ab", verdict="zed")
    board = compute_ratings([nobody_voted, unparsed_verdict, no_judgement, unknown_winner], "agent")
    assert board.entries == [] and board.debates == 0


def test_a_dropped_agent_is_not_rated() -> None:
    state = debate(1, "abc", verdict="a")
    state.dropped.append(DroppedParticipant(agent_id="c", round_number=1, reason="kept failing"))
    board = compute_ratings([state], "agent")
    assert table(board.entries) == {"a": (1516.0, 1, 0, 0), "b": (1484.0, 0, 0, 1)}


def test_by_model_agents_on_one_model_do_not_play_each_other() -> None:
    players = [agent("a", model="m1"), agent("b", model="m1"), agent("c", model="m2")]
    board = compute_ratings([debate(1, players, verdict="a")], "model")
    # a (m1) beats c (m2) once; a vs b is m1 vs m1: no match; both from 1500
    assert table(board.entries) == {"openai/m1": (1516.0, 1, 0, 0), "openai/m2": (1484.0, 0, 0, 1)}
    assert [e.name for e in board.entries] == ["openai/m1", "openai/m2"]
    # a draw: a-c and b-c are two m1-m2 matches, a-b none
    draw = compute_ratings([debate(1, players, verdict=None)], "model")
    assert table(draw.entries) == {"openai/m1": (1500.0, 0, 2, 0), "openai/m2": (1500.0, 0, 2, 0)}


def test_by_model_one_model_only_is_no_match() -> None:
    players = [agent("a", model="m1"), agent("b", model="m1")]
    assert compute_ratings([debate(1, players, verdict="a")], "model").debates == 0


def test_by_agent_the_name_shown_is_the_latest() -> None:
    first = debate(1, [agent("a", name="Old name"), agent("b")], verdict="a")
    second = debate(2, [agent("a", name="New name"), agent("b")], verdict="a")
    board = compute_ratings([second, first], "agent")
    assert [(e.key, e.name) for e in board.entries] == [("a", "New name"), ("b", "B")]


def test_parameters_and_ties_in_rank() -> None:
    board = compute_ratings([debate(1, "ab", verdict="a")], "agent", k=10, initial=1000)
    assert table(board.entries) == {"a": (1005.0, 1, 0, 0), "b": (995.0, 0, 0, 1)}
    # equal ratings: more matches first, then the key
    even = compute_ratings([debate(1, "abc", verdict=None), debate(2, "de", verdict=None)], "agent")
    assert [e.key for e in even.entries] == ["a", "b", "c", "d", "e"]
