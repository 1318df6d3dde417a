"""The store port: where debates are kept, as an append-only log of changes.

A backend appends :mod:`dialectic.changes` records and rebuilds a debate by folding them;
it never rewrites a whole debate. Besides the log it keeps a small per-debate index
(:class:`DebateListing`) so listing debates never has to fold them, and each debate's
lease (:mod:`dialectic.store.leases`): which run may write to it. The pure helpers here
hold the rules both backends share, so they cannot disagree about them.
"""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

from dialectic.changes import Change, DebateCreated, RoundStarted, StatusChanged, fold, parse_change
from dialectic.domain import DebateState
from dialectic.errors import DebateNotFoundError, StoreError
from dialectic.store.leases import DEFAULT_TTL, Lease, LeaseGrant, LeaseOwner, OwnerGoneCheck, owner_process_gone

HEADLINE_MAX_CHARS = 100


@dataclass(frozen=True)
class DebateListing:
    """One line of a debate listing, kept up to date on every append."""

    id: str
    problem: str
    """The first line of the problem, at most :data:`HEADLINE_MAX_CHARS` characters."""
    status: str
    current_round: int
    created_at: datetime
    updated_at: datetime


@runtime_checkable
class DebateStore(Protocol):
    location: str
    """Where the debates live, for messages: a database path, or ``:memory:``."""

    def append(self, debate_id: str, *changes: Change, holder: str | None = None) -> int:
        """Append ``changes`` in order, all or none; return the number of the last change now saved.

        The changes are numbered on from the debate's last, so those appended are numbers
        ``returned - len(changes) + 1`` to ``returned`` (the ``seq`` of :meth:`changes_since`).

        A new debate's first change must be :class:`DebateCreated`; any other change for an
        unknown id raises :class:`DebateNotFoundError`, and :class:`DebateCreated` for an
        id that already exists raises :class:`StoreError`. With ``holder`` (a lease owner's
        id), the append is fenced: unless that owner still holds the debate's lease, nothing
        is written and :class:`LeaseLostError` is raised.
        """
        ...

    def load(self, debate_id: str) -> DebateState:
        """The debate's state, folded from its log; :class:`DebateNotFoundError` if there is none."""
        ...

    def exists(self, debate_id: str) -> bool: ...

    def list(self, *, status: str | None = None, limit: int | None = None) -> builtins.list[DebateListing]:
        """Debates, newest first, optionally only those with ``status``, at most ``limit``."""
        ...

    def changes(self, debate_id: str) -> builtins.list[Change]:
        """The raw log of one debate, in order (for tests and export tooling)."""
        ...

    def changes_since(self, debate_id: str, after: int) -> builtins.list[tuple[int, Change]]:
        """``(seq, change)`` for every change of the debate after number ``after`` (the first is 1), in order.

        The web server's event stream is built on it: a change's ``seq`` is its event id, so a
        client that reconnects gets exactly what it missed. :class:`DebateNotFoundError` if there
        is no such debate.
        """
        ...

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
        """Take the debate's lease for ``owner``, atomically; with ``create``, create the debate
        in the same transaction.

        Succeeds when there is no lease, or it was released, expired or its owner is gone
        (the grant then names the lease taken over); otherwise raises :class:`DebateBusyError`
        naming the live owner. An unknown id without ``create`` raises :class:`DebateNotFoundError`.
        """
        ...

    def renew_lease(self, debate_id: str, owner_id: str, *, now: datetime) -> bool:
        """Push the lease's expiry forward; ``False`` (and nothing changed) unless ``owner_id`` holds it."""
        ...

    def release_lease(self, debate_id: str, owner_id: str, *, now: datetime) -> bool:
        """Mark the lease released; ``False`` (and nothing changed) unless ``owner_id`` holds it."""
        ...

    def read_lease(self, debate_id: str) -> Lease | None:
        """The debate's lease as stored (released ones included), or ``None`` if it never had one."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...


@runtime_checkable
class WindowMemory(Protocol):
    """Context windows learned from servers' refusals, kept across debates (a store may keep them).

    Keyed by endpoint (the provider pool's name for it, e.g. ``openai|http://127.0.0.1:8080/v1``)
    and model, so a resumed debate, or the next debate on that endpoint, does not have to send an
    over-long prompt to learn the window again. Not part of :class:`DebateStore`: a store without
    it only makes the engine learn again.
    """

    def remembered_window(self, endpoint: str, model: str) -> int | None:
        """The window last learned for ``model`` on ``endpoint``, or ``None``."""
        ...

    def remember_window(self, endpoint: str, model: str, tokens: int) -> None:
        """Keep ``tokens`` as the window of ``model`` on ``endpoint`` (replacing what was kept)."""
        ...


class ClosingStore(ABC):
    """``with store: ...`` closes the store on the way out; mixed into both backends."""

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def headline(problem: str) -> str:
    """The first non-blank line of ``problem``, shortened to :data:`HEADLINE_MAX_CHARS`."""
    line = next((ln.strip() for ln in problem.splitlines() if ln.strip()), "")
    if len(line) <= HEADLINE_MAX_CHARS:
        return line
    return line[: HEADLINE_MAX_CHARS - 1].rstrip() + "…"


def as_utc(moment: datetime) -> datetime:
    """``moment`` in UTC; a naive datetime is taken to be UTC already."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def not_found(debate_id: str, location: str) -> DebateNotFoundError:
    return DebateNotFoundError(f"no debate with id '{debate_id}' in {location}")


def check_batch(debate_id: str, changes: Sequence[Change], *, exists: bool, location: str) -> None:
    """Raise unless ``changes`` may be appended to ``debate_id`` (which ``exists`` or not)."""
    for index, change in enumerate(changes):
        if not isinstance(change, DebateCreated):
            continue
        if exists or index > 0:
            raise StoreError(f"debate '{debate_id}' already exists in {location}")
        if change.state.id != debate_id:
            raise StoreError(f"cannot create debate '{debate_id}' from the state of debate '{change.state.id}'")
    if not exists and not (changes and isinstance(changes[0], DebateCreated)):
        raise not_found(debate_id, location)


def advance_listing(listing: DebateListing | None, change: Change) -> DebateListing:
    """The listing after ``change``, following the same rules as :func:`dialectic.changes.apply_change`."""
    if isinstance(change, DebateCreated):
        state = change.state
        return DebateListing(
            id=state.id,
            problem=headline(state.problem),
            status=state.status,
            current_round=state.current_round,
            created_at=as_utc(state.created_at),
            updated_at=as_utc(change.at),
        )
    if listing is None:
        raise StoreError(f"change '{change.kind}' before the debate was created")
    if isinstance(change, StatusChanged):
        listing = replace(listing, status=change.status)
    elif isinstance(change, RoundStarted):
        listing = replace(listing, current_round=max(listing.current_round, change.round_number))
    return replace(listing, updated_at=as_utc(change.at))


def parse_log(debate_id: str, payloads: Sequence[str], location: str) -> builtins.list[Change]:
    """Parse stored change records, reporting an unreadable one as a :class:`StoreError`."""
    changes: builtins.list[Change] = []
    for seq, payload in enumerate(payloads, start=1):
        try:
            changes.append(parse_change(payload))
        except ValueError as exc:
            raise StoreError(
                f"change #{seq} of debate '{debate_id}' in {location} cannot be read", detail=str(exc)
            ) from exc
    return changes


def fold_log(debate_id: str, changes: Sequence[Change], location: str) -> DebateState:
    """Fold a stored log, reporting a log the reducer rejects as a :class:`StoreError`."""
    if not changes:
        raise not_found(debate_id, location)
    try:
        return fold(changes)
    except (KeyError, ValueError) as exc:
        reason = exc.args[0] if exc.args else type(exc).__name__
        raise StoreError(f"the stored log of debate '{debate_id}' in {location} is inconsistent: {reason}") from exc
