"""Where benchmark runs are kept: ``<data dir>/bench.sqlite3``, written one result at a time.

Results are only ever inserted, each in its own transaction as soon as its item finishes,
so an interrupted run loses at most the items that were in flight; ``--resume`` runs only
the (arm, item) pairs that have no row yet. A second row for the same pair is refused.
A run can also be imported from its results file (:meth:`BenchStore.import_run`), so that
``--resume results.json`` continues it in a store that never saw it.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from dialectic.bench.records import ItemResult, RunSpec
from dialectic.core.errors import InvalidArgumentsError, StoreError

BENCH_FILENAME = "bench.sqlite3"
_DATABASE_SUFFIXES = (".sqlite3", ".db")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS bench_runs (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    spec TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bench_results (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL REFERENCES bench_runs(id),
    arm TEXT NOT NULL,
    item_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    result TEXT NOT NULL,
    UNIQUE (run_id, arm, item_id)
);
"""


def new_run_id(now: datetime | None = None) -> str:
    """``bench-YYYYMMDD-HHMMSS-`` followed by four random hex digits."""
    moment = now or datetime.now(UTC)
    return f"bench-{moment:%Y%m%d-%H%M%S}-{secrets.token_hex(2).upper()}"


def bench_database(location: Path) -> Path:
    """``location`` itself when it names a database file, else ``location/bench.sqlite3``."""
    if location.suffix.lower() in _DATABASE_SUFFIXES or location.is_file():
        return location
    return location / BENCH_FILENAME


class BenchStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path)
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the bench results at {path}: {exc}") from None

    def create_run(self, spec: RunSpec) -> None:
        try:
            with self._db:
                self._db.execute(
                    "INSERT INTO bench_runs (id, created_at, spec) VALUES (?, ?, ?)",
                    (spec.id, spec.created_at.isoformat(), spec.model_dump_json()),
                )
        except sqlite3.IntegrityError:
            raise StoreError(f"a bench run with id {spec.id} already exists") from None

    def load_run(self, run_id: str) -> RunSpec:
        row = self._db.execute("SELECT spec FROM bench_runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise InvalidArgumentsError(f"no bench run {run_id} in {self.path}")
        return RunSpec.model_validate_json(row[0])

    def find_run(self, run_id: str) -> RunSpec | None:
        row = self._db.execute("SELECT spec FROM bench_runs WHERE id = ?", (run_id,)).fetchone()
        return None if row is None else RunSpec.model_validate_json(row[0])

    def import_run(self, spec: RunSpec, results: Sequence[ItemResult]) -> int:
        """Record ``spec`` (as a new run, or replacing the definition of the run with its id) and the
        results it does not have yet, in one transaction; return how many results were added."""
        added = 0
        now = datetime.now(UTC).isoformat()
        try:
            with self._db:
                self._db.execute(
                    "INSERT INTO bench_runs (id, created_at, spec) VALUES (?, ?, ?) "
                    "ON CONFLICT (id) DO UPDATE SET spec = excluded.spec",
                    (spec.id, spec.created_at.isoformat(), spec.model_dump_json()),
                )
                for result in results:
                    cursor = self._db.execute(
                        "INSERT OR IGNORE INTO bench_results (run_id, arm, item_id, created_at, result) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (spec.id, result.arm, result.item_id, now, result.model_dump_json()),
                    )
                    added += cursor.rowcount
        except sqlite3.Error as exc:
            raise StoreError(f"cannot import run {spec.id} into {self.path}: {exc}") from None
        return added

    def save(self, run_id: str, result: ItemResult) -> None:
        """Record one finished (arm, item), durably, before the next one is reported done."""
        try:
            with self._db:
                self._db.execute(
                    "INSERT INTO bench_results (run_id, arm, item_id, created_at, result) VALUES (?, ?, ?, ?, ?)",
                    (
                        run_id,
                        result.arm,
                        result.item_id,
                        datetime.now(UTC).isoformat(),
                        result.model_dump_json(),
                    ),
                )
        except sqlite3.IntegrityError:
            raise StoreError(f"run {run_id} already has a result for {result.arm} on {result.item_id}") from None
        except sqlite3.Error as exc:
            raise StoreError(f"cannot save a bench result to {self.path}: {exc}") from None

    def done(self, run_id: str) -> set[tuple[str, str]]:
        """The (arm, item id) pairs that already have a result."""
        rows = self._db.execute("SELECT arm, item_id FROM bench_results WHERE run_id = ?", (run_id,))
        return {(arm, item_id) for arm, item_id in rows}

    def results(self, run_id: str) -> list[ItemResult]:
        rows = self._db.execute("SELECT result FROM bench_results WHERE run_id = ? ORDER BY seq", (run_id,))
        return [ItemResult.model_validate_json(text) for (text,) in rows]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> BenchStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
