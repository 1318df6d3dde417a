"""Graceful degradation: an agent whose calls keep failing is dropped and the debate goes on."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from dialectic.core import events as ev
from dialectic.core.errors import (
    BadRequest,
    ContextWindowExceeded,
    ModelNotFound,
    ProviderAuthError,
    ProviderError,
    ProviderUnavailable,
    RateLimited,
    RetriesExhausted,
    TooFewAgentsError,
)
from dialectic.engine.dropping import resume_hint
from dialectic.llm.base import CompletionRequest
from dialectic.llm.retry import RetryPolicy
from dialectic.llm.scripted import ScriptedProvider, ScriptedReply, default_reply
from dialectic.testing.harness import Harness, make_config


def failing(prefixes: tuple[str, ...]) -> Callable[[CompletionRequest], ScriptedReply | Exception]:
    def respond(request: CompletionRequest) -> ScriptedReply | Exception:
        if request.tag.startswith(prefixes):
            return ProviderUnavailable("scripted: endpoint down", provider="scripted", status_code=503)
        return default_reply(request)

    return respond


def test_an_agent_whose_endpoint_is_down_is_dropped_and_the_debate_completes(harness: Callable[..., Harness]) -> None:
    down = tuple(f"{kind}:performance" for kind in ("proposal", "critique", "refinement", "summary"))
    h = harness(failing(down))
    state = h.start(make_config(agents=3, rounds=2))
    assert state.status == "completed" and state.final_solution is not None
    assert [(d.agent_id, d.round_number) for d in state.dropped] == [("agent-performance", 1)]
    assert "endpoint down" in state.dropped[0].reason
    round1 = state.round(1)
    failed = [(c.type, c.agent_id) for c in round1.contributions if not c.ok]
    assert ("proposal", "agent-performance") in failed
    assert {agent for _, agent in failed} == {"agent-performance"}
    for rnd in state.rounds:  # nobody critiques the dropped agent, and it critiques nobody
        assert all("agent-performance" not in (c.agent_id, c.target_agent_id) for c in rnd.contributions if c.ok)
        assert len(rnd.of_type("refinement")) == 2 and len(rnd.of_type("critique")) == 2
    assert len(state.rounds) == 2
    dropped_events = h.of(ev.ParticipantRemoved)
    assert len(dropped_events) == 1 and dropped_events[0].remaining == 2


def test_an_agent_failing_at_refinement_keeps_its_earlier_work(harness: Callable[..., Harness]) -> None:
    h = harness(failing(("refinement:kiss",)))
    state = h.start(make_config(agents=3, rounds=2))
    assert state.status == "completed"
    assert [(d.agent_id, d.round_number) for d in state.dropped] == [("agent-kiss", 1)]
    round1, round2 = state.round(1), state.round(2)
    assert round1.find("proposal", "agent-kiss") is not None
    assert len([c for c in round1.of_type("critique") if c.agent_id == "agent-kiss"]) == 2
    assert all(c.agent_id != "agent-kiss" for c in round2.contributions)


def test_below_min_agents_the_debate_fails_and_resume_gives_the_dropped_another_chance(
    harness: Callable[..., Harness],
) -> None:
    h = harness(failing(("proposal:architect", "proposal:performance")))
    with pytest.raises(TooFewAgentsError) as raised:
        h.start(make_config(agents=3, rounds=1))
    assert raised.value.exit_code == 3
    debate_id = raised.value.debate_id or ""
    saved = h.store.load(debate_id)
    assert saved.status == "failed" and "minAgents" in (saved.error or "")

    recovered = ScriptedProvider()
    done = h.resume(debate_id, provider=recovered)
    assert done.status == "completed" and done.dropped == []
    assert {c.agent_id for c in done.round(1).of_type("refinement")} == {
        "agent-architect",
        "agent-performance",
        "agent-kiss",
    }


def test_min_agents_is_configurable(harness: Callable[..., Harness]) -> None:
    h = harness(failing(("proposal:performance", "proposal:kiss")))
    state = h.start(make_config(agents=3, rounds=1, minAgents=1))
    assert state.status == "completed"
    assert sorted(d.agent_id for d in state.dropped) == ["agent-kiss", "agent-performance"]
    ok = [c for c in state.round(1).contributions if c.ok]
    assert [c.type for c in ok if c.agent_id == "agent-architect"] == ["proposal", "refinement"]
    # critiques the dropped agents finished before their own proposals failed are kept
    assert all(
        c.type == "critique" and c.target_agent_id == "agent-architect" for c in ok if c.agent_id != "agent-architect"
    )


def test_a_failing_judge_still_fails_the_debate(harness: Callable[..., Harness]) -> None:
    h = harness(failing(("synthesis",)))
    with pytest.raises(RetriesExhausted) as raised:
        h.start(make_config(agents=2, rounds=1))
    assert raised.value.exit_code == 3
    saved = h.store.load(h.store.list()[0].id)
    assert saved.status == "failed" and saved.next_node == "synthesis"


@pytest.mark.parametrize("fault_rate", [0.2, 0.4])
def test_debates_complete_under_injected_faults(harness: Callable[..., Harness], fault_rate: float) -> None:
    """Ten debates at 20% and 40% of calls failing transiently (500s and 429s) all complete."""
    completed, contributions = 0, []
    for seed in range(10):
        rng = random.Random(seed)

        def respond(request: CompletionRequest, rng: random.Random = rng) -> ScriptedReply | Exception:
            roll = rng.random()
            if roll < fault_rate / 2:
                return ProviderUnavailable("scripted: 500", provider="scripted", status_code=500)
            if roll < fault_rate:
                return RateLimited("scripted: 429", provider="scripted", status_code=429, retry_after=0.0)
            return default_reply(request)

        h = harness(respond)
        retry = RetryPolicy(max_attempts=4, base_delay_s=0.0005, max_delay_s=0.001, jitter_s=0.0)
        engine = h.engine()
        engine.retry = retry
        from pathlib import Path

        from dialectic.engine import DebateRequest
        from dialectic.testing.harness import run

        state = run(
            engine.start(DebateRequest(problem="P", config=make_config(agents=3, rounds=2), config_dir=Path(".")))
        )
        completed += state.status == "completed"
        if not state.dropped:  # every contribution of a clean run is there, saved or recorded as failed
            contributions.append(len(state.all_contributions()))
    assert completed == 10
    assert contributions and all(count == 24 for count in contributions)


@pytest.mark.parametrize(
    ("error", "says"),
    [
        (ProviderUnavailable("down", status_code=503), "once the provider works again"),
        (ContextWindowExceeded("too long", window=1500), "only with a larger context window"),
        (ProviderAuthError("no"), "API key is fixed"),
        (ModelNotFound("no such model"), "model exists"),
        (BadRequest("bad"), "will fail the same way"),
    ],
)
def test_a_failure_names_whether_resuming_can_help(error: ProviderError, says: str) -> None:
    assert says in resume_hint(error)
