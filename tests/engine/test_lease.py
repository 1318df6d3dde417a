"""One runner per debate: the engine holds the debate's lease for the whole run.

A gated scripted model holds a run at its first call, so the tests act while the lease is
held; a virtual clock drives the heartbeat, so no test waits for real time.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dialectic.core import events as ev
from dialectic.core.config import SystemConfig
from dialectic.core.domain import DebateState, utc_now
from dialectic.core.errors import (
    DebateBusyError,
    DebateStateError,
    LeaseLostError,
    ProviderAuthError,
    ProviderError,
    TooFewAgentsError,
)
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.engine.lease import LeasePolicy
from dialectic.llm.base import Completion, CompletionRequest
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import ScriptedProvider, ScriptedReply, default_reply
from dialectic.store.base import DebateStore
from dialectic.store.leases import LeaseOwner
from dialectic.testing.harness import FAST_RETRY, make_config

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
TTL = timedelta(seconds=30)


class GatedProvider(ScriptedProvider):
    """The scripted model, but every call waits for ``gate``; ``called`` is set by the first call."""

    def __init__(self, responder: Callable[[CompletionRequest], ScriptedReply | Exception] | None = None) -> None:
        super().__init__(responder)
        self.gate = asyncio.Event()
        self.called = asyncio.Event()

    async def complete(self, request: CompletionRequest) -> Completion:
        self.called.set()
        await self.gate.wait()
        return await super().complete(request)


class VirtualClock:
    """Wall-clock time and sleeps that move only when the test advances them."""

    def __init__(self) -> None:
        self.now = T0
        self._sleepers: list[tuple[datetime, asyncio.Future[None]]] = []

    def time(self) -> datetime:
        return self.now

    async def sleep(self, seconds: float) -> None:
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers.append((self.now + timedelta(seconds=seconds), woken))
        await woken

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)
        due = [future for wake_at, future in self._sleepers if wake_at <= self.now]
        self._sleepers = [(wake_at, future) for wake_at, future in self._sleepers if wake_at > self.now]
        for future in due:
            if not future.done():
                future.set_result(None)


async def until(condition: Callable[[], bool]) -> None:
    """Let the event loop run until ``condition`` holds (bounded, so a broken test fails instead of hanging)."""
    for _ in range(10_000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the condition never came true")


def heartbeat(store: DebateStore, debate_id: str) -> datetime | None:
    lease = store.read_lease(debate_id)
    return lease.heartbeat_at if lease is not None else None


def never_gone(owner: LeaseOwner) -> bool:
    return False


def engine(
    store: DebateStore, provider: ScriptedProvider, events: list[ev.Event] | None = None, **policy: object
) -> DebateEngine:
    bus = ev.EventBus()
    if events is not None:
        bus.subscribe(events.append)
    lease = LeasePolicy(**policy)
    return DebateEngine(store, ProviderPool(overrides={"scripted": provider}), bus, retry=FAST_RETRY, lease=lease)


def request(config: SystemConfig | None = None, *, clarify: bool = False) -> DebateRequest:
    return DebateRequest(
        problem="Design a rate limiter", config=config or make_config(agents=2), config_dir=Path("."), clarify=clarify
    )


def only_debate(store: DebateStore) -> str:
    (listing,) = store.list()
    return listing.id


def test_a_second_runner_is_refused_while_the_first_holds_the_lease(store: DebateStore) -> None:
    gated = GatedProvider()

    async def scenario() -> DebateState:
        first = asyncio.create_task(engine(store, gated).start(request()))
        await gated.called.wait()
        debate_id = only_debate(store)
        saved = store.changes(debate_id)
        second = ScriptedProvider()
        with pytest.raises(DebateBusyError) as refused:
            await engine(store, second).resume(debate_id)
        assert f"is being run by pid {os.getpid()} on host {socket.gethostname()} since " in str(refused.value)
        assert refused.value.exit_code == 2
        assert store.changes(debate_id) == saved  # nothing appended by the refused runner
        assert second.calls == []
        gated.gate.set()
        return await first

    done = asyncio.run(scenario())
    assert done.status == "completed"
    assert len(done.all_contributions()) == 2 + 2 + 2
    lease = store.read_lease(done.id)
    assert lease is not None and lease.released_at is not None
    with pytest.raises(DebateStateError, match="already completed"):
        asyncio.run(engine(store, ScriptedProvider()).resume(done.id))


def asking(request: CompletionRequest) -> ScriptedReply:
    if request.tag.startswith("clarify"):
        value = {"questions": [{"text": "How many requests per second?"}]}
        return ScriptedReply(text=json.dumps(value), structured=value)
    return default_reply(request)


def refusing(request: CompletionRequest) -> ScriptedReply | Exception:
    return ProviderAuthError("scripted: 401", provider="scripted", status_code=401)


@pytest.mark.parametrize("outcome", ["completed", "suspended", "failed", "interrupted"])
def test_the_lease_is_released_on_every_way_out(store: DebateStore, outcome: str) -> None:
    gated = GatedProvider(asking if outcome == "suspended" else refusing if outcome == "failed" else None)

    async def scenario() -> None:
        run = asyncio.create_task(engine(store, gated).start(request(clarify=outcome == "suspended")))
        await gated.called.wait()
        if outcome == "interrupted":
            run.cancel()
        else:
            gated.gate.set()
        try:
            await run
        except (asyncio.CancelledError, ProviderError):  # every agent refused: too few agents remain
            pass

    asyncio.run(scenario())
    debate_id = only_debate(store)
    assert store.load(debate_id).status == outcome
    lease = store.read_lease(debate_id)
    assert lease is not None and lease.released_at is not None
    assert lease.owner.pid == os.getpid()


def test_the_heartbeat_renews_the_lease(store: DebateStore) -> None:
    clock, gated = VirtualClock(), GatedProvider()

    async def scenario() -> DebateState:
        run_engine = engine(store, gated, ttl_s=30, renew_every_s=10, clock=clock.time, sleep=clock.sleep)
        run = asyncio.create_task(run_engine.start(request()))
        await gated.called.wait()
        debate_id = only_debate(store)
        for _ in range(4):
            clock.advance(10)
            await until(lambda: heartbeat(store, debate_id) == clock.now)
        lease = store.read_lease(debate_id)
        assert lease is not None and lease.expires_at == T0 + timedelta(seconds=70)
        assert (lease.acquired_at, lease.released_at) == (T0, None)
        gated.gate.set()
        return await run

    done = asyncio.run(scenario())
    assert done.status == "completed"
    lease = store.read_lease(done.id)
    assert lease is not None and lease.released_at == T0 + timedelta(seconds=40)


INTRUDER = LeaseOwner(id="intruder", pid=4242, host="elsewhere")


def test_a_run_whose_lease_was_taken_over_stops_at_the_next_heartbeat_without_writing(store: DebateStore) -> None:
    clock, gated = VirtualClock(), GatedProvider()
    events: list[ev.Event] = []

    async def scenario() -> None:
        run_engine = engine(store, gated, events, ttl_s=30, renew_every_s=10, clock=clock.time, sleep=clock.sleep)
        run = asyncio.create_task(run_engine.start(request()))
        await gated.called.wait()
        debate_id = only_debate(store)
        # say this process was frozen past its lease's expiry, and another process took the debate over
        store.acquire_lease(debate_id, INTRUDER, now=T0 + TTL, ttl=TTL, owner_gone=never_gone)
        saved = store.changes(debate_id)
        clock.advance(10)
        with pytest.raises(LeaseLostError, match="pid 4242 on host elsewhere took it over") as lost:
            await run
        assert lost.value.exit_code == 2
        assert store.changes(debate_id) == saved
        assert getattr(store.read_lease(debate_id), "owner", None) == INTRUDER

    asyncio.run(scenario())
    assert not any(isinstance(e, ev.DebateInterrupted | ev.DebateFailed | ev.DebateCompleted) for e in events)


def test_writes_after_a_takeover_are_refused_even_before_a_heartbeat_notices(store: DebateStore) -> None:
    clock, gated = VirtualClock(), GatedProvider()

    async def scenario() -> None:
        run_engine = engine(store, gated, clock=clock.time, sleep=clock.sleep)
        run = asyncio.create_task(run_engine.start(request()))
        await gated.called.wait()
        debate_id = only_debate(store)
        store.acquire_lease(debate_id, INTRUDER, now=T0 + TTL, ttl=TTL, owner_gone=never_gone)
        saved = store.changes(debate_id)
        gated.gate.set()  # the proposals arrive, and their saves meet the fence
        with pytest.raises(LeaseLostError, match="took it over"):
            await run
        assert store.changes(debate_id) == saved

    asyncio.run(scenario())


def test_resume_takes_over_a_crashed_runs_lease_and_says_so(store: DebateStore) -> None:
    with pytest.raises(TooFewAgentsError):
        asyncio.run(engine(store, ScriptedProvider(refusing)).start(request()))
    debate_id = only_debate(store)
    crashed = LeaseOwner(id="crashed-run", pid=999_999, host=socket.gethostname())
    store.acquire_lease(debate_id, crashed, now=utc_now(), ttl=TTL, owner_gone=never_gone)

    with pytest.raises(DebateBusyError):  # as long as its process looks alive, the lease stands
        asyncio.run(engine(store, ScriptedProvider(), owner_gone=never_gone).resume(debate_id))

    events: list[ev.Event] = []
    resumed = engine(store, ScriptedProvider(), events, owner_gone=lambda owner: owner.id == crashed.id)
    done = asyncio.run(resumed.resume(debate_id))
    assert done.status == "completed"
    warnings = [e.message for e in events if isinstance(e, ev.Warning) and "took over" in e.message]
    assert len(warnings) == 1
    assert f"took over debate {debate_id} from pid 999999 on host {socket.gethostname()}" in warnings[0]
    assert "that process is gone" in warnings[0]
    started = next(i for i, e in enumerate(events) if isinstance(e, ev.DebateStarted))
    assert events.index(next(e for e in events if isinstance(e, ev.Warning))) > started


def test_lease_policy_rejects_a_heartbeat_slower_than_the_time_to_live() -> None:
    with pytest.raises(ValueError, match="renew_every_s"):
        LeasePolicy(ttl_s=10, renew_every_s=10)
