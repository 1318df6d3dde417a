"""Fixtures for the whole suite."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from dialectic.llm.openai_provider import OpenAIProvider
from dialectic.store import DebateStore, MemoryStore, SqliteStore
from tests.postgres_cluster import Unavailable, cluster, empty

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    # Started in the background by a non-interactive shell (`make test &`, `nohup … &`), which ignores
    # SIGINT: every command the tests start would inherit that, and Python leaves an ignored SIGINT
    # ignored, so the tests that send a debate Ctrl-C would see it run on to the end. The commands
    # the tests start hear Ctrl-C as a user's terminal would deliver it.
    signal.signal(signal.SIGINT, signal.default_int_handler)

STORE_BACKENDS = ("sqlite", "memory", "postgres")
"""Every backend the store contract tests run on."""
SHARED_BACKENDS = ("sqlite", "postgres")
"""The backends several connections (processes, machines) share: where two runners can compete."""


@pytest.fixture(autouse=True)
def _no_endpoint_memory_from_an_earlier_test() -> Iterator[None]:
    """The OpenAI adapter remembers, per base URL, what each endpoint said (its window, its API, its
    structured-output form) for ten minutes, process-wide. A test's fake server listens on a port the
    system picks, which may be the port of an earlier test's server: that server's answers must not
    carry over (a strict server's window once read as a later, silent server's)."""
    memories = (OpenAIProvider._windows, OpenAIProvider._responses_api, OpenAIProvider._formats)
    for memory in memories:
        memory.clear()
    yield
    for memory in memories:
        memory.clear()


@pytest.fixture(autouse=True)
def _debates_stay_out_of_the_users_data_directory(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every test gets its own data directories: a test that does not choose a store (or removes
    ``DIALECTIC_HOME``) must never read or write the debates in the user's data directory."""
    root = tmp_path_factory.mktemp("data")
    monkeypatch.setenv("DIALECTIC_HOME", str(root / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(root / "xdg"))
    monkeypatch.delenv("DIALECTIC_STORE", raising=False)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The URL of a database in a throwaway Postgres cluster (see :mod:`tests.postgres_cluster`),
    for the whole session; skips the test where no cluster can be started here."""
    with ExitStack() as stack:
        try:
            url = stack.enter_context(cluster())
        except Unavailable as why:
            if os.environ.get("DIALECTIC_REQUIRE_POSTGRES"):
                pytest.fail(f"DIALECTIC_REQUIRE_POSTGRES is set, but {why}")
            pytest.skip(str(why))
        yield url


@pytest.fixture
def empty_postgres(postgres_url: str) -> str:
    """:func:`postgres_url`, with every debate of earlier tests removed."""
    empty(postgres_url)
    return postgres_url


def _opener(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], DebateStore]:
    """Opens a new store (connection) on the test's one location of ``backend``."""
    if backend == "sqlite":
        return lambda: SqliteStore(tmp_path / "debates.sqlite3", timeout=30)
    if backend == "postgres":
        from dialectic.store.postgres import PostgresStore

        url = request.getfixturevalue("empty_postgres")
        return lambda: PostgresStore(url)
    return MemoryStore


@pytest.fixture(params=STORE_BACKENDS)
def contract_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[DebateStore]:
    """An empty store of each backend in turn: what the store contract tests run against."""
    with _opener(request.param, request, tmp_path)() as store:
        yield store


@pytest.fixture(params=SHARED_BACKENDS)
def open_shared(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], DebateStore]:
    """Opens another store on one empty location of each shared backend in turn."""
    return _opener(request.param, request, tmp_path)
