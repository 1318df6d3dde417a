"""The SQLite store: one database file holding every debate as an append-only change log.

The tables, and every read and write of them, are :mod:`dialectic.store.relational`'s (shared with
the Postgres store); this module opens the file and keeps its schema. The schema is built by ordered,
named migrations recorded in a ``migrations`` table, so a file created by an older version is brought
up to date when it is opened; any debate whose listing details are missing or behind its log (a file
from a version that kept none, or written by one since) then gets them filled in from its log.

The connection runs in autocommit mode and every write is an explicit
``BEGIN IMMEDIATE`` transaction: taking the write lock up front means two processes
appending to the same file queue up (``timeout``) instead of failing on a lock upgrade.
"""

from __future__ import annotations

import builtins
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from dialectic.core.errors import StoreError
from dialectic.store.relational import MIGRATIONS, Db, RelationalStore, Row, migrate, select_listed


class SqliteDb:
    """:class:`~dialectic.store.relational.Db` on a sqlite3 connection; ``BEGIN IMMEDIATE`` already
    serializes every writer of the file, so the locks are nothing more."""

    distinct = "IS NOT"
    moment = "TEXT"
    big = "INTEGER"
    number_debates = "UPDATE debates SET ordinal = rowid"

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def one(self, sql: str, params: Sequence[object] = ()) -> Row | None:
        row: Row | None = self.db.execute(sql, params).fetchone()
        return row

    def all(self, sql: str, params: Sequence[object] = ()) -> builtins.list[Row]:
        return self.db.execute(sql, params).fetchall()

    def run(self, sql: str, params: Sequence[object] = ()) -> None:
        self.db.execute(sql, params)

    def many(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        self.db.executemany(sql, rows)

    def lock_debate(self, debate_id: str) -> None:
        pass

    def lock_ordinals(self) -> None:
        pass


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


_REASONS: tuple[tuple[str, str], ...] = (
    ("SQLITE_NOTADB", "the file is not a SQLite database"),
    ("SQLITE_CORRUPT", "the database file is corrupt"),
    ("SQLITE_READONLY", "the database is read-only"),
    ("SQLITE_CANTOPEN", "the database file cannot be opened (is the path a directory, or not writable?)"),
    ("SQLITE_BUSY", "the database is locked by another process"),
    ("SQLITE_FULL", "the disk is full"),
    ("SQLITE_PERM", "permission denied"),
)


OPEN_RETRY_S = 0.05
"""The pause between two tries to open a file another process holds. SQLite waits out most locks itself
(``timeout``), but not every one met while a file is opened: switching a new file to WAL, or reading
the WAL index while another process checkpoints, can answer ``SQLITE_BUSY`` at once. Seen with the
workers of a Ray batch opening the one file together."""


def _busy(exc: StoreError) -> bool:
    return (exc.detail or "").startswith("SQLITE_BUSY")


def _store_error(exc: sqlite3.Error, location: str, doing: str) -> StoreError:
    """Translate a sqlite3 error into a one-line :class:`StoreError` a user can act on."""
    name = getattr(exc, "sqlite_errorname", None) or ""
    reason = next((text for code, text in _REASONS if name.startswith(code)), None)
    if reason is None:
        reason = "the store is closed" if isinstance(exc, sqlite3.ProgrammingError) else str(exc)
    return StoreError(f"cannot {doing} the debate store {location}: {reason}", detail=f"{name} {exc}".strip())


class SqliteStore(RelationalStore):
    """:class:`~dialectic.store.base.DebateStore` on a SQLite file (WAL mode).

    One connection, shareable between threads: every use of it holds ``self._lock``.
    """

    def __init__(self, path: str | Path, *, timeout: float = 30.0, create: bool = True) -> None:
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
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._prepare()
                break
            except StoreError as exc:
                if not _busy(exc) or time.monotonic() >= deadline:
                    self._db.close()
                    raise
                time.sleep(OPEN_RETRY_S)
            except BaseException:
                self._db.close()
                raise

    def _prepare(self) -> None:
        """WAL mode, the schema brought up to date, the listing details filled in."""
        with self._guard("open") as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
        with self._writing("open") as db:
            migrate(db)
        self._fill_details()

    def __repr__(self) -> str:
        return f"SqliteStore({self.location!r})"

    @contextmanager
    def _guard(self, doing: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._db
            except sqlite3.Error as exc:
                raise _store_error(exc, self.location, doing) from exc

    @contextmanager
    def _reading(self) -> Iterator[Db]:
        with self._guard("read") as db:
            yield SqliteDb(db)

    @contextmanager
    def _writing(self, doing: str = "write to") -> Iterator[Db]:
        with self._guard(doing) as db, transaction(db):
            yield SqliteDb(db)

    def close(self) -> None:
        with self._lock:
            self._db.close()


__all__ = ["MIGRATIONS", "SqliteStore", "transaction"]

_select_listed = select_listed
"""The listing's query, as SQLite runs it (tests read its query plan)."""
