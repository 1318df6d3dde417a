"""``changes_since``: a debate's log from a sequence number on, the basis of the web event stream's ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialectic.core.changes import CursorMoved, DebateCreated, RoundStarted, StatusChanged
from dialectic.core.domain import DebateState
from dialectic.core.errors import DebateNotFoundError
from dialectic.engine.lease import LeasedStore
from dialectic.store import AbsentStore, DebateStore


@pytest.fixture
def store(contract_store: DebateStore) -> DebateStore:
    """Each backend in turn (tests/conftest.py: SQLite, memory, Postgres)."""
    return contract_store


def test_numbers_every_change_from_one_and_starts_after_the_number_given(store: DebateStore) -> None:
    created = DebateCreated(state=DebateState(id="deb-1", problem="p"))
    store.append("deb-1", created, StatusChanged(status="running"))
    store.append("deb-1", RoundStarted(round_number=1), CursorMoved(next_node="proposal"))
    everything = store.changes_since("deb-1", 0)
    assert [seq for seq, _ in everything] == [1, 2, 3, 4]
    assert [change for _, change in everything] == store.changes("deb-1")
    assert [(seq, change.kind) for seq, change in store.changes_since("deb-1", 2)] == [
        (3, "round_started"),
        (4, "cursor_moved"),
    ]
    assert store.changes_since("deb-1", 4) == []
    assert store.changes_since("deb-1", 99) == []


def test_a_debate_that_does_not_exist_is_not_found(store: DebateStore, tmp_path: Path) -> None:
    with pytest.raises(DebateNotFoundError):
        store.changes_since("nope", 0)
    with pytest.raises(DebateNotFoundError):
        AbsentStore(str(tmp_path / "none.sqlite3")).changes_since("nope", 0)


def test_a_leased_store_passes_it_through(store: DebateStore) -> None:
    store.append("deb-1", DebateCreated(state=DebateState(id="deb-1", problem="p")))
    assert [seq for seq, _ in LeasedStore(store, "owner").changes_since("deb-1", 0)] == [1]


def test_append_returns_the_number_of_the_last_change_it_saved(store: DebateStore) -> None:
    created = DebateCreated(state=DebateState(id="deb-1", problem="p"))
    assert store.append("deb-1", created, StatusChanged(status="running")) == 2
    assert store.append("deb-1", RoundStarted(round_number=1)) == 3
    assert store.append("deb-1") == 3  # nothing appended: still the last number
    assert [seq for seq, _ in store.changes_since("deb-1", 0)][-1] == 3
