"""A seat a person plays, from Python: built with ``Agent``, kept by ``provider=``, and ``submit_turn``'s checks."""

from __future__ import annotations

import pytest

from dialectic import Agent, Debate
from dialectic.core.errors import DebateStateError, InvalidArgumentsError


def test_a_human_seat_keeps_its_provider_and_its_fallback() -> None:
    debate = Debate(
        agents=[
            Agent("architect"),
            Agent("security", name="Alice", provider="human", deadline=60_000, fallback={"provider": "scripted"}),
        ],
        provider="scripted",
        rounds=1,
        store=":memory:",
    )
    alice = debate.config.agents[1]
    assert (alice.provider, alice.model, alice.deadline) == ("human", "person", 60_000)
    assert alice.fallback is not None and alice.fallback.provider == "scripted"
    assert debate.config.agents[0].provider == "scripted"  # a new agent copies a model seat, not the person


def test_submit_turn_names_what_is_wrong() -> None:
    debate = Debate(
        agents=[Agent("architect"), Agent("security", name="Alice", provider="human")],
        provider="scripted",
        format="free-form",
        rounds=1,
        store=":memory:",
    )
    waiting = debate.run_sync("Design a rate limiter")
    assert waiting.status == "suspended" and [t.key for t in waiting.turns] == ["agent-security:response:1"]
    with pytest.raises(InvalidArgumentsError, match="empty"):
        debate.submit_turn_sync(waiting.id, " ")
    with pytest.raises(InvalidArgumentsError, match="'nope' is not a human turn"):
        debate.submit_turn_sync(waiting.id, "text", key="nope")
    done = debate.submit_turn_sync(waiting.id, "Buckets per key.", key="agent-security")
    assert done.status == "completed" and done.turns == []
    assert "(human)" in done.report()
    with pytest.raises(DebateStateError, match="already completed"):
        debate.submit_turn_sync(waiting.id, "Once more.")
