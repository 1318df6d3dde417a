"""Token deltas: a watched debate streams every free-text reply through the event bus; the saved text is whole."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from dialectic.core import events as ev
from dialectic.core.domain import DebateState
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.llm.base import CompletionRequest, Delta
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import ScriptedProvider
from dialectic.store.base import DebateStore
from dialectic.testing.harness import FAST_RETRY, make_config

CallKey = tuple[str, int | None, str | None, str | None]


class CountingProvider(ScriptedProvider):
    def __init__(self) -> None:
        super().__init__()
        self.streams = 0

    async def stream(self, request: CompletionRequest) -> AsyncIterator[Delta]:
        self.streams += 1
        async for delta in super().stream(request):
            yield delta


def run_debate(
    store: DebateStore, provider: ScriptedProvider, *, deltas: bool, **debate: Any
) -> tuple[DebateState, list[ev.Event]]:
    seen: list[ev.Event] = []
    bus = ev.EventBus()
    bus.subscribe(seen.append, deltas=deltas)
    engine = DebateEngine(store, ProviderPool(overrides={"scripted": provider}), bus, retry=FAST_RETRY)
    config = make_config(agents=2, rounds=2, **debate)
    request = DebateRequest(problem="Design a rate limiter", config=config, config_dir=Path("."))
    return asyncio.run(engine.start(request)), seen


def assembled(events: list[ev.Event]) -> dict[CallKey, str]:
    """Each call's streamed text, every piece written at its offset."""
    texts: dict[CallKey, str] = {}
    for event in events:
        if isinstance(event, ev.TokenDelta):
            key = (event.agent_id, event.round_number, event.kind, event.target_id)
            texts[key] = texts.get(key, "")[: event.offset] + event.text
    return texts


def test_every_contribution_streams_and_the_saved_text_is_what_streamed(store: DebateStore) -> None:
    state, events = run_debate(store, ScriptedProvider(), deltas=True)
    assert state.status == "completed"
    texts = assembled(events)
    contributions = [(r.round_number, c) for r in state.rounds for c in r.contributions if not c.metadata.carried_over]
    assert len(contributions) == 2 + 2 + 2 + 2 + 2  # proposals (round 1), critiques and refinements of both rounds
    for number, c in contributions:
        assert texts[(c.agent_id, number, c.type, c.target_agent_id)] == c.content
    first = next(e for e in events if isinstance(e, ev.TokenDelta))
    assert first.debate_id == state.id and first.agent_name in {"Architect", "Performance"}


def test_a_delta_comes_between_its_calls_start_and_end(store: DebateStore) -> None:
    _, events = run_debate(store, ScriptedProvider(), deltas=True)
    open_calls: set[CallKey] = set()
    for event in events:
        if isinstance(event, ev.AgentStarted):
            open_calls.add((event.agent_id, event.round_number, event.kind, event.target_id))
        elif isinstance(event, ev.AgentCompleted):
            open_calls.discard((event.agent_id, event.round_number, event.kind, event.target_id))
        elif isinstance(event, ev.TokenDelta):
            assert (event.agent_id, event.round_number, event.kind, event.target_id) in open_calls


def test_nothing_streams_when_no_subscriber_wants_deltas(store: DebateStore) -> None:
    provider = CountingProvider()
    state, events = run_debate(store, provider, deltas=False)
    assert state.status == "completed"
    assert provider.streams == 0
    assert not any(isinstance(e, ev.TokenDelta) for e in events)


def test_a_subscriber_without_deltas_beside_one_with_gets_none() -> None:
    bus = ev.EventBus()
    plain: list[ev.Event] = []
    watching: list[ev.Event] = []
    bus.subscribe(plain.append)
    assert not bus.wants_deltas
    unsubscribe = bus.subscribe(watching.append, deltas=True)
    assert bus.wants_deltas
    delta = ev.TokenDelta("deb-1", "a", "A", 1, "proposal", None, 0, "hi")
    bus.publish(delta)
    bus.publish(ev.Warning("deb-1", "careful"))
    assert plain == [ev.Warning("deb-1", "careful")]
    assert watching == [delta, ev.Warning("deb-1", "careful")]
    unsubscribe()
    assert not bus.wants_deltas
