"""A store kept in process memory, for tests and throwaway runs.

It keeps each change as the same JSON text the SQLite store writes and parses it back on
load, so code tested against it goes through the real serialization.
"""

from __future__ import annotations

import builtins
import threading

from dialectic.changes import Change, dump_change
from dialectic.domain import DebateState
from dialectic.errors import StoreError
from dialectic.store.base import (
    ClosingStore,
    DebateListing,
    advance_listing,
    check_batch,
    fold_log,
    not_found,
    parse_log,
)


class MemoryStore(ClosingStore):
    """:class:`~dialectic.store.base.DebateStore` in a dict; gone when the process ends."""

    location = ":memory:"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._logs: dict[str, builtins.list[str]] = {}
        self._listings: dict[str, DebateListing] = {}
        """Insertion-ordered, which breaks ties between debates created at the same instant."""
        self._closed = False

    def __repr__(self) -> str:
        return f"MemoryStore({len(self._logs)} debates)"

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"the debate store {self.location} is closed")

    def append(self, debate_id: str, *changes: Change) -> None:
        payloads = [dump_change(change) for change in changes]
        with self._lock:
            self._check_open()
            listing = self._listings.get(debate_id)
            check_batch(debate_id, changes, exists=listing is not None, location=self.location)
            if not changes:
                return
            for change in changes:
                listing = advance_listing(listing, change)
            assert listing is not None  # changes is not empty
            self._listings[debate_id] = listing
            self._logs.setdefault(debate_id, []).extend(payloads)

    def load(self, debate_id: str) -> DebateState:
        return fold_log(debate_id, self.changes(debate_id), self.location)

    def changes(self, debate_id: str) -> builtins.list[Change]:
        with self._lock:
            self._check_open()
            payloads = builtins.list(self._logs.get(debate_id, ()))
        if not payloads:
            raise not_found(debate_id, self.location)
        return parse_log(debate_id, payloads, self.location)

    def exists(self, debate_id: str) -> bool:
        with self._lock:
            self._check_open()
            return debate_id in self._listings

    def list(self, *, status: str | None = None, limit: int | None = None) -> builtins.list[DebateListing]:
        if limit is not None and limit < 0:
            raise ValueError(f"limit must not be negative, got {limit}")
        with self._lock:
            self._check_open()
            listings = builtins.list(self._listings.values())
        ordered = sorted(enumerate(listings), key=lambda pair: (pair[1].created_at, pair[0]), reverse=True)
        selected = [listing for _, listing in ordered if status is None or listing.status == status]
        return selected if limit is None else selected[:limit]

    def close(self) -> None:
        with self._lock:
            self._closed = True
