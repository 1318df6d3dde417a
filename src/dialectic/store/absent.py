"""The store at a location where no database exists yet, for commands that only read.

``list``, ``show`` and the other read commands must never create a store (a typo in
``--store`` would otherwise leave a new empty database behind). They get this empty,
read-only stand-in instead: it lists nothing, knows no debate, and refuses every write.
"""

from __future__ import annotations

import builtins
from datetime import datetime, timedelta

from dialectic.core.changes import Change, DebateCreated
from dialectic.core.domain import DebateState
from dialectic.core.errors import StoreError
from dialectic.store.base import ClosingStore, DebateListing, ListedDebate, PageKey, check_limit, not_found
from dialectic.store.leases import DEFAULT_TTL, Lease, LeaseGrant, LeaseOwner, OwnerGoneCheck, owner_process_gone


class AbsentStore(ClosingStore):
    """:class:`~dialectic.store.base.DebateStore` for a ``location`` that holds no database."""

    def __init__(self, location: str) -> None:
        self.location = location

    def __repr__(self) -> str:
        return f"AbsentStore({self.location!r})"

    def _refuse(self) -> StoreError:
        return StoreError(f"there is no debate store at {self.location}")

    def append(self, debate_id: str, *changes: Change, holder: str | None = None) -> int:
        raise self._refuse()

    def load(self, debate_id: str) -> DebateState:
        raise not_found(debate_id, self.location)

    def changes(self, debate_id: str) -> builtins.list[Change]:
        raise not_found(debate_id, self.location)

    def changes_since(self, debate_id: str, after: int) -> builtins.list[tuple[int, Change]]:
        raise not_found(debate_id, self.location)

    def exists(self, debate_id: str) -> bool:
        return False

    def list(self, *, status: str | None = None, limit: int | None = None) -> builtins.list[DebateListing]:
        check_limit(limit)
        return []

    def page(
        self, *, status: str | None = None, limit: int, after: PageKey | None = None
    ) -> builtins.list[ListedDebate]:
        check_limit(limit)
        return []

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
        if create is not None:
            raise self._refuse()
        raise not_found(debate_id, self.location)

    def renew_lease(self, debate_id: str, owner_id: str, *, now: datetime) -> bool:
        return False

    def release_lease(self, debate_id: str, owner_id: str, *, now: datetime) -> bool:
        return False

    def read_lease(self, debate_id: str) -> Lease | None:
        return None

    def remembered_window(self, endpoint: str, model: str) -> int | None:
        return None

    def remember_window(self, endpoint: str, model: str, tokens: int) -> None:
        raise self._refuse()

    def cached_call(self, key: str) -> str | None:
        return None

    def cache_call(self, key: str, value: str) -> None:
        raise self._refuse()

    def close(self) -> None:
        """Nothing was opened."""
