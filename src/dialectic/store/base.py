"""The store port: where debates are kept, as an append-only log of changes.

A backend appends :mod:`dialectic.core.changes` records and rebuilds a debate by folding them;
it never rewrites a whole debate. Besides the log it keeps a small per-debate index
(:class:`DebateListing`, and what a page of the web listing shows: :class:`ListingDetails`)
so listing debates never has to fold them, and each debate's lease
(:mod:`dialectic.store.leases`): which run may write to it. The pure helpers here hold the
rules both backends share, so they cannot disagree about them.
"""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

from dialectic.core.changes import (
    CallRecorded,
    Change,
    ContributionRecorded,
    DebateCreated,
    JudgeSummaryRecorded,
    RoundStarted,
    SolutionRecorded,
    StatusChanged,
    SummaryRecorded,
    fold,
    parse_change,
)
from dialectic.core.domain import Contribution, ContributionMetadata, DebateState, DebateSummary
from dialectic.core.errors import DebateNotFoundError, StoreError
from dialectic.core.titles import title_line
from dialectic.store.leases import DEFAULT_TTL, Lease, LeaseGrant, LeaseOwner, OwnerGoneCheck, owner_process_gone

HEADLINE_MAX_CHARS = 100
LINE_KEPT_CHARS = 200
"""How much of the problem's first line :class:`ListingDetails` keeps: more than any headline shows,
so a headline cut from it is the one cut from the whole line."""


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


@dataclass(frozen=True)
class TokenCount:
    input: int = 0
    output: int = 0
    total: int = 0

    def __add__(self, other: TokenCount) -> TokenCount:
        return TokenCount(self.input + other.input, self.output + other.output, self.total + other.total)


@dataclass(frozen=True)
class TokenTally:
    """A debate's tokens as its ledger counts them (:func:`dialectic.core.ledger.debate_totals`: what the page,
    ``show`` and the report count), kept change by change.

    ``ledger`` counts the calls recorded (``calls`` of them). A debate saved before there was a ledger has
    none: its tokens are those of the ledger its saved metadata gives (:func:`dialectic.core.ledger.entries_of`),
    kept in the other fields as folding the log keeps them: contributions add up, while the solution, an
    agent's summary of a round and the judge's summary replace what was recorded before them.
    """

    ledger: TokenCount = TokenCount()
    calls: int = 0
    contributions: TokenCount = TokenCount()
    metered: bool = False
    """Whether a contribution made by a call carries its latency or tokens (else the metadata gives no ledger)."""
    solution: TokenCount = TokenCount()
    summaries: tuple[tuple[int, str, TokenCount], ...] = ()
    """``(round, agent id, tokens)`` of each summary the state holds."""
    judge_summary: TokenCount = TokenCount()

    def totals(self) -> TokenCount:
        """Input, output and their sum, over the ledger (or the one the metadata gives)."""
        if self.calls:
            return self.ledger
        if not self.metered:
            return TokenCount()
        parts = [self.contributions, self.solution, self.judge_summary, *(n for _, _, n in self.summaries)]
        return sum(parts, TokenCount())


@dataclass(frozen=True)
class ListingDetails:
    """What a page of the web listing shows of a debate beyond its :class:`DebateListing`.

    Kept on every append, so a page is read without folding any log; each field is what the
    folded state gives (the times as the state holds them, not normalised to UTC).
    """

    first_line: str
    """The problem's first non-blank line, its first :data:`LINE_KEPT_CHARS` characters."""
    rounds: int | None
    """The configured rounds (``debate.rounds``); ``None`` when the configuration does not say."""
    format: str | None
    """The configured format (``debate.format``); ``None`` when the configuration does not say."""
    agents: tuple[str, ...]
    """The participants' names, in order."""
    created_at: datetime
    updated_at: datetime
    tokens: TokenTally


@dataclass(frozen=True, order=True)
class PageKey:
    """A debate's place in the listing's order, which is newest first: by creation time, then by the
    order debates were saved in (so two debates created at the same instant keep a fixed order).

    A page starts just after a key (keyset paging): debates created or deleted between two pages
    neither repeat an older one nor hide it, and a key stays a valid place after its debate is gone.
    """

    created_at: datetime
    """In UTC."""
    ordinal: int


@dataclass(frozen=True)
class ListedDebate:
    """A debate as a page of the listing reads it: its index row, its details and its place in the order."""

    listing: DebateListing
    details: ListingDetails | None
    """``None`` only for a debate whose log could not be read when its details were filled in."""
    ordinal: int = 0
    """The order debates were saved in (the first is 1), which the store sets when it creates the debate."""

    @property
    def key(self) -> PageKey:
        return PageKey(as_utc(self.listing.created_at), self.ordinal)


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
        """Debates, newest first (see :class:`PageKey`), optionally only those with ``status``, at most ``limit``."""
        ...

    def page(
        self, *, status: str | None = None, limit: int, after: PageKey | None = None
    ) -> builtins.list[ListedDebate]:
        """One page of the listing: at most ``limit`` debates, newest first (their :class:`PageKey` descending),
        only those with ``status`` if given, and only those after ``after`` in that order.

        Read from the index alone (one query on SQLite): no log is folded, no lease read.
        """
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


@runtime_checkable
class CallCache(Protocol):
    """The content-addressed call cache: each reply, filed under a key that hashes everything that
    decided it (:mod:`dialectic.llm.call_cache` computes keys and values; the store keeps both opaque).

    Not part of :class:`DebateStore`: a store without it only means no reply is served from a cache.
    """

    def cached_call(self, key: str) -> str | None:
        """The value filed under ``key``, or ``None``."""
        ...

    def cache_call(self, key: str, value: str) -> None:
        """File ``value`` under ``key`` (replacing what was filed there)."""
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


def first_line(problem: str) -> str:
    """The first non-blank line of ``problem``, stripped of its Markdown marks (see :mod:`dialectic.core.titles`)."""
    return title_line(problem)


def cut_line(line: str, width: int) -> str:
    """``line`` if it fits in ``width`` characters, else its start and an ellipsis, ``width`` in all."""
    if len(line) <= width:
        return line
    return line[: width - 1].rstrip() + "…"


def headline(problem: str, width: int = HEADLINE_MAX_CHARS) -> str:
    """The first non-blank line of ``problem`` without its Markdown marks, shortened to ``width``."""
    return cut_line(first_line(problem), width)


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
    """The listing after ``change``, following the same rules as :func:`dialectic.core.changes.apply_change`."""
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


def counted(inputs: int, outputs: int) -> TokenCount:
    return TokenCount(inputs, outputs, inputs + outputs)


def call_tokens(metadata: ContributionMetadata) -> TokenCount:
    """One call's tokens as the ledger its metadata gives counts them (input, output, their sum)."""
    return counted(metadata.input_tokens or 0, metadata.output_tokens or 0)


def summary_tokens(summary: DebateSummary) -> TokenCount:
    """A summary's tokens as that ledger counts them: a bare total is counted as input."""
    m = summary.metadata
    unsplit = m.input_tokens is None and m.output_tokens is None
    return counted((m.tokens_used if unsplit else m.input_tokens) or 0, m.output_tokens or 0)


def _metered(contribution: Contribution) -> bool:
    m = contribution.metadata
    return not m.carried_over and (m.latency_ms is not None or m.tokens_used is not None)


def tally_of(state: DebateState) -> TokenTally:
    """The tokens ``state`` holds (a debate may be created with rounds already in it, e.g. an import)."""
    made = [c for c in state.all_contributions() if not c.metadata.carried_over]
    return TokenTally(
        ledger=sum((counted(e.input_tokens, e.output_tokens) for e in state.ledger), TokenCount()),
        calls=len(state.ledger),
        contributions=sum((call_tokens(c.metadata) for c in made), TokenCount()),
        metered=any(_metered(c) for c in made),
        solution=call_tokens(state.final_solution.metadata) if state.final_solution is not None else TokenCount(),
        summaries=tuple(
            (rnd.round_number, agent_id, summary_tokens(summary))
            for rnd in state.rounds
            for agent_id, summary in rnd.summaries.items()
        ),
        judge_summary=summary_tokens(state.judge_summary) if state.judge_summary is not None else TokenCount(),
    )


def advance_tally(tally: TokenTally, change: Change) -> TokenTally:
    """The tally after ``change``, following :func:`dialectic.core.changes.apply_change` (what replaces, what adds)."""
    if isinstance(change, CallRecorded):
        entry = change.entry
        return replace(
            tally, ledger=tally.ledger + counted(entry.input_tokens, entry.output_tokens), calls=tally.calls + 1
        )
    if isinstance(change, ContributionRecorded):
        c = change.contribution
        if c.metadata.carried_over:
            return tally
        return replace(
            tally, contributions=tally.contributions + call_tokens(c.metadata), metered=tally.metered or _metered(c)
        )
    if isinstance(change, SolutionRecorded):
        return replace(tally, solution=call_tokens(change.solution.metadata))
    if isinstance(change, SummaryRecorded):
        key = (change.round_number, change.summary.agent_id)
        kept = tuple(entry for entry in tally.summaries if entry[:2] != key)
        return replace(tally, summaries=(*kept, (*key, summary_tokens(change.summary))))
    if isinstance(change, JudgeSummaryRecorded):
        return replace(tally, judge_summary=summary_tokens(change.summary))
    return tally


def details_of(state: DebateState) -> ListingDetails:
    """The details of a debate created with ``state``."""
    saved = state.saved_config()
    return ListingDetails(
        first_line=first_line(state.problem)[:LINE_KEPT_CHARS],
        rounds=saved.debate.rounds if saved is not None else None,
        format=saved.debate.format if saved is not None else None,
        agents=tuple(agent.name for agent in state.agents),
        created_at=state.created_at,
        updated_at=state.updated_at,
        tokens=tally_of(state),
    )


def advance_details(details: ListingDetails | None, change: Change) -> ListingDetails | None:
    """The details after ``change`` (``None``, details not kept, stays so until the debate is created anew)."""
    if isinstance(change, DebateCreated):
        return details_of(change.state)
    if details is None:
        return None
    return replace(details, updated_at=change.at, tokens=advance_tally(details.tokens, change))


def advance_listed(entry: ListedDebate | None, change: Change) -> ListedDebate:
    """The debate's index row and details after ``change``: what both backends keep on every append
    (a new debate's ordinal is the backend's to set)."""
    if entry is None:
        return ListedDebate(advance_listing(None, change), advance_details(None, change))
    return replace(
        entry, listing=advance_listing(entry.listing, change), details=advance_details(entry.details, change)
    )


def details_from_log(changes: Iterable[Change]) -> ListingDetails | None:
    """The details of a stored log (to fill in details a store did not keep yet); ``None`` for an empty log."""
    details: ListingDetails | None = None
    for change in changes:
        details = advance_details(details, change)
    return details


def check_limit(limit: int | None) -> None:
    if limit is not None and limit < 0:
        raise ValueError(f"limit must not be negative, got {limit}")


def select_page(
    entries: Iterable[ListedDebate], *, status: str | None, limit: int | None, after: PageKey | None
) -> builtins.list[ListedDebate]:
    """A page of ``entries`` by the rules of :meth:`DebateStore.page` (for a backend that keeps them in memory)."""
    check_limit(limit)
    chosen = [
        entry
        for entry in entries
        if (status is None or entry.listing.status == status) and (after is None or entry.key < after)
    ]
    chosen.sort(key=lambda entry: entry.key, reverse=True)
    return chosen if limit is None else chosen[:limit]


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
