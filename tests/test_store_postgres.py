"""Postgres specifics (the contract runs on it with the other backends): migrations, locations, errors."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from dialectic.core.errors import InvalidArgumentsError, StoreError
from dialectic.store import open_store, resolve_data_dir, resolve_store, shown_url
from dialectic.store.postgres import PostgresStore, is_postgres_url
from dialectic.store.relational import MIGRATIONS
from tests.test_store import full_debate, new_debate

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")


def raw(url: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(sql).fetchall()


@pytest.fixture
def bare_postgres(postgres_url: str) -> Iterator[str]:
    """The database with none of the store's tables: as a store finds a new database."""

    def drop() -> None:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS changes, leases, debates, windows, call_cache, migrations CASCADE")

    drop()
    yield postgres_url
    drop()


def test_stores_opening_a_new_database_together_run_each_migration_once(bare_postgres: str) -> None:
    opened: list[PostgresStore] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def open_one() -> None:
        barrier.wait()
        try:
            opened.append(PostgresStore(bare_postgres))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(opened) == 4
    names = [row[0] for row in raw(bare_postgres, "SELECT name FROM migrations ORDER BY name")]
    assert names == [fn.__name__ for fn in MIGRATIONS]
    opened[0].append("deb-1", *full_debate())
    assert opened[3].load("deb-1") == opened[1].load("deb-1")
    for store in opened:
        store.close()


def test_the_schema_is_postgres_typed_and_reopens_with_the_same_debates(empty_postgres: str) -> None:
    with PostgresStore(empty_postgres) as store:
        store.append("deb-1", *full_debate())
        first, listing = store.load("deb-1"), store.list()
    types = dict(
        raw(
            empty_postgres, "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'debates'"
        )
    )
    assert types["created_at"] == "timestamp with time zone" and types["ordinal"] == "bigint"
    with PostgresStore(empty_postgres) as reopened:
        assert reopened.load("deb-1") == first and reopened.list() == listing
        assert reopened.changes("deb-1") == full_debate()


def test_the_store_is_chosen_by_a_url_from_the_flag_or_the_environment(empty_postgres: str) -> None:
    assert is_postgres_url(empty_postgres) and is_postgres_url("postgres://h/d") and not is_postgres_url("/tmp/x")
    assert resolve_store(empty_postgres, {}) == empty_postgres
    assert resolve_store(None, {"DIALECTIC_STORE": empty_postgres, "DIALECTIC_HOME": "/elsewhere"}) == empty_postgres
    with open_store(resolve_store(None, {"DIALECTIC_STORE": empty_postgres})) as store:
        assert isinstance(store, PostgresStore)
        store.append("deb-1", new_debate())
    with open_store(empty_postgres, create=False) as reading:
        assert [d.id for d in reading.list()] == ["deb-1"]
    with pytest.raises(InvalidArgumentsError, match="give --store a directory"):
        resolve_data_dir(empty_postgres, {})


def test_a_password_never_shows_in_the_location() -> None:
    assert (
        shown_url("postgresql://me:s3cret@db:5432/x?sslmode=require") == "postgresql://me:***@db:5432/x?sslmode=require"
    )
    assert shown_url("postgresql://me@db/x") == "postgresql://me@db/x"
    with pytest.raises(StoreError) as caught:
        PostgresStore("postgresql://me:s3cret@127.0.0.1:1/x", timeout=2)
    assert str(caught.value).startswith("cannot open the debate store postgresql://me:***@127.0.0.1:1/x: ")
    assert "s3cret" not in str(caught.value) and "\n" not in str(caught.value)
