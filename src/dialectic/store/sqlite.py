"""The SQLite store: one database file holding every debate as an append-only change log.

Two tables: ``changes`` is the system of record (one row per change, never updated), and
``debates`` is an index for listing, one row per debate, kept current by a small UPDATE
on every append. Its ``details`` column holds what a page of the web listing shows beyond
the index (:class:`~dialectic.store.base.ListingDetails`, as JSON), and ``details_seq`` the
number of changes those details reflect: when a database is opened, any debate whose details
are missing or behind its log (a file from a version that kept none, or written by one since)
gets them filled in from its log. The schema is built by ordered, named migrations recorded
in a ``migrations`` table, so a file created by an older version is brought up to date when
it is opened.

The connection runs in autocommit mode and every write is an explicit
``BEGIN IMMEDIATE`` transaction: taking the write lock up front means two processes
appending to the same file queue up (``timeout``) instead of failing on a lock upgrade.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from dialectic.core.changes import Change, DebateCreated, dump_change, parse_change
from dialectic.core.domain import DebateState, utc_now
from dialectic.core.errors import StoreError
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

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[Migration] = []
"""Every migration, in the order they run; a migration's name is its function's name."""


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_debates(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE debates (
            id TEXT PRIMARY KEY,
            problem TEXT NOT NULL,
            status TEXT NOT NULL,
            current_round INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )
        """
    )


@migration
def m002_changes(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE changes (
            debate_id TEXT NOT NULL REFERENCES debates (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            kind TEXT NOT NULL,
            payload TEXT NOT NULL,
            at TEXT NOT NULL,
            PRIMARY KEY (debate_id, seq)
        )
        """
    )


@migration
def m003_debates_listing_index(db: sqlite3.Connection) -> None:
    db.execute("CREATE INDEX debates_status_created ON debates (status, created_at)")
    db.execute("CREATE INDEX debates_created ON debates (created_at)")


@migration
def m004_leases(db: sqlite3.Connection) -> None:
    """One row per debate that was ever run: who holds, or last held, its lease (see :mod:`dialectic.store.leases`)."""
    db.execute(
        """
        CREATE TABLE leases (
            debate_id TEXT PRIMARY KEY REFERENCES debates (id) ON DELETE CASCADE,
            owner TEXT NOT NULL,
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            process_started INTEGER,
            acquired_at TEXT NOT NULL,
            heartbeat_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            released_at TEXT
        )
        """
    )


@migration
def m005_windows(db: sqlite3.Connection) -> None:
    """Context windows learned from refusals, per endpoint and model (:class:`~dialectic.store.base.WindowMemory`)."""
    db.execute(
        """
        CREATE TABLE windows (
            endpoint TEXT NOT NULL,
            model TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            learned_at TEXT NOT NULL,
            PRIMARY KEY (endpoint, model)
        )
        """
    )


@migration
def m006_listing_pages(db: sqlite3.Connection) -> None:
    """Reading the listing a page at a time: each debate's ``ordinal`` (the order debates were saved in,
    which breaks ties between debates created at the same instant; the rowid order that did so until now),
    indexes that answer the listing's order, ``(created_at, ordinal)`` descending, without sorting
    (replacing the two on ``created_at`` alone), and the listing's details (filled in when the store
    opens: see :func:`fill_details`)."""
    db.execute("ALTER TABLE debates ADD COLUMN ordinal INTEGER")
    db.execute("UPDATE debates SET ordinal = rowid")
    db.execute("CREATE UNIQUE INDEX debates_ordinal ON debates (ordinal)")
    db.execute("DROP INDEX debates_status_created")
    db.execute("DROP INDEX debates_created")
    db.execute("CREATE INDEX debates_status_created_ordinal ON debates (status, created_at, ordinal)")
    db.execute("CREATE INDEX debates_created_ordinal ON debates (created_at, ordinal)")
    db.execute("ALTER TABLE debates ADD COLUMN details TEXT")
    db.execute("ALTER TABLE debates ADD COLUMN details_seq INTEGER")


@migration
def m007_call_cache(db: sqlite3.Connection) -> None:
    """The content-addressed call cache (:class:`~dialectic.store.base.CallCache`): each reply, by key."""
    db.execute(
        """
        CREATE TABLE call_cache (
            key TEXT PRIMARY KEY,
            completion TEXT NOT NULL,
            created_at TEXT NOT NULL
        )
        """
    )


def migrate(db: sqlite3.Connection) -> list[str]:
    """Run the migrations this database has not seen yet; return their names."""
    with transaction(db):
        db.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        applied = {row[0] for row in db.execute("SELECT name FROM migrations")}
        ran: list[str] = []
        for fn in MIGRATIONS:
            if fn.__name__ in applied:
                continue
            fn(db)
            db.execute("INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (fn.__name__, _timestamp(utc_now())))
            ran.append(fn.__name__)
    return ran


_BEHIND = (
    "SELECT id FROM debates"
    " WHERE details_seq IS NOT (SELECT MAX(seq) FROM changes WHERE changes.debate_id = debates.id)"
)
"""Debates whose details do not reflect their whole log."""


def fill_details(db: sqlite3.Connection) -> int:
    """Fill in, from their logs, the details of debates that have none or whose details are behind
    their log; the number of debates filled in. Cheap when there is nothing to do (one indexed look
    per debate); a log that cannot be read leaves that debate without details (its listing then
    folds it, and reports what is wrong with it)."""
    if db.execute(_BEHIND + " LIMIT 1").fetchone() is None:
        return 0
    with transaction(db):
        behind = [row[0] for row in db.execute(_BEHIND).fetchall()]
        for debate_id in behind:
            payloads = [
                row[0]
                for row in db.execute("SELECT payload FROM changes WHERE debate_id = ? ORDER BY seq", (debate_id,))
            ]
            try:
                details = details_from_log(parse_change(payload) for payload in payloads)
            except ValueError:
                details = None
            db.execute(
                "UPDATE debates SET details = ?, details_seq = ? WHERE id = ?",
                (_dump_details(details) if details else None, len(payloads) or None, debate_id),
            )
    return len(behind)


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """An explicit write transaction on an autocommit connection: commit, or roll back on any error."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.rollback()
        raise


def _timestamp(moment: datetime) -> str:
    """Fixed-width UTC ISO text, so ordering the column as text orders it in time."""
    return as_utc(moment).isoformat(timespec="microseconds")


_REASONS: tuple[tuple[str, str], ...] = (
    ("SQLITE_NOTADB", "the file is not a SQLite database"),
    ("SQLITE_CORRUPT", "the database file is corrupt"),
    ("SQLITE_READONLY", "the database is read-only"),
    ("SQLITE_CANTOPEN", "the database file cannot be opened (is the path a directory, or not writable?)"),
    ("SQLITE_BUSY", "the database is locked by another process"),
    ("SQLITE_FULL", "the disk is full"),
    ("SQLITE_PERM", "permission denied"),
)


def _store_error(exc: sqlite3.Error, location: str, doing: str) -> StoreError:
    """Translate a sqlite3 error into a one-line :class:`StoreError` a user can act on."""
    name = getattr(exc, "sqlite_errorname", None) or ""
    reason = next((text for code, text in _REASONS if name.startswith(code)), None)
    if reason is None:
        reason = "the store is closed" if isinstance(exc, sqlite3.ProgrammingError) else str(exc)
    return StoreError(f"cannot {doing} the debate store {location}: {reason}", detail=f"{name} {exc}".strip())


class SqliteStore(ClosingStore):
    """:class:`~dialectic.store.base.DebateStore` on a SQLite file (WAL mode).

    One connection, shareable between threads: every use of it holds ``self._lock``.
    """

    def __init__(self, path: str | Path, *, timeout: float = 5.0, create: bool = True) -> None:
        """Open the database at ``path``; with ``create=False`` a missing file is an error, never created."""
        self.path = Path(path).expanduser()
        self.location = str(self.path)
        self._lock = threading.Lock()
        if create:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"cannot create the directory for the debate store {self.location}: {exc.strerror or exc}"
                ) from exc
        target = str(self.path) if create else f"{self.path.absolute().as_uri()}?mode=rw"
        try:
            self._db = sqlite3.connect(
                target, timeout=timeout, isolation_level=None, check_same_thread=False, uri=not create
            )
        except sqlite3.Error as exc:
            raise _store_error(exc, self.location, "open") from exc
        try:
            with self._guard("open"):
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute("PRAGMA foreign_keys=ON")
                migrate(self._db)
                fill_details(self._db)
        except BaseException:
            self._db.close()
            raise

    def __repr__(self) -> str:
        return f"SqliteStore({self.location!r})"

    @contextmanager
    def _guard(self, doing: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._db
            except sqlite3.Error as exc:
                raise _store_error(exc, self.location, doing) from exc

    def append(self, debate_id: str, *changes: Change, holder: str | None = None) -> int:
        with self._guard("write to") as db, transaction(db):
            if holder is not None:
                current = _read_lease(db, debate_id)
                if not is_held_by(current, holder):
                    raise lost_error(debate_id, current)
            return _append(db, debate_id, changes, self.location)

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
        with self._guard("write to") as db, transaction(db):
            if create is None and db.execute("SELECT 1 FROM debates WHERE id = ?", (debate_id,)).fetchone() is None:
                raise not_found(debate_id, self.location)
            current = _read_lease(db, debate_id)
            grant = grant_lease(debate_id, current, owner, now=now, ttl=ttl, owner_gone=owner_gone)
            if create is not None:
                _append(db, debate_id, [create], self.location)
            _write_lease(db, grant.lease)
        return grant

    def renew_lease(self, debate_id: str, owner_id: str, *, now: datetime) -> bool:
        with self._guard("write to") as db, transaction(db):
            lease = _read_lease(db, debate_id)
            if lease is None or not is_held_by(lease, owner_id):
                return False
            _write_lease(db, renewed(lease, now))
        return True

    def release_lease(self, debate_id: str, owner_id: str, *, now: datetime) -> bool:
        with self._guard("write to") as db, transaction(db):
            lease = _read_lease(db, debate_id)
            if lease is None or not is_held_by(lease, owner_id):
                return False
            _write_lease(db, replace(lease, released_at=now))
        return True

    def read_lease(self, debate_id: str) -> Lease | None:
        with self._guard("read") as db:
            return _read_lease(db, debate_id)

    def load(self, debate_id: str) -> DebateState:
        return fold_log(debate_id, self.changes(debate_id), self.location)

    def remembered_window(self, endpoint: str, model: str) -> int | None:
        with self._guard("read") as db:
            row = db.execute(
                "SELECT tokens FROM windows WHERE endpoint = ? AND model = ?", (endpoint, model)
            ).fetchone()
        return int(row[0]) if row is not None else None

    def remember_window(self, endpoint: str, model: str, tokens: int) -> None:
        with self._guard("write to") as db, transaction(db):
            db.execute(
                "INSERT OR REPLACE INTO windows (endpoint, model, tokens, learned_at) VALUES (?, ?, ?, ?)",
                (endpoint, model, tokens, _timestamp(utc_now())),
            )

    def cached_call(self, key: str) -> str | None:
        with self._guard("read") as db:
            row = db.execute("SELECT completion FROM call_cache WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row is not None else None

    def cache_call(self, key: str, value: str) -> None:
        with self._guard("write to") as db, transaction(db):
            db.execute(
                "INSERT OR REPLACE INTO call_cache (key, completion, created_at) VALUES (?, ?, ?)",
                (key, value, _timestamp(utc_now())),
            )

    def changes(self, debate_id: str) -> builtins.list[Change]:
        with self._guard("read") as db:
            payloads = [
                row[0]
                for row in db.execute("SELECT payload FROM changes WHERE debate_id = ? ORDER BY seq", (debate_id,))
            ]
        if not payloads:
            raise not_found(debate_id, self.location)
        return parse_log(debate_id, payloads, self.location)

    def changes_since(self, debate_id: str, after: int) -> builtins.list[tuple[int, Change]]:
        with self._guard("read") as db:
            rows = db.execute(
                "SELECT seq, payload FROM changes WHERE debate_id = ? AND seq > ? ORDER BY seq", (debate_id, after)
            ).fetchall()
            if not rows and db.execute("SELECT 1 FROM debates WHERE id = ?", (debate_id,)).fetchone() is None:
                raise not_found(debate_id, self.location)
        parsed = parse_log(debate_id, [payload for _, payload in rows], self.location)
        return [(seq, change) for (seq, _), change in zip(rows, parsed, strict=True)]

    def exists(self, debate_id: str) -> bool:
        with self._guard("read") as db:
            return db.execute("SELECT 1 FROM debates WHERE id = ?", (debate_id,)).fetchone() is not None

    def list(self, *, status: str | None = None, limit: int | None = None) -> builtins.list[DebateListing]:
        check_limit(limit)
        sql, params = _select_listed(_LISTING_COLUMNS, status=status, limit=limit, after=None)
        with self._guard("read") as db:
            rows = db.execute(sql, params).fetchall()
        return [_listing(row[0], row[1:]) for row in rows]

    def page(
        self, *, status: str | None = None, limit: int, after: PageKey | None = None
    ) -> builtins.list[ListedDebate]:
        check_limit(limit)
        sql, params = _select_listed(f"{_LISTING_COLUMNS}, details, ordinal", status=status, limit=limit, after=after)
        with self._guard("read") as db:
            rows = db.execute(sql, params).fetchall()
        return [ListedDebate(_listing(row[0], row[1:6]), _load_details(row[6]), row[7]) for row in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()


_LISTING_COLUMNS = "id, problem, status, current_round, created_at, updated_at"


def _select_listed(
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
        params += [_timestamp(after.created_at), after.ordinal]
    sql = f"SELECT {columns} FROM debates"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY created_at DESC, ordinal DESC"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return sql, params


def _append(db: sqlite3.Connection, debate_id: str, changes: Sequence[Change], location: str) -> int:
    """Append ``changes`` inside the caller's transaction, following :meth:`SqliteStore.append`'s rules;
    the number of the debate's last change."""
    rows = [(change.kind, dump_change(change), _timestamp(change.at)) for change in changes]
    found = db.execute(
        "SELECT problem, status, current_round, created_at, updated_at, details, details_seq FROM debates WHERE id = ?",
        (debate_id,),
    ).fetchone()
    check_batch(debate_id, changes, exists=found is not None, location=location)
    (last_seq,) = db.execute("SELECT COALESCE(MAX(seq), 0) FROM changes WHERE debate_id = ?", (debate_id,)).fetchone()
    if not changes:
        return int(last_seq)
    entry = _entry(debate_id, found, last_seq) if found else None
    for change in changes:
        entry = advance_listed(entry, change)
    assert entry is not None  # changes is not empty
    _write_entry(db, entry, details_seq=int(last_seq) + len(rows), new=found is None)
    db.executemany(
        "INSERT INTO changes (debate_id, seq, kind, payload, at) VALUES (?, ?, ?, ?, ?)",
        [(debate_id, last_seq + n, *row) for n, row in enumerate(rows, start=1)],
    )
    return int(last_seq) + len(rows)


def _entry(debate_id: str, found: tuple[Any, ...], last_seq: int) -> ListedDebate:
    """The debate's stored index row and details; details behind its log (written by a version that kept
    none) are not advanced but dropped, to be filled in when the store is next opened."""
    details, details_seq = found[5:]
    return ListedDebate(_listing(debate_id, found[:5]), _load_details(details) if details_seq == last_seq else None)


def _write_entry(db: sqlite3.Connection, entry: ListedDebate, *, details_seq: int, new: bool) -> None:
    listing = entry.listing
    details = _dump_details(entry.details) if entry.details is not None else None
    kept_seq = details_seq if details is not None else None
    if new:
        db.execute(
            "INSERT INTO debates (id, problem, status, current_round, created_at, updated_at, details, details_seq,"
            " ordinal) VALUES (?, ?, ?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(ordinal), 0) + 1 FROM debates))",
            (
                listing.id,
                listing.problem,
                listing.status,
                listing.current_round,
                _timestamp(listing.created_at),
                _timestamp(listing.updated_at),
                details,
                kept_seq,
            ),
        )
    else:
        db.execute(
            "UPDATE debates SET status = ?, current_round = ?, updated_at = ?, details = ?, details_seq = ?"
            " WHERE id = ?",
            (listing.status, listing.current_round, _timestamp(listing.updated_at), details, kept_seq, listing.id),
        )


def _dump_details(details: ListingDetails) -> str:
    tokens = details.tokens
    return json.dumps(
        {
            "firstLine": details.first_line,
            "rounds": details.rounds,
            "format": details.format,
            "agents": list(details.agents),
            "createdAt": details.created_at.isoformat(),
            "updatedAt": details.updated_at.isoformat(),
            "tokens": {
                "contributions": _count_json(tokens.contributions),
                "solution": _count_json(tokens.solution),
                "summaries": [list(entry) for entry in tokens.summaries],
                "judgeSummary": tokens.judge_summary,
            },
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def _count_json(count: TokenCount) -> list[int]:
    return [count.input, count.output, count.total]


def _load_details(text: str | None) -> ListingDetails | None:
    """Details as :func:`_dump_details` wrote them; ``None`` for none, or for a value that is not such
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
                contributions=TokenCount(*(int(n) for n in tokens["contributions"])),
                solution=TokenCount(*(int(n) for n in tokens["solution"])),
                summaries=tuple((int(r), str(agent), int(n)) for r, agent, n in tokens["summaries"]),
                judge_summary=int(tokens["judgeSummary"]),
            ),
        )
    except (ValueError, TypeError, KeyError):
        return None


def _read_lease(db: sqlite3.Connection, debate_id: str) -> Lease | None:
    row = db.execute(
        "SELECT owner, pid, host, process_started, acquired_at, heartbeat_at, expires_at, released_at"
        " FROM leases WHERE debate_id = ?",
        (debate_id,),
    ).fetchone()
    if row is None:
        return None
    owner, pid, host, started, acquired_at, heartbeat_at, expires_at, released_at = row
    return Lease(
        debate_id=debate_id,
        owner=LeaseOwner(id=owner, pid=pid, host=host, started=started),
        acquired_at=datetime.fromisoformat(acquired_at),
        heartbeat_at=datetime.fromisoformat(heartbeat_at),
        expires_at=datetime.fromisoformat(expires_at),
        released_at=datetime.fromisoformat(released_at) if released_at else None,
    )


def _write_lease(db: sqlite3.Connection, lease: Lease) -> None:
    db.execute(
        "INSERT OR REPLACE INTO leases (debate_id, owner, pid, host, process_started, acquired_at, heartbeat_at,"
        " expires_at, released_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            lease.debate_id,
            lease.owner.id,
            lease.owner.pid,
            lease.owner.host,
            lease.owner.started,
            _timestamp(lease.acquired_at),
            _timestamp(lease.heartbeat_at),
            _timestamp(lease.expires_at),
            _timestamp(lease.released_at) if lease.released_at is not None else None,
        ),
    )


def _listing(debate_id: str, row: tuple[str, str, int, str, str]) -> DebateListing:
    problem, status, current_round, created_at, updated_at = row
    return DebateListing(
        id=debate_id,
        problem=problem,
        status=status,
        current_round=current_round,
        created_at=datetime.fromisoformat(created_at),
        updated_at=datetime.fromisoformat(updated_at),
    )
