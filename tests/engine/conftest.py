"""Engine test fixtures: a real store (both backends) and the scripted-model harness."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dialectic.llm.scripted import Responder, ScriptedProvider
from dialectic.store import MemoryStore, SqliteStore
from dialectic.store.base import DebateStore
from dialectic.testing.harness import Harness


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[DebateStore]:
    backend: DebateStore = MemoryStore() if request.param == "memory" else SqliteStore(tmp_path / "debates.sqlite3")
    yield backend
    backend.close()


@pytest.fixture
def harness(store: DebateStore) -> Callable[..., Harness]:
    def build(responder: Responder | None = None, **kwargs: Any) -> Harness:
        return Harness(store=store, provider=ScriptedProvider(responder, **kwargs))

    return build
