"""Debate leases in the store: one runner per debate, on both backends, with an explicit clock."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dialectic.core.changes import DebateCreated, StatusChanged
from dialectic.core.domain import DebateState
from dialectic.core.errors import EXIT_INVALID_ARGS, DebateBusyError, DebateNotFoundError, LeaseLostError, StoreError
from dialectic.store import AbsentStore, DebateStore, SqliteStore, open_store
from dialectic.store.leases import (
    Lease,
    LeaseOwner,
    Standing,
    is_stale,
    owner_process_gone,
    process_start,
    shown_status,
    standing,
)

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
TTL = timedelta(seconds=30)
RUN_A = LeaseOwner(id="run-a", pid=101, host="host-a")
RUN_B = LeaseOwner(id="run-b", pid=202, host="host-b")


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def never_gone(owner: LeaseOwner) -> bool:
    return False


def created(debate_id: str = "deb-1") -> DebateCreated:
    state = DebateState(id=debate_id, problem="Design a rate limiter", status="running", created_at=T0, updated_at=T0)
    return DebateCreated(state=state, at=T0)


@pytest.fixture
def store(contract_store: DebateStore) -> DebateStore:
    """Each backend in turn (tests/conftest.py: SQLite, memory, Postgres)."""
    return contract_store


def take(store: DebateStore, owner: LeaseOwner, seconds: float, *, create: DebateCreated | None = None) -> Lease:
    """``owner`` acquires deb-1's lease ``seconds`` after T0 (no owner's process is ever gone)."""
    grant = store.acquire_lease("deb-1", owner, now=at(seconds), ttl=TTL, create=create, owner_gone=never_gone)
    return grant.lease


# --- acquire, renew, release, read: both backends ---------------------------------------------


def test_a_new_debate_is_created_with_its_lease_in_one_step(store: DebateStore) -> None:
    grant = store.acquire_lease("deb-1", RUN_A, now=T0, ttl=TTL, create=created(), owner_gone=never_gone)
    assert store.load("deb-1").status == "running"
    assert grant.replaced is None and grant.takeover_notice() is None
    assert store.read_lease("deb-1") == Lease("deb-1", RUN_A, acquired_at=T0, heartbeat_at=T0, expires_at=at(30))


def test_creating_with_a_lease_is_all_or_nothing(store: DebateStore) -> None:
    store.append("deb-1", created())
    with pytest.raises(StoreError, match="already exists"):
        take(store, RUN_A, 0, create=created())
    assert store.read_lease("deb-1") is None
    assert len(store.changes("deb-1")) == 1


def test_the_lease_of_an_unknown_debate(store: DebateStore) -> None:
    with pytest.raises(DebateNotFoundError):
        take(store, RUN_A, 0)
    assert store.read_lease("deb-1") is None
    assert not store.renew_lease("deb-1", RUN_A.id, now=T0)
    assert not store.release_lease("deb-1", RUN_A.id, now=T0)


def test_a_live_lease_refuses_a_second_runner_naming_the_owner(store: DebateStore) -> None:
    first = take(store, RUN_A, 0, create=created())
    with pytest.raises(DebateBusyError) as refused:
        take(store, RUN_B, 12)
    message = str(refused.value)
    assert "debate deb-1 is being run by pid 101 on host host-a since " in message
    assert T0.astimezone().strftime("%Y-%m-%d %H:%M:%S") in message
    assert "last heartbeat 12 s ago" in message
    assert refused.value.exit_code == EXIT_INVALID_ARGS
    assert store.read_lease("deb-1") == first


def test_renewal_is_for_the_owner_only_and_keeps_the_lease_live(store: DebateStore) -> None:
    take(store, RUN_A, 0, create=created())
    assert store.renew_lease("deb-1", RUN_A.id, now=at(20))
    assert not store.renew_lease("deb-1", RUN_B.id, now=at(21))
    lease = store.read_lease("deb-1")
    assert lease is not None and (lease.heartbeat_at, lease.expires_at) == (at(20), at(50))
    with pytest.raises(DebateBusyError):
        take(store, RUN_B, 45)  # past the first expiry, but the renewal moved it
    assert take(store, RUN_B, 50).owner == RUN_B


def test_release_is_for_the_owner_only_and_frees_the_debate_quietly(store: DebateStore) -> None:
    take(store, RUN_A, 0, create=created())
    assert not store.release_lease("deb-1", RUN_B.id, now=at(1))
    assert store.release_lease("deb-1", RUN_A.id, now=at(2))
    released = store.read_lease("deb-1")
    assert released is not None and released.released_at == at(2) and released.owner == RUN_A
    assert not store.renew_lease("deb-1", RUN_A.id, now=at(3))
    assert not store.release_lease("deb-1", RUN_A.id, now=at(3))
    grant = store.acquire_lease("deb-1", RUN_B, now=at(4), ttl=TTL, owner_gone=never_gone)
    assert grant.replaced is None and grant.takeover_notice() is None


def test_an_expired_lease_is_taken_over_with_a_notice(store: DebateStore) -> None:
    first = take(store, RUN_A, 0, create=created())
    grant = store.acquire_lease("deb-1", RUN_B, now=at(30), ttl=TTL, owner_gone=never_gone)
    assert grant.replaced == first and grant.replaced_standing is Standing.EXPIRED
    notice = grant.takeover_notice()
    assert notice is not None
    assert "took over debate deb-1 from pid 101 on host host-a" in notice
    assert "no heartbeat for 30 s (time-to-live 30 s)" in notice
    assert not store.renew_lease("deb-1", RUN_A.id, now=at(31))
    assert not store.release_lease("deb-1", RUN_A.id, now=at(31))
    assert store.read_lease("deb-1") == grant.lease


def test_the_lease_of_a_gone_owner_is_taken_over_at_once(store: DebateStore) -> None:
    take(store, RUN_A, 0, create=created())

    def a_is_gone(owner: LeaseOwner) -> bool:
        return owner.id == RUN_A.id

    grant = store.acquire_lease("deb-1", RUN_B, now=at(1), ttl=TTL, owner_gone=a_is_gone)
    assert grant.replaced_standing is Standing.OWNER_GONE
    assert "that process is gone" in (grant.takeover_notice() or "")
    assert store.read_lease("deb-1") == grant.lease


def test_appends_are_fenced_by_the_lease(store: DebateStore) -> None:
    take(store, RUN_A, 0, create=created())
    store.append("deb-1", StatusChanged(status="running", at=at(1)), holder=RUN_A.id)
    take(store, RUN_B, 40)
    with pytest.raises(LeaseLostError, match="pid 202 on host host-b took it over"):
        store.append("deb-1", StatusChanged(status="failed", at=at(41)), holder=RUN_A.id)
    assert len(store.changes("deb-1")) == 2
    store.append("deb-1", StatusChanged(status="completed", at=at(42)), holder=RUN_B.id)
    store.release_lease("deb-1", RUN_B.id, now=at(43))
    with pytest.raises(LeaseLostError, match="it was released"):
        store.append("deb-1", StatusChanged(status="failed", at=at(44)), holder=RUN_B.id)
    assert store.load("deb-1").status == "completed"


# --- SQLite and Postgres: the lease is shared by every process using the store ------------------


def test_the_lease_is_seen_through_another_connection(open_shared: Callable[[], DebateStore]) -> None:
    with open_shared() as first, open_shared() as second:
        lease = take(first, RUN_A, 0, create=created())
        assert second.read_lease("deb-1") == lease
        with pytest.raises(DebateBusyError):
            take(second, RUN_B, 1)
        with pytest.raises(LeaseLostError):
            second.append("deb-1", StatusChanged(status="failed", at=at(2)), holder=RUN_B.id)
        assert second.renew_lease("deb-1", RUN_A.id, now=at(10))
        assert first.read_lease("deb-1") == replace(lease, heartbeat_at=at(10), expires_at=at(40))
        assert take(second, RUN_B, 41).owner == RUN_B  # expired: taken over through the other connection
        assert not first.renew_lease("deb-1", RUN_A.id, now=at(42))


def race(
    open_shared: Callable[[], DebateStore], runners: int, contend: Callable[[DebateStore, LeaseOwner], str]
) -> list[str]:
    """``runners`` threads, each with its own store (connection) and owner, ``contend`` all at once; their outcomes."""
    stores = [open_shared() for _ in range(runners)]
    barrier = threading.Barrier(runners)
    outcomes: list[str] = []

    def run(index: int) -> None:
        barrier.wait()
        outcomes.append(contend(stores[index], LeaseOwner(id=f"run-{index}", pid=1000 + index, host="host")))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(runners)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for opened in stores:
        opened.close()
    assert len(outcomes) == runners, outcomes
    return outcomes


def test_exactly_one_of_many_simultaneous_acquirers_wins(open_shared: Callable[[], DebateStore]) -> None:
    with open_shared() as setup:
        setup.append("deb-1", created())
    runners = 8

    def contend(store: DebateStore, owner: LeaseOwner) -> str:
        try:
            store.acquire_lease("deb-1", owner, now=T0, ttl=TTL, owner_gone=never_gone)
        except DebateBusyError:
            return "refused"
        return owner.id

    outcomes = race(open_shared, runners, contend)
    winners = [o for o in outcomes if o != "refused"]
    assert len(outcomes) == runners and len(winners) == 1
    with open_shared() as check:
        lease = check.read_lease("deb-1")
        assert lease is not None and lease.owner.id == winners[0]


def test_exactly_one_of_many_simultaneous_creators_wins(open_shared: Callable[[], DebateStore]) -> None:
    """Runners racing to create the same debate with its lease: one creates it, the others are told it exists."""
    runners = 6

    def contend(store: DebateStore, owner: LeaseOwner) -> str:
        try:
            store.acquire_lease("deb-1", owner, now=T0, ttl=TTL, create=created(), owner_gone=never_gone)
        except DebateBusyError:  # the winner's lease is there
            return "refused"
        except StoreError as exc:  # or not yet, but its debate is
            return "refused" if "already exists" in str(exc) else str(exc)
        return owner.id

    outcomes = race(open_shared, runners, contend)
    assert outcomes.count("refused") == runners - 1, outcomes
    with open_shared() as check:
        assert len(check.changes("deb-1")) == 1


def test_sqlite_store_from_before_leases_is_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "debates.sqlite3"
    with SqliteStore(path) as store:
        store.append("deb-1", created())
    db = sqlite3.connect(path)
    with db:
        db.execute("DROP TABLE leases")
        db.execute("DELETE FROM migrations WHERE name = 'm004_leases'")
    db.close()
    with SqliteStore(path) as upgraded:
        assert upgraded.read_lease("deb-1") is None
        assert take(upgraded, RUN_A, 0).owner == RUN_A


# --- opening for reading never creates a store -------------------------------------------------


def test_opening_a_missing_store_for_reading_creates_nothing(tmp_path: Path) -> None:
    location = tmp_path / "typo"
    store = open_store(location, create=False)
    assert isinstance(store, AbsentStore)
    assert store.location == str(location / "debates.sqlite3")
    assert store.list() == [] and not store.exists("deb-1") and store.read_lease("deb-1") is None
    with pytest.raises(DebateNotFoundError, match="no debate with id 'deb-1'"):
        store.load("deb-1")
    with pytest.raises(StoreError, match="no debate store"):
        store.append("deb-1", created())
    with pytest.raises(StoreError, match="no debate store"):
        take(store, RUN_A, 0, create=created())
    store.close()
    assert not location.exists()


def test_opening_an_existing_store_for_reading(tmp_path: Path) -> None:
    with open_store(tmp_path / "data") as store:
        store.append("deb-1", created())
    with open_store(tmp_path / "data", create=False) as reading:
        assert isinstance(reading, SqliteStore)
        assert [d.id for d in reading.list()] == ["deb-1"]


# --- what a lease means now ------------------------------------------------------------------


def test_standing_and_the_shown_status() -> None:
    lease = Lease("deb-1", RUN_A, acquired_at=T0, heartbeat_at=T0, expires_at=at(30))
    assert standing(lease, at(29), never_gone) is Standing.LIVE
    assert standing(lease, at(30), never_gone) is Standing.EXPIRED
    assert standing(lease, at(1), lambda owner: True) is Standing.OWNER_GONE
    assert standing(replace(lease, released_at=at(2)), at(3), never_gone) is Standing.RELEASED
    assert shown_status("running", lease, at(1), never_gone) == "running"
    assert shown_status("running", lease, at(31), never_gone) == "stale"
    assert shown_status("running", None, at(1), never_gone) == "stale"
    assert shown_status("running", replace(lease, released_at=at(2)), at(3), never_gone) == "stale"
    assert shown_status("completed", None, at(1), never_gone) == "completed"
    assert not is_stale("interrupted", None, at(1), never_gone)


# --- is the owner's process gone? ---------------------------------------------------------------


def this_process(*, pid: int | None = None, host: str | None = None, started: int | None = -1) -> LeaseOwner:
    """This process as a lease owner, or with its pid, host or start time replaced (-1: the real one)."""
    pid = os.getpid() if pid is None else pid
    return LeaseOwner(
        id="me",
        pid=pid,
        host=socket.gethostname() if host is None else host,
        started=process_start(pid) if started == -1 else started,
    )


@pytest.mark.skipif(os.name == "nt", reason="processes are not probed on Windows")
def test_a_running_process_is_not_gone_and_an_exited_one_is() -> None:
    assert not owner_process_gone(this_process())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert owner_process_gone(this_process(pid=child.pid, started=None))


def test_an_owner_on_another_host_is_never_known_to_be_gone() -> None:
    assert not owner_process_gone(this_process(host=socket.gethostname() + "-elsewhere", pid=2**22 + 7))


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="process start times come from /proc")
def test_a_reused_pid_or_a_zombie_counts_as_gone() -> None:
    assert owner_process_gone(this_process(started=(process_start(os.getpid()) or 0) + 1))
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        owner = this_process(pid=child.pid, started=process_start(child.pid))
        assert not owner_process_gone(owner)
        os.kill(child.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while not owner_process_gone(owner):  # a zombie until reaped: still counts as gone
            assert time.monotonic() < deadline, "the killed child never showed as gone"
            time.sleep(0.01)
    finally:
        child.kill()
        child.wait()
