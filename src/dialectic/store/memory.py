"""A store kept in process memory, for tests and throwaway runs.

It keeps each change as the same JSON text the SQLite store writes and parses it back on
load, so code tested against it goes through the real serialization.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from dialectic.core.changes import Change, DebateCreated, dump_change
from dialectic.core.domain import DebateState
from dialectic.core.errors import StoreError
from dialectic.store.base import (
    ClosingStore,
    DebateListing,
    ListedDebate,
    PageKey,
    advance_listed,
    check_batch,
    fold_log,
    not_found,
    parse_log,
    select_page,
)
from dialectic.store.leases import (
    DEFAULT_TTL,
    Lease,
    LeaseGrant,
    LeaseOwner,
    OwnerGoneCheck,
    grant_lease,
    is_held_by,
    lost_error,
    owner_process_gone,
    renewed,
)


class MemoryStore(ClosingStore):
    """:class:`~dialectic.store.base.DebateStore` in a dict; gone when the process ends."""

    location = ":memory:"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._logs: dict[str, builtins.list[str]] = {}
        self._listed: dict[str, ListedDebate] = {}
        """Each debate's index row and listing details, kept on every append."""
        self._leases: dict[str, Lease] = {}
        self._windows: dict[tuple[str, str], int] = {}
        self._calls: dict[str, str] = {}
        self._closed = False

    def __repr__(self) -> str:
        return f"MemoryStore({len(self._logs)} debates)"

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"the debate store {self.location} is closed")

    def append(self, debate_id: str, *changes: Change, holder: str | None = None) -> int:
        with self._lock:
            self._check_open()
            if holder is not None and not is_held_by(self._leases.get(debate_id), holder):
                raise lost_error(debate_id, self._leases.get(debate_id))
            return self._append(debate_id, changes)

    def _append(self, debate_id: str, changes: Sequence[Change]) -> int:
        """Append under the lock; the number of the last change saved."""
        payloads = [dump_change(change) for change in changes]
        entry = self._listed.get(debate_id)
        check_batch(debate_id, changes, exists=entry is not None, location=self.location)
        if not changes:
            return len(self._logs.get(debate_id, []))
        new = entry is None
        for change in changes:
            entry = advance_listed(entry, change)
        assert entry is not None  # changes is not empty
        self._listed[debate_id] = replace(entry, ordinal=len(self._listed) + 1) if new else entry
        log = self._logs.setdefault(debate_id, [])
        log.extend(payloads)
        return len(log)

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
        with self._lock:
            self._check_open()
            if create is None and debate_id not in self._listed:
                raise not_found(debate_id, self.location)
            current = self._leases.get(debate_id)
            grant = grant_lease(debate_id, current, owner, now=now, ttl=ttl, owner_gone=owner_gone)
            if create is not None:
                self._append(debate_id, [create])
            self._leases[debate_id] = grant.lease
            return grant

    def renew_lease(self, debate_id: str, owner_id: str, *, now: datetime) -> bool:
        with self._lock:
            self._check_open()
            lease = self._leases.get(debate_id)
            if lease is None or not is_held_by(lease, owner_id):
                return False
            self._leases[debate_id] = renewed(lease, now)
            return True

    def release_lease(self, debate_id: str, owner_id: str, *, now: datetime) -> bool:
        with self._lock:
            self._check_open()
            lease = self._leases.get(debate_id)
            if lease is None or not is_held_by(lease, owner_id):
                return False
            self._leases[debate_id] = replace(lease, released_at=now)
            return True

    def read_lease(self, debate_id: str) -> Lease | None:
        with self._lock:
            self._check_open()
            return self._leases.get(debate_id)

    def load(self, debate_id: str) -> DebateState:
        return fold_log(debate_id, self.changes(debate_id), self.location)

    def remembered_window(self, endpoint: str, model: str) -> int | None:
        with self._lock:
            self._check_open()
            return self._windows.get((endpoint, model))

    def remember_window(self, endpoint: str, model: str, tokens: int) -> None:
        with self._lock:
            self._check_open()
            self._windows[(endpoint, model)] = tokens

    def cached_call(self, key: str) -> str | None:
        with self._lock:
            self._check_open()
            return self._calls.get(key)

    def cache_call(self, key: str, value: str) -> None:
        with self._lock:
            self._check_open()
            self._calls[key] = value

    def changes(self, debate_id: str) -> builtins.list[Change]:
        with self._lock:
            self._check_open()
            payloads = builtins.list(self._logs.get(debate_id, ()))
        if not payloads:
            raise not_found(debate_id, self.location)
        return parse_log(debate_id, payloads, self.location)

    def changes_since(self, debate_id: str, after: int) -> builtins.list[tuple[int, Change]]:
        with self._lock:
            self._check_open()
            log = self._logs.get(debate_id)
            if log is None:
                raise not_found(debate_id, self.location)
            payloads = log[max(after, 0) :]
        first = max(after, 0) + 1
        return builtins.list(enumerate(parse_log(debate_id, payloads, self.location), start=first))

    def exists(self, debate_id: str) -> bool:
        with self._lock:
            self._check_open()
            return debate_id in self._listed

    def list(self, *, status: str | None = None, limit: int | None = None) -> builtins.list[DebateListing]:
        return [entry.listing for entry in self._select(status=status, limit=limit, after=None)]

    def page(
        self, *, status: str | None = None, limit: int, after: PageKey | None = None
    ) -> builtins.list[ListedDebate]:
        return self._select(status=status, limit=limit, after=after)

    def _select(self, *, status: str | None, limit: int | None, after: PageKey | None) -> builtins.list[ListedDebate]:
        with self._lock:
            self._check_open()
            entries = builtins.list(self._listed.values())
        return select_page(entries, status=status, limit=limit, after=after)

    def close(self) -> None:
        with self._lock:
            self._closed = True
