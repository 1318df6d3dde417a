"""Calibration from stored debates (:mod:`dialectic.reporting.calibration`): votes held against the verdict,
adaptive answers against the decided answer, the Brier score worked by hand."""

from __future__ import annotations

import pytest

from dialectic.core.domain import (
    AnswerTally,
    Contribution,
    ContributionMetadata,
    DebateRound,
    DebateState,
    Participant,
    Verdict,
    Vote,
    VoteOutcome,
)
from dialectic.reporting.calibration import answer_forecasts, compute_calibration, debate_forecasts, vote_forecasts

ALPHA = Participant(id="agent-a", name="Alpha", role="architect", provider="openai", model="gpt-a")
BETA = Participant(id="agent-b", name="Beta", role="security", provider="anthropic", model="claude-b")
GAMMA = Participant(id="agent-c", name="Gamma", role="kiss", provider="openai", model="gpt-a")


def voted(number: int, winner: str | None, votes: list[Vote], *, structured: bool = True) -> DebateState:
    return DebateState(
        id=f"deb-{number}",
        problem="p",
        status="completed",
        agents=[ALPHA, BETA, GAMMA],
        verdict=Verdict(summary="s", winner_id=winner, structured=structured),
        vote=VoteOutcome(rule="majority", votes=votes),
    )


def answered(replies: list[tuple[str, str, float | None]], decided: str | None) -> DebateState:
    contributions = [
        Contribution(
            agent_id=who, agent_role="r", type="proposal", content=text, metadata=ContributionMetadata(confidence=p)
        )
        for who, text, p in replies
    ]
    return DebateState(
        id="deb-answers",
        problem="q",
        status="completed",
        agents=[ALPHA, BETA],
        rounds=[DebateRound(round_number=1, contributions=contributions)],
        answer_tally=AnswerTally(answer=decided),
    )


def test_votes_are_held_against_the_verdicts_winner() -> None:
    state = voted(
        1,
        "agent-b",
        [
            Vote(voter_id="agent-a", choice_id="agent-b", confidence=80),  # right: (0.8 - 1)² = 0.04
            Vote(voter_id="agent-b", choice_id="agent-c", confidence=90),  # wrong: 0.81
            Vote(voter_id="agent-c", choice_id="agent-b"),  # no confidence: no forecast
        ],
    )
    forecasts = vote_forecasts(state)
    assert [(f.agent.id, f.probability, f.right) for f in forecasts] == [
        ("agent-a", 0.8, True),
        ("agent-b", 0.9, False),
    ]
    by_agent = compute_calibration([state], "agent")
    assert set(by_agent) == {"agent-a", "agent-b"}
    assert by_agent["agent-a"].brier == pytest.approx(0.04)
    assert by_agent["agent-b"].brier == pytest.approx(0.81)


@pytest.mark.parametrize(("winner", "structured"), [(None, True), ("agent-a", False)])
def test_no_winner_or_an_unparsed_verdict_judges_no_vote(winner: str | None, structured: bool) -> None:
    state = voted(2, winner, [Vote(voter_id="agent-a", choice_id="agent-a", confidence=70)], structured=structured)
    assert debate_forecasts(state) == []


def test_adaptive_answers_are_held_against_the_decided_answer() -> None:
    state = answered(
        [
            ("agent-a", "Work.\n\\boxed{42}", 0.9),  # right: 0.01
            ("agent-b", "Work.\n\\boxed{41}", 0.6),  # wrong: 0.36
            ("agent-b", "no answer stated here", 0.99),  # no answer: no forecast
            ("agent-a", "\\boxed{42}", None),  # no confidence: no forecast
        ],
        "42",
    )
    assert [(f.agent.id, f.right) for f in answer_forecasts(state)] == [("agent-a", True), ("agent-b", False)]
    assert answer_forecasts(state.model_copy(update={"answer_tally": AnswerTally()})) == []


def test_calibration_by_model_pools_the_agents_on_one_model() -> None:
    votes = [
        Vote(voter_id="agent-a", choice_id="agent-b", confidence=100),  # gpt-a right: 0
        Vote(voter_id="agent-c", choice_id="agent-a", confidence=50),  # gpt-a wrong: 0.25
        Vote(voter_id="agent-b", choice_id="agent-b", confidence=60),  # claude-b right: 0.16
    ]
    by_model = compute_calibration([voted(3, "agent-b", votes)], "model")
    assert by_model["openai/gpt-a"].forecasts == 2
    assert by_model["openai/gpt-a"].brier == pytest.approx(0.125)
    assert by_model["anthropic/claude-b"].brier == pytest.approx(0.16)


def test_every_debate_adds_to_the_score() -> None:
    one = voted(4, "agent-a", [Vote(voter_id="agent-a", choice_id="agent-a", confidence=90)])  # 0.01
    two = voted(5, "agent-b", [Vote(voter_id="agent-a", choice_id="agent-a", confidence=90)])  # 0.81
    first = compute_calibration([one], "agent")["agent-a"]
    both = compute_calibration([one, two], "agent")["agent-a"]
    assert (first.forecasts, first.brier) == (1, pytest.approx(0.01))
    assert (both.forecasts, both.brier) == (2, pytest.approx(0.41))
