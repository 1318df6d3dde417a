"""The debate store going away mid-debate: a real Postgres server stopped and started again (issue 52, item 6).

The cluster is a throwaway one (:mod:`tests.postgres_cluster`); the debate runs against the fake
OpenAI server, whose responder stops Postgres at a given call (a count, not a time). The first write
that finds the store unreachable lets a thread start it again; the debate waits for it and goes on.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dialectic.core import events as ev
from dialectic.core.changes import Change, DebateCreated, StatusChanged
from dialectic.core.config import SystemConfig
from dialectic.core.domain import DebateState, utc_now
from dialectic.core.errors import ConfigError, StoreError
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.engine.lease import LeasePolicy
from dialectic.engine.store_outage import patient_append
from dialectic.llm.base import CompletionRequest
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import Script
from dialectic.store.leases import owner_process_gone, shown_status
from dialectic.store.memory import MemoryStore
from dialectic.testing.fake_server import FakeLLMServer
from dialectic.testing.harness import FAST_RETRY, scripted_judge
from tests.postgres_cluster import Cluster, Unavailable, controlled_cluster

STOP_AT_CALL = 8
"""The call during which Postgres is stopped: round 1's critiques are under way."""


@pytest.fixture
def own_cluster() -> Iterator[Cluster]:
    """A cluster of this test's own: it is stopped and started, so the session's shared one is not used."""
    try:
        with controlled_cluster() as running:
            yield running
    except Unavailable as why:
        if os.environ.get("DIALECTIC_REQUIRE_POSTGRES"):
            pytest.fail(f"DIALECTIC_REQUIRE_POSTGRES is set, but {why}")
        pytest.skip(str(why))


def watched_store(url: str, outage: threading.Event) -> Any:
    """A Postgres store that sets ``outage`` when a write finds it unreachable."""
    from dialectic.store.postgres import PostgresStore

    class Watched(PostgresStore):
        def append(self, debate_id: str, *changes: Change, holder: str | None = None) -> int:
            try:
                return super().append(debate_id, *changes, holder=holder)
            except StoreError as error:
                if error.unreachable:
                    outage.set()
                raise

    return Watched(url, timeout=2)


def stopping_at_call(cluster: Cluster, number: int) -> Callable[[CompletionRequest], Script]:
    """The scripted judge's replies, with Postgres stopped as call ``number`` is answered: every connection
    is cut, and the call itself is still answered."""
    judge = scripted_judge()
    served = itertools.count(1)

    def respond(request: CompletionRequest) -> Script:
        if next(served) == number:
            cluster.stop()
        return judge(request)

    return respond


def config(base_url: str) -> SystemConfig:
    endpoint = {"provider": "openai", "baseUrl": base_url, "model": "m"}
    roles = ("architect", "performance", "kiss")
    return SystemConfig.model_validate(
        {
            "agents": [{"id": f"agent-{r}", "name": r.title(), "role": r, **endpoint} for r in roles],
            "judge": {"id": "judge", "name": "Judge", "role": "generalist", **endpoint},
            "debate": {"rounds": 2},
        }
    )


def test_postgres_stopped_mid_debate_and_started_again_the_debate_waits_and_completes(own_cluster: Cluster) -> None:
    outage = threading.Event()
    store = watched_store(own_cluster.url, outage)
    respond = stopping_at_call(own_cluster, STOP_AT_CALL)

    def restart_when_missed() -> None:
        outage.wait()
        own_cluster.start()

    restarter = threading.Thread(target=restart_when_missed, daemon=True)
    restarter.start()
    bus = ev.EventBus()
    warnings: list[str] = []
    bus.subscribe(lambda e: warnings.append(e.message) if isinstance(e, ev.Warning) else None)
    try:
        with FakeLLMServer(respond) as fake:
            engine = DebateEngine(store, ProviderPool(env={"OPENAI_API_KEY": "test-key"}), bus, retry=FAST_RETRY)
            request = DebateRequest(
                problem="Design a rate limiter", config=config(fake.openai_base_url), config_dir=Path(".")
            )
            state = asyncio.run(engine.start(request))
            answered = fake.call_count
    finally:
        outage.set()
        restarter.join()
    assert outage.is_set() and any("waiting for it" in w for w in warnings)
    assert state.status == "completed" and not state.dropped
    saved = store.load(state.id)
    assert saved.status == "completed"
    # no call repeated: every call answered is one line of the ledger, and no contribution was saved twice
    assert sum(e.requests for e in saved.ledger) == answered
    keys = [(r.round_number, c.type, c.agent_id, c.target_agent_id) for r in saved.rounds for c in r.contributions]
    assert len(keys) == len(set(keys))
    store.close()


class Flaky(MemoryStore):
    """A store unreachable for its first ``misses`` appends; with ``lands``, the first append is kept although
    it reports the connection cut (a commit whose answer was lost)."""

    def __init__(self, misses: int, *, lands: bool = False) -> None:
        super().__init__()
        self.misses = misses
        self.lands = lands

    def append(self, debate_id: str, *changes: Change, holder: str | None = None) -> int:
        if self.misses > 0:
            self.misses -= 1
            if self.lands:
                self.lands = False
                super().append(debate_id, *changes, holder=holder)
            error = StoreError("cannot write to the debate store: server closed the connection unexpectedly")
            error.unreachable = True
            raise error
        return super().append(debate_id, *changes, holder=holder)


def _created(store: MemoryStore) -> tuple[str, list[Change]]:
    """A debate with one change saved, and the change to append next."""
    store.append("deb-1", DebateCreated(state=DebateState(id="deb-1", problem="P")))
    return "deb-1", [StatusChanged(status="running")]


def test_a_write_waits_out_a_short_outage_within_its_bound() -> None:
    clock = itertools.count()
    store = Flaky(0)
    debate_id, changes = _created(store)
    store.misses = 3
    pauses: list[float] = []
    told: list[StoreError] = []
    seq = patient_append(
        store, debate_id, changes, on_wait=told.append, sleep=pauses.append, clock=lambda: float(next(clock))
    )
    assert seq == 2 and len(store.changes(debate_id)) == 2
    assert len(told) == 1 and len(pauses) == 3 and pauses == sorted(pauses)


def test_a_write_whose_commit_landed_before_the_cut_is_not_appended_twice() -> None:
    store = Flaky(0)
    debate_id, changes = _created(store)
    store.misses, store.lands = 1, True
    seq = patient_append(store, debate_id, changes, sleep=lambda _: None)
    assert seq == 2 and len(store.changes(debate_id)) == 2


def test_an_outage_past_the_bound_stops_the_debate_saying_the_store_is_the_cause() -> None:
    clock = itertools.count(0, 10)
    store = Flaky(0)
    debate_id, changes = _created(store)
    store.misses = 100
    with pytest.raises(StoreError) as raised:
        patient_append(store, debate_id, changes, bound_s=60, sleep=lambda _: None, clock=lambda: float(next(clock)))
    assert "unreachable for 60 s" in raised.value.message and f"dialectic resume {debate_id}" in raised.value.message
    assert len(store.changes(debate_id)) == 1  # nothing half-written


def test_a_store_error_that_is_not_an_outage_is_not_waited_for() -> None:
    store = Flaky(0)
    debate_id, changes = _created(store)

    def refuse(*_: Any, **__: Any) -> int:
        raise StoreError("cannot write to the debate store: disk full")

    store.append = refuse  # type: ignore[method-assign]
    with pytest.raises(StoreError, match="disk full"):
        patient_append(store, debate_id, changes, sleep=lambda _: pytest.fail("waited"))


def test_postgres_away_past_the_bound_the_debate_stops_interrupted_and_resumes_with_no_saved_call_repeated(
    own_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DIALECTIC_STORE_OUTAGE_S", "1.5")  # the bound: past it, the run stops
    outage = threading.Event()
    store = watched_store(own_cluster.url, outage)
    respond = stopping_at_call(own_cluster, STOP_AT_CALL)

    bus = ev.EventBus()
    seen: list[ev.Event] = []
    bus.subscribe(seen.append)
    lease = LeasePolicy(ttl_s=1.0, renew_every_s=0.2)  # shorter than the bound, as the defaults are (30 s, 60 s)
    with FakeLLMServer(respond) as fake:
        engine = DebateEngine(
            store, ProviderPool(env={"OPENAI_API_KEY": "test-key"}), bus, retry=FAST_RETRY, lease=lease
        )
        request = DebateRequest(
            problem="Design a rate limiter", config=config(fake.openai_base_url), config_dir=Path(".")
        )
        with pytest.raises(StoreError) as stopped:
            asyncio.run(engine.start(request))
        assert outage.is_set() and stopped.value.unreachable
        assert "interrupted" in stopped.value.message and "dialectic resume" in stopped.value.message
        assert any(isinstance(e, ev.DebateInterrupted) for e in seen)
        assert not any(isinstance(e, ev.DebateFailed) for e in seen)
        debate_id = stopped.value.debate_id
        assert debate_id is not None
        before_resume = fake.call_count

        own_cluster.start()
        saved = load_once_back(store, debate_id)
        assert saved.status == "running"  # the status could not be saved while the store was away
        lease_now = store.read_lease(debate_id)
        assert shown_status(saved.status, lease_now, utc_now(), owner_process_gone) == "stale"  # nobody holds it
        saved_keys = contribution_keys(saved)
        saved_requests = sum(e.requests for e in saved.ledger)

        state = asyncio.run(engine.resume(debate_id))
        resumed_calls = fake.call_count - before_resume
    assert state.status == "completed"
    final = store.load(debate_id)
    assert final.status == "completed"
    keys = contribution_keys(final)
    assert len(keys) == len(set(keys)) and set(saved_keys) <= set(keys)
    # the resume made only calls whose results were not saved: every one is one new line of the ledger
    assert sum(e.requests for e in final.ledger) == saved_requests + resumed_calls
    assert resumed_calls <= fake.call_count - len(saved_keys)
    store.close()


def load_once_back(store: Any, debate_id: str, attempts: int = 30) -> DebateState:
    """The debate, read once the store's pool has connected again (each attempt waits up to its timeout)."""
    for _ in range(attempts - 1):
        try:
            return store.load(debate_id)  # type: ignore[no-any-return]
        except StoreError as error:
            assert error.unreachable, error.message
    return store.load(debate_id)  # type: ignore[no-any-return]


def contribution_keys(state: DebateState) -> list[tuple[object, ...]]:
    return [(r.round_number, c.type, c.agent_id, c.target_agent_id) for r in state.rounds for c in r.contributions]


def test_the_bound_comes_from_dialectic_store_outage_s(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = itertools.count(0, 1)
    store = Flaky(0)
    debate_id, changes = _created(store)
    store.misses = 100
    monkeypatch.setenv("DIALECTIC_STORE_OUTAGE_S", "5")
    pauses: list[float] = []
    with pytest.raises(StoreError) as raised:
        patient_append(store, debate_id, changes, sleep=pauses.append, clock=lambda: float(next(clock)))
    assert "unreachable for 5 s" in raised.value.message and raised.value.unreachable
    assert len(pauses) == 5  # one a tick of the clock, until the 5 s are past
    for bad in ("soon", "0", "-3", "inf"):
        monkeypatch.setenv("DIALECTIC_STORE_OUTAGE_S", bad)
        with pytest.raises(ConfigError, match="DIALECTIC_STORE_OUTAGE_S must be a positive number"):
            patient_append(store, debate_id, changes, sleep=pauses.append)
