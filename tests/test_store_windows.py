"""Context windows learned from refusals, kept by the store per endpoint and model."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from dialectic.core.changes import DebateCreated, WindowNoted, WindowsSized, fold
from dialectic.core.domain import DebateState, WindowUse
from dialectic.core.errors import StoreError
from dialectic.engine.lease import LeasedStore
from dialectic.store import AbsentStore, DebateStore, MemoryStore, SqliteStore, WindowMemory

ENDPOINT = "openai|http://127.0.0.1:8080/v1"


@pytest.fixture
def store(contract_store: DebateStore) -> SqliteStore | MemoryStore:
    """Each backend in turn (tests/conftest.py: SQLite, memory, Postgres), all of which keep windows."""
    assert isinstance(contract_store, WindowMemory)
    return contract_store  # type: ignore[return-value]


def test_a_window_is_kept_per_endpoint_and_model(store: SqliteStore | MemoryStore) -> None:
    assert isinstance(store, WindowMemory)
    assert store.remembered_window(ENDPOINT, "qwen") is None
    store.remember_window(ENDPOINT, "qwen", 4096)
    store.remember_window(ENDPOINT, "llama", 8192)
    store.remember_window("ollama|http://127.0.0.1:11434/v1", "qwen", 2048)
    assert store.remembered_window(ENDPOINT, "qwen") == 4096
    assert store.remembered_window(ENDPOINT, "llama") == 8192
    store.remember_window(ENDPOINT, "qwen", 3000)  # learned again: the newer wins
    assert store.remembered_window(ENDPOINT, "qwen") == 3000


def test_a_kept_window_outlives_the_process(tmp_path: Path) -> None:
    path = tmp_path / "debates.sqlite3"
    with SqliteStore(path) as first:
        first.remember_window(ENDPOINT, "qwen", 4096)
    with SqliteStore(path) as again:
        assert again.remembered_window(ENDPOINT, "qwen") == 4096


def test_an_older_database_gets_the_table_when_it_is_opened(tmp_path: Path) -> None:
    path = tmp_path / "debates.sqlite3"
    with SqliteStore(path):
        pass
    with sqlite3.connect(path) as db:  # as a version without windows left it
        db.execute("DROP TABLE windows")
        db.execute("DELETE FROM migrations WHERE name = 'm005_windows'")
    with SqliteStore(path) as upgraded:
        upgraded.remember_window(ENDPOINT, "qwen", 4096)
        assert upgraded.remembered_window(ENDPOINT, "qwen") == 4096


def test_a_store_that_is_not_there_knows_no_window_and_keeps_none(tmp_path: Path) -> None:
    absent = AbsentStore(str(tmp_path / "none.sqlite3"))
    assert absent.remembered_window(ENDPOINT, "qwen") is None
    with pytest.raises(StoreError):
        absent.remember_window(ENDPOINT, "qwen", 4096)


def test_a_leased_store_passes_windows_through(store: SqliteStore | MemoryStore) -> None:
    leased = LeasedStore(store, "owner-1")
    leased.remember_window(ENDPOINT, "qwen", 4096)
    assert store.remembered_window(ENDPOINT, "qwen") == 4096
    assert leased.remembered_window(ENDPOINT, "qwen") == 4096


def test_window_notes_and_new_sizes_fold_into_the_state() -> None:
    state = DebateState(
        id="deb-1",
        problem="p",
        config={"agents": [{"id": "a", "name": "A", "role": "architect"}], "judge": {"id": "j", "name": "J"}},
    )
    first = WindowUse(agent_id="a", window=1500, source="config", largest_prompt=900)
    later = first.model_copy(update={"largest_prompt": 1300, "warned": True, "fired": {"summarize": 1}})
    folded = fold([DebateCreated(state=state), WindowNoted(use=first), WindowNoted(use=later)])
    assert folded.windows == {"a": later}
    sized = fold([DebateCreated(state=state), WindowsSized(windows={"a": 4096, "j": 8192})])
    assert sized.config["agents"][0]["contextWindow"] == 4096
    assert sized.config["judge"]["contextWindow"] == 8192
