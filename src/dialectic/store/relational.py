"""What the two database backends (SQLite and Postgres) share: the tables' rows, the SQL that reads
and writes them, and every :class:`~dialectic.store.base.DebateStore` method built on them.

Two tables hold the debates: ``changes`` is the system of record (one row per change, never
updated), and ``debates`` is an index for listing, one row per debate, kept current by a small
UPDATE on every append. Its ``details`` column holds what a page of the web listing shows beyond
the index (:class:`~dialectic.store.base.ListingDetails`, as JSON), and ``details_seq`` the number
of changes those details reflect: any debate whose details are missing or behind its log gets
them filled in from its log when the store is opened (:meth:`RelationalStore._fill_details`).

A backend gives a :class:`Db`: a connection that runs the SQL written here (with ``?`` for each
parameter), and two hooks that serialize writers where its transactions do not already (SQLite's
``BEGIN IMMEDIATE`` takes the whole file; Postgres takes advisory locks). Timestamps are written
as fixed-width UTC ISO text, which SQLite keeps as text and Postgres casts to ``timestamptz``;
they read back as text or as datetimes, both of which :func:`moment` accepts.
"""

from __future__ import annotations

import builtins
import json
from abc import abstractmethod
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Protocol

from dialectic.core.changes import Change, DebateCreated, dump_change, parse_change
from dialectic.core.domain import DebateState, utc_now
from dialectic.store.base import (
    ClosingStore,
    DebateListing,
    ListedDebate,
    ListingDetails,
    PageKey,
    TokenCount,
    TokenTally,
    advance_listed,
    as_utc,
    check_batch,
    check_limit,
    details_from_log,
    fold_log,
    not_found,
    parse_log,
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

Row = tuple[Any, ...]


class Db(Protocol):
    """One connection of a backend, inside the transaction (or the autocommit reads) the store opened."""

    distinct: str
    """The null-safe "differs from" operator: ``IS NOT`` on SQLite, ``IS DISTINCT FROM`` on Postgres."""
    moment: str
    """The type of a timestamp column (``TEXT`` on SQLite)."""
    big: str
    """The type of an integer column that may outgrow 32 bits (a pid, a process's start, an ordinal)."""
    number_debates: str
    """The statement that numbers the debates already saved (their ``ordinal``) in the order they were saved."""

    def one(self, sql: str, params: Sequence[object] = ()) -> Row | None: ...

    def all(self, sql: str, params: Sequence[object] = ()) -> builtins.list[Row]: ...

    def run(self, sql: str, params: Sequence[object] = ()) -> None: ...

    def many(self, sql: str, rows: Sequence[Sequence[object]]) -> None: ...

    def lock_debate(self, debate_id: str) -> None:
        """Hold off, until this transaction ends, every other writer of ``debate_id``."""
        ...

    def lock_ordinals(self) -> None:
        """Hold off, until this transaction ends, every other transaction that creates a debate."""
        ...


Migration = Callable[[Db], None]


MIGRATIONS: builtins.list[Migration] = []
"""Every migration, in the order they run; a migration's name is its function's name."""


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_debates(db: Db) -> None:
    db.run(
        f"""
        CREATE TABLE debates (
            id TEXT PRIMARY KEY,
            problem TEXT NOT NULL,
            status TEXT NOT NULL,
            current_round INTEGER NOT NULL,
            created_at {db.moment} NOT NULL,
            updated_at {db.moment} NOT NULL
        )
        """
    )


@migration
def m002_changes(db: Db) -> None:
    db.run(
        f"""
        CREATE TABLE changes (
            debate_id TEXT NOT NULL REFERENCES debates (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            kind TEXT NOT NULL,
            payload TEXT NOT NULL,
            at {db.moment} NOT NULL,
            PRIMARY KEY (debate_id, seq)
        )
        """
    )


@migration
def m003_debates_listing_index(db: Db) -> None:
    db.run("CREATE INDEX debates_status_created ON debates (status, created_at)")
    db.run("CREATE INDEX debates_created ON debates (created_at)")


@migration
def m004_leases(db: Db) -> None:
    """One row per debate that was ever run: who holds, or last held, its lease (see :mod:`dialectic.store.leases`)."""
    db.run(
        f"""
        CREATE TABLE leases (
            debate_id TEXT PRIMARY KEY REFERENCES debates (id) ON DELETE CASCADE,
            owner TEXT NOT NULL,
            pid {db.big} NOT NULL,
            host TEXT NOT NULL,
            process_started {db.big},
            acquired_at {db.moment} NOT NULL,
            heartbeat_at {db.moment} NOT NULL,
            expires_at {db.moment} NOT NULL,
            released_at {db.moment}
        )
        """
    )


@migration
def m005_windows(db: Db) -> None:
    """Context windows learned from refusals, per endpoint and model (:class:`~dialectic.store.base.WindowMemory`)."""
    db.run(
        f"""
        CREATE TABLE windows (
            endpoint TEXT NOT NULL,
            model TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            learned_at {db.moment} NOT NULL,
            PRIMARY KEY (endpoint, model)
        )
        """
    )


@migration
def m006_listing_pages(db: Db) -> None:
    """Reading the listing a page at a time: each debate's ``ordinal`` (the order debates were saved in,
    which breaks ties between debates created at the same instant; on SQLite, the rowid order that did so
    until now), indexes that answer the listing's order, ``(created_at, ordinal)`` descending, without sorting
    (replacing the two on ``created_at`` alone), and the listing's details (filled in when the store
    opens)."""
    db.run(f"ALTER TABLE debates ADD COLUMN ordinal {db.big}")
    db.run(db.number_debates)
    db.run("CREATE UNIQUE INDEX debates_ordinal ON debates (ordinal)")
    db.run("DROP INDEX debates_status_created")
    db.run("DROP INDEX debates_created")
    db.run("CREATE INDEX debates_status_created_ordinal ON debates (status, created_at, ordinal)")
    db.run("CREATE INDEX debates_created_ordinal ON debates (created_at, ordinal)")
    db.run("ALTER TABLE debates ADD COLUMN details TEXT")
    db.run("ALTER TABLE debates ADD COLUMN details_seq INTEGER")


@migration
def m007_call_cache(db: Db) -> None:
    """The content-addressed call cache (:class:`~dialectic.store.base.CallCache`): each reply, by key."""
    db.run(
        f"""
        CREATE TABLE call_cache (
            key TEXT PRIMARY KEY,
            completion TEXT NOT NULL,
            created_at {db.moment} NOT NULL
        )
        """
    )


def migrate(db: Db) -> builtins.list[str]:
    """Run, in the caller's write transaction, the :data:`MIGRATIONS` this database has not seen yet;
    return their names."""
    db.run("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    applied = {row[0] for row in db.all("SELECT name FROM migrations")}
    ran: builtins.list[str] = []
    for fn in MIGRATIONS:
        if fn.__name__ in applied:
            continue
        fn(db)
        db.run("INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (fn.__name__, timestamp(utc_now())))
        ran.append(fn.__name__)
    return ran


def timestamp(moment: datetime) -> str:
    """Fixed-width UTC ISO text, so ordering the column as text orders it in time."""
    return as_utc(moment).isoformat(timespec="microseconds")


def moment(value: str | datetime) -> datetime:
    """A stored timestamp (text, or a datetime from a ``timestamptz`` column), in UTC."""
    return as_utc(value) if isinstance(value, datetime) else datetime.fromisoformat(value)


class RelationalStore(ClosingStore):
    """:class:`~dialectic.store.base.DebateStore` over a :class:`Db`; a backend opens the connections."""

    location: str

    @abstractmethod
    def _reading(self) -> AbstractContextManager[Db]:
        """A connection for reads (each statement sees what was committed before it)."""

    @abstractmethod
    def _writing(self, doing: str = "write to") -> AbstractContextManager[Db]:
        """A connection in a write transaction: committed at the end, rolled back on any error."""

    def _fill_details(self) -> int:
        """Fill in, from their logs, the details of debates that have none or whose details are behind
        their log; the number of debates filled in. Cheap when there is nothing to do (one indexed look
        per debate); a log that cannot be read leaves that debate without details (its listing then
        folds it, and reports what is wrong with it)."""
        with self._reading() as db:
            if db.one(_behind(db) + " LIMIT 1") is None:
                return 0
        with self._writing("open") as db:
            behind = [row[0] for row in db.all(_behind(db))]
            for debate_id in behind:
                payloads = [row[0] for row in db.all(_LOG, (debate_id,))]
                try:
                    details = details_from_log(parse_change(payload) for payload in payloads)
                except ValueError:
                    details = None
                db.run(
                    "UPDATE debates SET details = ?, details_seq = ? WHERE id = ?",
                    (dump_details(details) if details else None, len(payloads) or None, debate_id),
                )
        return len(behind)

    def append(self, debate_id: str, *changes: Change, holder: str | None = None) -> int:
        with self._writing() as db:
            db.lock_debate(debate_id)
            if holder is not None:
                current = read_lease(db, debate_id)
                if not is_held_by(current, holder):
                    raise lost_error(debate_id, current)
            return append_changes(db, debate_id, changes, self.location)

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
        with self._writing() as db:
            db.lock_debate(debate_id)
            if create is None and db.one(_EXISTS, (debate_id,)) is None:
                raise not_found(debate_id, self.location)
            current = read_lease(db, debate_id)
            grant = grant_lease(debate_id, current, owner, now=now, ttl=ttl, owner_gone=owner_gone)
            if create is not None:
                append_changes(db, debate_id, [create], self.location)
            write_lease(db, grant.lease)
        return grant

    def renew_lease(self, debate_id: str, owner_id: str, *, now: datetime) -> bool:
        return self._change_lease(debate_id, owner_id, lambda lease: renewed(lease, now))

    def release_lease(self, debate_id: str, owner_id: str, *, now: datetime) -> bool:
        return self._change_lease(debate_id, owner_id, lambda lease: replace(lease, released_at=now))

    def _change_lease(self, debate_id: str, owner_id: str, change: Callable[[Lease], Lease]) -> bool:
        with self._writing() as db:
            db.lock_debate(debate_id)
            lease = read_lease(db, debate_id)
            if lease is None or not is_held_by(lease, owner_id):
                return False
            write_lease(db, change(lease))
        return True

    def read_lease(self, debate_id: str) -> Lease | None:
        with self._reading() as db:
            return read_lease(db, debate_id)

    def load(self, debate_id: str) -> DebateState:
        return fold_log(debate_id, self.changes(debate_id), self.location)

    def remembered_window(self, endpoint: str, model: str) -> int | None:
        with self._reading() as db:
            row = db.one("SELECT tokens FROM windows WHERE endpoint = ? AND model = ?", (endpoint, model))
        return int(row[0]) if row is not None else None

    def remember_window(self, endpoint: str, model: str, tokens: int) -> None:
        with self._writing() as db:
            db.run(
                "INSERT INTO windows (endpoint, model, tokens, learned_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (endpoint, model)"
                " DO UPDATE SET tokens = excluded.tokens, learned_at = excluded.learned_at",
                (endpoint, model, tokens, timestamp(utc_now())),
            )

    def cached_call(self, key: str) -> str | None:
        with self._reading() as db:
            row = db.one("SELECT completion FROM call_cache WHERE key = ?", (key,))
        return str(row[0]) if row is not None else None

    def cache_call(self, key: str, value: str) -> None:
        with self._writing() as db:
            db.run(
                "INSERT INTO call_cache (key, completion, created_at) VALUES (?, ?, ?)"
                " ON CONFLICT (key) DO UPDATE SET completion = excluded.completion, created_at = excluded.created_at",
                (key, value, timestamp(utc_now())),
            )

    def changes(self, debate_id: str) -> builtins.list[Change]:
        with self._reading() as db:
            payloads = [row[0] for row in db.all(_LOG, (debate_id,))]
        if not payloads:
            raise not_found(debate_id, self.location)
        return parse_log(debate_id, payloads, self.location)

    def changes_since(self, debate_id: str, after: int) -> builtins.list[tuple[int, Change]]:
        with self._reading() as db:
            rows = db.all(
                "SELECT seq, payload FROM changes WHERE debate_id = ? AND seq > ? ORDER BY seq", (debate_id, after)
            )
            if not rows and db.one(_EXISTS, (debate_id,)) is None:
                raise not_found(debate_id, self.location)
        parsed = parse_log(debate_id, [payload for _, payload in rows], self.location)
        return [(seq, change) for (seq, _), change in zip(rows, parsed, strict=True)]

    def exists(self, debate_id: str) -> bool:
        with self._reading() as db:
            return db.one(_EXISTS, (debate_id,)) is not None

    def list(self, *, status: str | None = None, limit: int | None = None) -> builtins.list[DebateListing]:
        check_limit(limit)
        sql, params = select_listed(LISTING_COLUMNS, status=status, limit=limit, after=None)
        with self._reading() as db:
            rows = db.all(sql, params)
        return [listing(row[0], row[1:]) for row in rows]

    def page(
        self, *, status: str | None = None, limit: int, after: PageKey | None = None
    ) -> builtins.list[ListedDebate]:
        check_limit(limit)
        sql, params = select_listed(f"{LISTING_COLUMNS}, details, ordinal", status=status, limit=limit, after=after)
        with self._reading() as db:
            rows = db.all(sql, params)
        return [ListedDebate(listing(row[0], row[1:6]), load_details(row[6]), row[7]) for row in rows]


_EXISTS = "SELECT 1 FROM debates WHERE id = ?"
_LOG = "SELECT payload FROM changes WHERE debate_id = ? ORDER BY seq"
LISTING_COLUMNS = "id, problem, status, current_round, created_at, updated_at"
_LEASE_COLUMNS = "owner, pid, host, process_started, acquired_at, heartbeat_at, expires_at, released_at"


def _behind(db: Db) -> str:
    """Debates whose details do not reflect their whole log."""
    return (
        f"SELECT id FROM debates WHERE details_seq {db.distinct}"
        " (SELECT MAX(seq) FROM changes WHERE changes.debate_id = debates.id)"
    )


def select_listed(
    columns: str, *, status: str | None, limit: int | None, after: PageKey | None
) -> tuple[str, builtins.list[object]]:
    """The query for debates in the listing's order (:class:`PageKey` descending), which the indexes on
    ``(created_at, ordinal)`` and ``(status, created_at, ordinal)`` answer without sorting."""
    where: builtins.list[str] = []
    params: builtins.list[object] = []
    if status is not None:
        where.append("status = ?")
        params.append(status)
    if after is not None:
        where.append("(created_at, ordinal) < (?, ?)")
        params += [timestamp(after.created_at), after.ordinal]
    sql = f"SELECT {columns} FROM debates"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY created_at DESC, ordinal DESC"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return sql, params


def append_changes(db: Db, debate_id: str, changes: Sequence[Change], location: str) -> int:
    """Append ``changes`` inside the caller's transaction, following :meth:`DebateStore.append`'s rules;
    the number of the debate's last change."""
    rows = [(change.kind, dump_change(change), timestamp(change.at)) for change in changes]
    found = db.one(
        "SELECT problem, status, current_round, created_at, updated_at, details, details_seq FROM debates WHERE id = ?",
        (debate_id,),
    )
    check_batch(debate_id, changes, exists=found is not None, location=location)
    last_row = db.one("SELECT COALESCE(MAX(seq), 0) FROM changes WHERE debate_id = ?", (debate_id,))
    last_seq = int(last_row[0]) if last_row is not None else 0
    if not changes:
        return last_seq
    entry = _entry(debate_id, found, last_seq) if found else None
    for change in changes:
        entry = advance_listed(entry, change)
    assert entry is not None  # changes is not empty
    _write_entry(db, entry, details_seq=last_seq + len(rows), new=found is None)
    db.many(
        "INSERT INTO changes (debate_id, seq, kind, payload, at) VALUES (?, ?, ?, ?, ?)",
        [(debate_id, last_seq + n, *row) for n, row in enumerate(rows, start=1)],
    )
    return last_seq + len(rows)


def _entry(debate_id: str, found: Row, last_seq: int) -> ListedDebate:
    """The debate's stored index row and details; details behind its log (written by a version that kept
    none) are not advanced but dropped, to be filled in when the store is next opened."""
    details, details_seq = found[5:]
    return ListedDebate(listing(debate_id, found[:5]), load_details(details) if details_seq == last_seq else None)


def _write_entry(db: Db, entry: ListedDebate, *, details_seq: int, new: bool) -> None:
    shown = entry.listing
    details = dump_details(entry.details) if entry.details is not None else None
    kept_seq = details_seq if details is not None else None
    if new:
        db.lock_ordinals()
        db.run(
            "INSERT INTO debates (id, problem, status, current_round, created_at, updated_at, details, details_seq,"
            " ordinal) VALUES (?, ?, ?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(ordinal), 0) + 1 FROM debates))",
            (
                shown.id,
                shown.problem,
                shown.status,
                shown.current_round,
                timestamp(shown.created_at),
                timestamp(shown.updated_at),
                details,
                kept_seq,
            ),
        )
    else:
        db.run(
            "UPDATE debates SET status = ?, current_round = ?, updated_at = ?, details = ?, details_seq = ?"
            " WHERE id = ?",
            (shown.status, shown.current_round, timestamp(shown.updated_at), details, kept_seq, shown.id),
        )


def dump_details(details: ListingDetails) -> str:
    tokens = details.tokens
    return json.dumps(
        {
            "firstLine": details.first_line,
            "rounds": details.rounds,
            "format": details.format,
            "agents": builtins.list(details.agents),
            "createdAt": details.created_at.isoformat(),
            "updatedAt": details.updated_at.isoformat(),
            "tokens": {  # "ledger" is new with the ledger's count: details without it are folded again
                "ledger": _count_json(tokens.ledger),
                "calls": tokens.calls,
                "contributions": _count_json(tokens.contributions),
                "metered": tokens.metered,
                "solution": _count_json(tokens.solution),
                "summaries": [[r, agent, *_count_json(n)] for r, agent, n in tokens.summaries],
                "judgeSummary": _count_json(tokens.judge_summary),
            },
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def _count_json(count: TokenCount) -> builtins.list[int]:
    return [count.input, count.output, count.total]


def _count(value: Any) -> TokenCount:
    inputs, outputs, total = (int(n) for n in value)
    return TokenCount(inputs, outputs, total)


def load_details(text: str | None) -> ListingDetails | None:
    """Details as :func:`dump_details` wrote them; ``None`` for none, or for a value that is not such
    details (the listing then folds the debate's log instead)."""
    if text is None:
        return None
    try:
        value = json.loads(text)
        tokens = value["tokens"]
        return ListingDetails(
            first_line=str(value["firstLine"]),
            rounds=value["rounds"],
            format=value["format"],
            agents=tuple(str(name) for name in value["agents"]),
            created_at=datetime.fromisoformat(value["createdAt"]),
            updated_at=datetime.fromisoformat(value["updatedAt"]),
            tokens=TokenTally(
                ledger=_count(tokens["ledger"]),
                calls=int(tokens["calls"]),
                contributions=_count(tokens["contributions"]),
                metered=bool(tokens["metered"]),
                solution=_count(tokens["solution"]),
                summaries=tuple((int(r), str(agent), _count(n)) for r, agent, *n in tokens["summaries"]),
                judge_summary=_count(tokens["judgeSummary"]),
            ),
        )
    except (ValueError, TypeError, KeyError):
        return None


def read_lease(db: Db, debate_id: str) -> Lease | None:
    row = db.one(f"SELECT {_LEASE_COLUMNS} FROM leases WHERE debate_id = ?", (debate_id,))
    if row is None:
        return None
    owner, pid, host, started, acquired_at, heartbeat_at, expires_at, released_at = row
    return Lease(
        debate_id=debate_id,
        owner=LeaseOwner(id=owner, pid=pid, host=host, started=started),
        acquired_at=moment(acquired_at),
        heartbeat_at=moment(heartbeat_at),
        expires_at=moment(expires_at),
        released_at=moment(released_at) if released_at else None,
    )


def write_lease(db: Db, lease: Lease) -> None:
    updates = ", ".join(f"{column} = excluded.{column}" for column in _LEASE_COLUMNS.split(", "))
    db.run(
        f"INSERT INTO leases (debate_id, {_LEASE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        f" ON CONFLICT (debate_id) DO UPDATE SET {updates}",
        (
            lease.debate_id,
            lease.owner.id,
            lease.owner.pid,
            lease.owner.host,
            lease.owner.started,
            timestamp(lease.acquired_at),
            timestamp(lease.heartbeat_at),
            timestamp(lease.expires_at),
            timestamp(lease.released_at) if lease.released_at is not None else None,
        ),
    )


def listing(debate_id: str, row: Iterable[Any]) -> DebateListing:
    problem, status, current_round, created_at, updated_at = row
    return DebateListing(
        id=debate_id,
        problem=problem,
        status=status,
        current_round=current_round,
        created_at=moment(created_at),
        updated_at=moment(updated_at),
    )
