"""Where batch runs are kept: ``<data dir>/batch.sqlite3``, beside the debate store.

A run's problems are saved when it is created; then each change (a problem's debate started, a
debate finished with its result line) is its own transaction, so a run killed with SIGKILL keeps
everything it saved and ``--resume`` knows which debate each problem has.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from dialectic.batch.problems import Problem
from dialectic.core.errors import InvalidArgumentsError, StoreError

BATCH_FILENAME = "batch.sqlite3"
PENDING, RUNNING = "pending", "running"
"""A problem not started yet, and one whose debate started and has not finished."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS batch_runs (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    settings TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS batch_items (
    run_id TEXT NOT NULL REFERENCES batch_runs(id),
    seq INTEGER NOT NULL,
    item_id TEXT NOT NULL,
    problem TEXT NOT NULL,
    debate_id TEXT,
    status TEXT NOT NULL DEFAULT 'pending',
    record TEXT,
    PRIMARY KEY (run_id, item_id)
);
"""


def new_run_id(now: datetime | None = None) -> str:
    """``batch-YYYYMMDD-HHMMSS-`` followed by four random hex digits."""
    moment = now or datetime.now(UTC)
    return f"batch-{moment:%Y%m%d-%H%M%S}-{secrets.token_hex(2).upper()}"


@dataclass(frozen=True)
class BatchItem:
    id: str
    problem: str
    debate_id: str | None
    status: str
    record: dict[str, Any] | None
    """The result line, once the debate finished (whatever its status)."""

    @property
    def finished(self) -> bool:
        return self.record is not None


class BatchStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, isolation_level=None, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the batch store {path}: {exc}") from None

    def create(self, run_id: str, problems: Sequence[Problem], settings: dict[str, Any]) -> None:
        with self._transaction():
            self._db.execute(
                "INSERT INTO batch_runs (id, created_at, settings) VALUES (?, ?, ?)",
                (run_id, datetime.now(UTC).isoformat(), json.dumps(settings)),
            )
            self._db.executemany(
                "INSERT INTO batch_items (run_id, seq, item_id, problem) VALUES (?, ?, ?, ?)",
                [(run_id, seq, p.id, p.problem) for seq, p in enumerate(problems)],
            )

    def settings(self, run_id: str) -> dict[str, Any]:
        row = self._db.execute("SELECT settings FROM batch_runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise InvalidArgumentsError(f"no batch run {run_id} in {self.path}")
        settings: dict[str, Any] = json.loads(row[0])
        return settings

    def update_settings(self, run_id: str, settings: dict[str, Any]) -> None:
        with self._transaction():
            self._db.execute("UPDATE batch_runs SET settings = ? WHERE id = ?", (json.dumps(settings), run_id))

    def items(self, run_id: str) -> list[BatchItem]:
        rows = self._db.execute(
            "SELECT item_id, problem, debate_id, status, record FROM batch_items WHERE run_id = ? ORDER BY seq",
            (run_id,),
        ).fetchall()
        return [BatchItem(r[0], r[1], r[2], r[3], json.loads(r[4]) if r[4] else None) for r in rows]

    def item(self, run_id: str, item_id: str) -> BatchItem:
        """One problem of the run, as saved now (:class:`InvalidArgumentsError` when there is none)."""
        row = self._db.execute(
            "SELECT item_id, problem, debate_id, status, record FROM batch_items WHERE run_id = ? AND item_id = ?",
            (run_id, item_id),
        ).fetchone()
        if row is None:
            raise InvalidArgumentsError(f"no problem {item_id!r} in batch run {run_id}")
        return BatchItem(row[0], row[1], row[2], row[3], json.loads(row[4]) if row[4] else None)

    def started(self, run_id: str, item_id: str, debate_id: str) -> None:
        with self._transaction():
            self._db.execute(
                "UPDATE batch_items SET debate_id = ?, status = ? WHERE run_id = ? AND item_id = ?",
                (debate_id, RUNNING, run_id, item_id),
            )

    def finished(self, run_id: str, item_id: str, record: dict[str, Any]) -> None:
        with self._transaction():
            self._db.execute(
                "UPDATE batch_items SET debate_id = ?, status = ?, record = ? WHERE run_id = ? AND item_id = ?",
                (record.get("debate_id"), record["status"], json.dumps(record), run_id, item_id),
            )

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> BatchStore:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db, self.path)


class _Transaction:
    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self._db, self._path = db, path

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if kind is None:
            self._db.execute("COMMIT")
            return
        self._db.execute("ROLLBACK")
        if isinstance(value, sqlite3.Error):
            raise StoreError(f"cannot write the batch store {self._path}: {value}") from value
