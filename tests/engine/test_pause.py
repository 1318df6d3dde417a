"""Pause: the calls in flight finish and are saved, no new call starts, the debate stops as ``paused`` and resumes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from dialectic.core import events as ev
from dialectic.core.domain import DebateState
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.engine.pausing import PauseRequested, RunControl
from dialectic.llm.base import Completion, CompletionRequest
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import ScriptedProvider
from dialectic.store.base import DebateStore
from dialectic.testing.harness import FAST_RETRY, make_config


class GatedProvider(ScriptedProvider):
    """The scripted model, holding the calls ``held`` picks until :attr:`release` is set."""

    def __init__(self, held: Callable[[CompletionRequest], bool], expected: int) -> None:
        super().__init__()
        self._held = held
        self._expected = expected
        self.release = asyncio.Event()
        self.all_held = asyncio.Event()
        self.holding = 0

    async def complete(self, request: CompletionRequest) -> Completion:
        if self._held(request):
            self.holding += 1
            if self.holding == self._expected:
                self.all_held.set()
            await self.release.wait()
        return await super().complete(request)


def engine_for(store: DebateStore, provider: ScriptedProvider, events: list[ev.Event] | None = None) -> DebateEngine:
    bus = ev.EventBus()
    if events is not None:
        bus.subscribe(events.append)
    return DebateEngine(store, ProviderPool(overrides={"scripted": provider}), bus, retry=FAST_RETRY)


def request() -> DebateRequest:
    return DebateRequest(problem="Design a rate limiter", config=make_config(agents=2, rounds=2), config_dir=Path("."))


def tags(provider: ScriptedProvider, kind: str) -> list[str]:
    return [c.tag for c in provider.calls if c.tag.startswith(kind)]


def test_pausing_lets_the_calls_in_flight_finish_and_starts_no_other(store: DebateStore) -> None:
    provider = GatedProvider(lambda r: r.tag.startswith("proposal"), expected=2)
    control = RunControl()

    async def scenario() -> DebateState:
        run = asyncio.ensure_future(engine_for(store, provider).start(request(), control=control))
        await provider.all_held.wait()
        control.request_pause()
        provider.release.set()
        return await run

    state = asyncio.run(scenario())
    assert state.status == "paused"
    assert store.load(state.id).status == "paused"
    assert [c.type for c in state.round(1).contributions] == ["proposal", "proposal"]
    assert tags(provider, "critique") == [] and len(tags(provider, "proposal")) == 2
    assert control.in_flight == 0

    resumed_with = ScriptedProvider()
    events: list[ev.Event] = []
    done = asyncio.run(engine_for(store, resumed_with, events).resume(state.id))
    assert done.status == "completed"
    assert tags(resumed_with, "proposal") == []  # saved before the pause: never asked for again
    assert len(tags(resumed_with, "critique")) == 4
    assert [e.resumed for e in events if isinstance(e, ev.DebateStarted)] == [True]


def test_a_pause_between_steps_stops_before_any_call(store: DebateStore) -> None:
    provider = ScriptedProvider()
    control = RunControl()
    events: list[ev.Event] = []
    engine = engine_for(store, provider, events)
    engine.bus.subscribe(lambda e: control.request_pause() if isinstance(e, ev.RoundBegan) else None)
    state = asyncio.run(engine.start(request(), control=control))
    assert state.status == "paused" and provider.calls == []
    assert state.next_node == "summarization" and state.current_round == 1
    assert [type(e) for e in events][-1] is ev.DebatePaused
    done = asyncio.run(engine_for(store, ScriptedProvider()).resume(state.id))
    assert done.status == "completed" and done.final_solution is not None


def test_a_paused_debate_is_listed_as_paused(store: DebateStore) -> None:
    control = RunControl()
    engine = engine_for(store, ScriptedProvider())
    engine.bus.subscribe(lambda e: control.request_pause() if isinstance(e, ev.RoundBegan) else None)
    state = asyncio.run(engine.start(request(), control=control))
    assert [(d.id, d.status) for d in store.list(status="paused")] == [(state.id, "paused")]


def hold_one_proposal(request: CompletionRequest) -> bool:
    return request.tag == "proposal:architect"


def test_a_pause_waits_for_the_call_still_in_flight(store: DebateStore) -> None:
    provider = GatedProvider(hold_one_proposal, expected=1)
    control = RunControl()
    events: list[ev.Event] = []
    pausing = asyncio.Event()

    async def scenario() -> DebateState:
        engine = engine_for(store, provider, events)
        engine.bus.subscribe(lambda e: pausing.set() if isinstance(e, ev.DebatePausing) else None)
        run = asyncio.ensure_future(engine.start(request(), control=control))
        await provider.all_held.wait()
        control.request_pause()
        await pausing.wait()  # the other proposal is in; the critique of it was refused
        assert not run.done()
        provider.release.set()
        return await run

    state = asyncio.run(scenario())
    assert state.status == "paused"
    assert sorted(c.agent_id for c in state.round(1).contributions) == ["agent-architect", "agent-performance"]
    assert tags(provider, "critique") == []
    assert [e.in_flight for e in events if isinstance(e, ev.DebatePausing)] == [1]


def test_cancelling_while_pausing_interrupts(store: DebateStore) -> None:
    provider = GatedProvider(hold_one_proposal, expected=1)
    control = RunControl()
    events: list[ev.Event] = []
    pausing = asyncio.Event()

    async def scenario() -> str:
        engine = engine_for(store, provider, events)
        engine.bus.subscribe(lambda e: pausing.set() if isinstance(e, ev.DebatePausing) else None)
        run = asyncio.ensure_future(engine.start(request(), control=control))
        await provider.all_held.wait()
        control.request_pause()
        await pausing.wait()
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        started = next(e for e in events if isinstance(e, ev.DebateStarted))
        return started.debate_id

    debate_id = asyncio.run(scenario())
    assert store.load(debate_id).status == "interrupted"
    assert not any(isinstance(e, ev.DebatePaused) for e in events)
    assert any(isinstance(e, ev.DebateInterrupted) for e in events)


def test_a_pausing_control_refuses_new_calls_and_counts_those_in_flight() -> None:
    async def scenario() -> None:
        control = RunControl()
        control.begin_call()
        idle = asyncio.ensure_future(control.idle())
        control.request_pause()
        with pytest.raises(PauseRequested):
            control.begin_call()
        await asyncio.sleep(0)
        assert not idle.done() and control.in_flight == 1
        control.end_call()
        await idle

    asyncio.run(scenario())


def test_a_pause_can_be_taken_back_until_it_takes_effect() -> None:
    control = RunControl()
    assert not control.withdraw_pause()  # nothing asked
    control.request_pause()
    assert control.withdraw_pause() and not control.pausing
    control.begin_call()  # the run goes on
    control.end_call()
    control.request_pause()
    with pytest.raises(PauseRequested):
        control.begin_call()  # refused: the pause has taken effect
    assert not control.withdraw_pause() and control.pausing
