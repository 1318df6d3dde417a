"""The Postgres store: the SQLite store's tables and rules (:mod:`dialectic.store.relational`) in a
Postgres database, so that several processes on several machines share one record of debates.

Chosen when the store is a ``postgresql://`` (or ``postgres://``) URL; needs the ``postgres`` extra
(psycopg 3 and its connection pool). Connections come from a pool and run in autocommit mode; every
write is an explicit transaction. Where SQLite's ``BEGIN IMMEDIATE`` serializes every writer of the
file, Postgres serializes only what must be: a transaction that writes a debate (its log or its lease)
first takes a transaction-level advisory lock on that debate's id, so an append, an acquisition and a
renewal of the same debate queue up, and the lease's check-then-write is atomic exactly as on SQLite
(two processes racing for one lease: one wins, the other reads the winner's lease and is refused).
Creating a debate also takes one lock for all debates, for the ``ordinal`` that orders the listing.
The migrations run when a store is opened, under an advisory lock, so two processes starting together
neither race nor run one twice.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from dialectic.core.errors import StoreError
from dialectic.core.extras import MissingExtraError, require_extra
from dialectic.store.relational import Db, RelationalStore, Row, migrate

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

URL_SCHEMES = ("postgresql://", "postgres://")
FEATURE = "a postgresql:// store"

_LOCKS = 0x64696C63
"""The first key of every advisory lock this store takes (``dilc``), to keep clear of other users' locks."""
_MIGRATIONS_LOCK = 1
_ORDINALS_LOCK = 2
_DEBATE_LOCKS = 0x64696C64
"""The first key of the per-debate locks (``dild``); the second is a hash of the debate's id."""


def is_postgres_url(location: object) -> bool:
    """Whether ``location`` names a Postgres database rather than a path."""
    return isinstance(location, str) and location.strip().lower().startswith(URL_SCHEMES)


def shown_url(url: str) -> str:
    """``url`` without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rpartition("@")
    user = netloc[0].partition(":")[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[2]}"))


@cache
def _pg(sql: str) -> str:
    """The shared SQL (``?`` for each parameter) as psycopg takes it (``%s``)."""
    return sql.replace("?", "%s")


class PostgresDb:
    """:class:`~dialectic.store.relational.Db` on a psycopg connection."""

    distinct = "IS DISTINCT FROM"
    moment = "TIMESTAMPTZ"
    big = "BIGINT"
    number_debates = (
        "UPDATE debates SET ordinal = numbered.n FROM"
        " (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM debates) AS numbered"
        " WHERE debates.id = numbered.id"
    )

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def one(self, sql: str, params: Sequence[object] = ()) -> Row | None:
        row: Row | None = self.conn.execute(_pg(sql), params).fetchone()
        return row

    def all(self, sql: str, params: Sequence[object] = ()) -> builtins.list[Row]:
        return self.conn.execute(_pg(sql), params).fetchall()

    def run(self, sql: str, params: Sequence[object] = ()) -> None:
        self.conn.execute(_pg(sql), params)

    def many(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        with self.conn.cursor() as cursor:
            cursor.executemany(_pg(sql), rows)

    def lock_debate(self, debate_id: str) -> None:
        self.conn.execute("SELECT pg_advisory_xact_lock(%s::integer, hashtext(%s::text))", (_DEBATE_LOCKS, debate_id))

    def lock_ordinals(self) -> None:
        self._lock(_ORDINALS_LOCK)

    def lock_migrations(self) -> None:
        self._lock(_MIGRATIONS_LOCK)

    def _lock(self, key: int) -> None:
        self.conn.execute("SELECT pg_advisory_xact_lock(%s::integer, %s::integer)", (_LOCKS, key))


_GONE_STATES = ("57P01", "57P02", "57P03")
"""Postgres's ``admin_shutdown``, ``crash_shutdown`` and ``cannot_connect_now``: the server is going or not yet back."""


def _unreachable(psycopg_module: Any, exc: Exception) -> bool:
    """Whether ``exc`` says the server could not be reached or went away (not: the database refused the work).

    A connection that could not be had (from the pool or at all) carries no SQLSTATE; one cut while in
    use is class ``08``; a server stopping or starting says so by one of :data:`_GONE_STATES`.
    """
    if not isinstance(exc, psycopg_module.OperationalError):
        return False
    state = getattr(exc, "sqlstate", None)
    return state is None or state.startswith("08") or state in _GONE_STATES


def _drivers() -> tuple[Any, Any]:
    """psycopg and its pool, or the one-line :class:`MissingExtraError` (exit 4) that names the extra."""
    require_extra(FEATURE, "postgres")
    try:
        import psycopg
        from psycopg_pool import ConnectionPool
    except ImportError as exc:  # there, but broken
        raise MissingExtraError(FEATURE, "postgres", exc.name or "psycopg") from None
    return psycopg, ConnectionPool


class PostgresStore(RelationalStore):
    """:class:`~dialectic.store.base.DebateStore` in a Postgres database, through a connection pool
    (shareable between threads: each use borrows a connection)."""

    def __init__(self, url: str, *, max_connections: int = 8, timeout: float = 10.0) -> None:
        """Connect to ``url`` and bring its schema up to date; a database that cannot be reached is a
        :class:`StoreError`, a missing driver a :class:`MissingExtraError`."""
        psycopg_module, pool_class = _drivers()
        self._psycopg = psycopg_module
        self.url = url.strip()
        self.location = shown_url(self.url)
        self._closed = False
        try:
            first = psycopg_module.connect(self.url, autocommit=True, connect_timeout=max(1, round(timeout)))
        except psycopg_module.Error as exc:
            raise self._error(exc, "open") from exc
        with self._translated("open"), first, first.transaction():
            db = PostgresDb(first)
            db.lock_migrations()
            migrate(db)
        self._pool: ConnectionPool[Any] = pool_class(
            self.url,
            min_size=1,
            max_size=max(1, max_connections),
            kwargs={"autocommit": True},
            timeout=timeout,
            open=False,
            name="dialectic-store",
        )
        try:
            with self._translated("open"):
                self._pool.open()
            self._fill_details()
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"PostgresStore({self.location!r})"

    def _error(self, exc: Exception, doing: str) -> StoreError:
        if self._closed:
            reason = "the store is closed"
        else:
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
            reason = lines[0] if lines else type(exc).__name__
        error = StoreError(f"cannot {doing} the debate store {self.location}: {reason}", detail=str(exc))
        error.unreachable = not self._closed and _unreachable(self._psycopg, exc)
        return error

    @contextmanager
    def _translated(self, doing: str) -> Iterator[None]:
        if self._closed:
            raise StoreError(f"cannot {doing} the debate store {self.location}: the store is closed")
        try:
            yield
        except self._psycopg.Error as exc:
            raise self._error(exc, doing) from exc

    @contextmanager
    def _reading(self) -> Iterator[Db]:
        with self._translated("read"), self._pool.connection() as conn:
            yield PostgresDb(conn)

    @contextmanager
    def _writing(self, doing: str = "write to") -> Iterator[Db]:
        with self._translated(doing), self._pool.connection() as conn, conn.transaction():
            yield PostgresDb(conn)

    def close(self) -> None:
        self._closed = True
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.close()
