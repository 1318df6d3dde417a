"""One runner per debate: the lease a run holds on its debate while it works on it.

A run takes the debate's lease before it writes anything (for a new debate, in the same
transaction that creates it), renews it from a heartbeat task on the event loop, and
releases it on every way out: completed, suspended, failed, interrupted or crashed. Its
writes go through a :class:`LeasedStore`, fenced by the lease, so once another process has
taken the debate over nothing more is written. When a heartbeat finds the lease lost, the
run is cancelled and ends with :class:`~dialectic.core.errors.LeaseLostError`.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import TracebackType
from typing import Self

from dialectic.core.changes import Change, DebateCreated
from dialectic.core.domain import DebateState, utc_now
from dialectic.core.errors import StoreError
from dialectic.store.base import CallCache, DebateListing, DebateStore, ListedDebate, PageKey, WindowMemory
from dialectic.store.leases import (
    DEFAULT_TTL,
    Lease,
    LeaseGrant,
    LeaseOwner,
    OwnerGoneCheck,
    lost_error,
    owner_process_gone,
)


@dataclass(frozen=True)
class LeasePolicy:
    """How a run keeps its lease; tests inject a virtual clock and sleep, or tiny values."""

    ttl_s: float = DEFAULT_TTL.total_seconds()
    """A lease whose heartbeat is older than this may be taken over."""
    renew_every_s: float = 10.0
    clock: Callable[[], datetime] = utc_now
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    owner_gone: OwnerGoneCheck = owner_process_gone

    def __post_init__(self) -> None:
        if not 0 < self.renew_every_s < self.ttl_s:
            raise ValueError(f"renew_every_s must be positive and below ttl_s ({self.renew_every_s}, {self.ttl_s})")


@dataclass
class HeldLease:
    """What a run gets while it holds the lease: the store to write through, and notices to publish."""

    store: DebateStore
    """Writes through here are fenced by the lease."""
    notices: list[str] = field(default_factory=list)
    """The takeover of a crashed run's lease, if there was one."""


class LeaseHold:
    """``async with LeaseHold(store, debate_id, policy) as held:`` runs the block holding the debate's lease.

    Entering raises :class:`~dialectic.core.errors.DebateBusyError` when a live owner holds it.
    """

    def __init__(
        self, store: DebateStore, debate_id: str, policy: LeasePolicy, *, create: DebateCreated | None = None
    ) -> None:
        self._store = store
        self._debate_id = debate_id
        self._policy = policy
        self._create = create
        self._owner = LeaseOwner.for_this_run()
        self._run: asyncio.Task[object] | None = None
        self._heartbeat: asyncio.Task[None] | None = None
        self._in_block = False
        self._lost = False
        self._cancelled_run = False

    async def __aenter__(self) -> HeldLease:
        grant: LeaseGrant = self._store.acquire_lease(
            self._debate_id,
            self._owner,
            now=self._policy.clock(),
            ttl=timedelta(seconds=self._policy.ttl_s),
            create=self._create,
            owner_gone=self._policy.owner_gone,
        )
        self._run = asyncio.current_task()
        self._in_block = True
        self._heartbeat = asyncio.create_task(self._beat(), name=f"lease heartbeat of {self._debate_id}")
        notice = grant.takeover_notice()
        return HeldLease(LeasedStore(self._store, self._owner.id), [notice] if notice else [])

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._in_block = False
        if self._heartbeat is not None:
            self._heartbeat.cancel()
        self._release()
        if self._heartbeat is not None:
            await asyncio.wait([self._heartbeat])
        run, self._run, self._heartbeat, self._create = self._run, None, None, None  # no cycle: see below
        if self._cancelled_run and run is not None:
            run.uncancel()
            if isinstance(exc, asyncio.CancelledError):
                raise lost_error(self._debate_id, self._store.read_lease(self._debate_id)) from None

    # The heartbeat task ends cancelled; its CancelledError's traceback holds the frame of ``_beat``,
    # which holds this object: kept referring to the task (or to the run), this object and the
    # debate it created would be a reference cycle, freed only by the garbage collector's rare full
    # passes, so a server would keep every finished debate's state until then (issue 52's soak).

    def _release(self) -> None:
        """Give the lease back. A store that fails just here must not hide how the run ended (its
        result is saved): the lease is then left to expire after its time-to-live."""
        with contextlib.suppress(StoreError):
            self._store.release_lease(self._debate_id, self._owner.id, now=self._policy.clock())

    async def _beat(self) -> None:
        """Renew until cancelled; on finding the lease lost, cancel the run."""
        while True:
            await self._policy.sleep(self._policy.renew_every_s)
            try:
                held = self._store.renew_lease(self._debate_id, self._owner.id, now=self._policy.clock())
            except StoreError:
                continue  # e.g. the database is busy: try again next beat (writes stay fenced meanwhile)
            if held:
                continue
            self._lost = True
            if self._in_block and self._run is not None:
                self._cancelled_run = True
                self._run.cancel()
            return


class LeasedStore:
    """A :class:`DebateStore` whose appends are fenced by one run's lease; everything else passes through.

    It does not own the store it wraps: closing it leaves that store open.
    """

    def __init__(self, inner: DebateStore, owner_id: str) -> None:
        self._inner = inner
        self._owner_id = owner_id
        self.location = inner.location

    def __repr__(self) -> str:
        return f"LeasedStore({self._inner!r})"

    def append(self, debate_id: str, *changes: Change, holder: str | None = None) -> int:
        return self._inner.append(debate_id, *changes, holder=holder or self._owner_id)

    def load(self, debate_id: str) -> DebateState:
        return self._inner.load(debate_id)

    def exists(self, debate_id: str) -> bool:
        return self._inner.exists(debate_id)

    def list(self, *, status: str | None = None, limit: int | None = None) -> builtins.list[DebateListing]:
        return self._inner.list(status=status, limit=limit)

    def page(
        self, *, status: str | None = None, limit: int, after: PageKey | None = None
    ) -> builtins.list[ListedDebate]:
        return self._inner.page(status=status, limit=limit, after=after)

    def changes(self, debate_id: str) -> builtins.list[Change]:
        return self._inner.changes(debate_id)

    def changes_since(self, debate_id: str, after: int) -> builtins.list[tuple[int, Change]]:
        return self._inner.changes_since(debate_id, after)

    def acquire_lease(
        self,
        debate_id: str,
        owner: LeaseOwner,
        *,
        now: datetime,
        ttl: timedelta = DEFAULT_TTL,
        create: DebateCreated | None = None,
        owner_gone: OwnerGoneCheck = owner_process_gone,
    ) -> LeaseGrant:
        return self._inner.acquire_lease(debate_id, owner, now=now, ttl=ttl, create=create, owner_gone=owner_gone)

    def renew_lease(self, debate_id: str, owner_id: str, *, now: datetime) -> bool:
        return self._inner.renew_lease(debate_id, owner_id, now=now)

    def release_lease(self, debate_id: str, owner_id: str, *, now: datetime) -> bool:
        return self._inner.release_lease(debate_id, owner_id, now=now)

    def read_lease(self, debate_id: str) -> Lease | None:
        return self._inner.read_lease(debate_id)

    def remembered_window(self, endpoint: str, model: str) -> int | None:
        """The wrapped store's (see :class:`~dialectic.store.base.WindowMemory`); ``None`` when it keeps none."""
        inner = self._inner
        return inner.remembered_window(endpoint, model) if isinstance(inner, WindowMemory) else None

    def remember_window(self, endpoint: str, model: str, tokens: int) -> None:
        """Not fenced by the lease: a window is a fact about a server, not about this debate."""
        inner = self._inner
        if isinstance(inner, WindowMemory):
            inner.remember_window(endpoint, model, tokens)

    def cached_call(self, key: str) -> str | None:
        """The wrapped store's (see :class:`~dialectic.store.base.CallCache`); ``None`` when it keeps none."""
        inner = self._inner
        return inner.cached_call(key) if isinstance(inner, CallCache) else None

    def cache_call(self, key: str, value: str) -> None:
        """Not fenced by the lease: a cached reply is a fact about a request, not about this debate."""
        inner = self._inner
        if isinstance(inner, CallCache):
            inner.cache_call(key, value)

    def close(self) -> None:
        """The wrapped store belongs to the caller; it stays open."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
