"""The batch's parts: reading problems, the results file, the run store and the summary."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from dialectic.batch.problems import Problem, read_problems
from dialectic.batch.runner import BatchRun, ResultsFile, empty_record, summary_lines
from dialectic.batch.store import BatchItem, BatchStore, new_run_id
from dialectic.core.config import LimitsConfig
from dialectic.core.errors import InvalidArgumentsError


def test_problems_are_read_in_order_with_numeric_ids_as_text(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "a", "problem": "one"}\n\n{"id": 7, "problem": "two"}\n', encoding="utf-8")
    assert read_problems(path) == [Problem("a", "one"), Problem("7", "two")]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": "a", "problem": "x"}\n{oops\n', "line 2: not JSON"),
        ('{"id": "", "problem": "x"}\n', 'line 1: "id" must be a non-empty string'),
        ('{"id": "a", "problem": "  "}\n', 'line 1: "problem" must be a non-empty string'),
        ('{"id": "a", "problem": "x"}\n{"id": "a", "problem": "y"}\n', "repeats line 1"),
    ],
)
def test_a_bad_line_is_named(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InvalidArgumentsError, match=message):
        read_problems(path)


def test_a_problem_is_held_to_the_limit_debate_holds_it_to(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "a", "problem": "short"}\n\n{"id": "b", "problem": "%s"}\n' % ("x" * 51), encoding="utf-8")
    assert len(read_problems(path)) == 2  # without limits, only the shape is checked
    with pytest.raises(InvalidArgumentsError) as info:
        read_problems(path, LimitsConfig(max_problem_chars=50))
    assert info.value.message == (
        f"{path}, line 3: the problem has 51 characters, more than the limit of 50; "
        "shorten it, or raise limits.maxProblemChars in the config file"
    )


class CountingRun(BatchRun):
    """A batch whose workers only count themselves (and take no problem)."""

    workers = 0

    async def _worker(self, queue: asyncio.Queue[BatchItem]) -> None:
        CountingRun.workers += 1


def test_a_batch_starts_no_more_workers_than_problems(tmp_path: Path) -> None:
    """``-k`` is a ceiling: one worker per unit of it (``-k 1000000000``: 15 GB before any call) is never made."""
    with BatchStore(tmp_path / "batch.sqlite3") as store:
        store.create("batch-x", [Problem("a", "one"), Problem("b", "two"), Problem("c", "three")], {})
        run = CountingRun("batch-x", store, debate=None, concurrency=1000)  # type: ignore[arg-type]
        asyncio.run(run.run())
    assert CountingRun.workers == 3


def test_the_results_file_drops_a_cut_line_and_never_repeats_an_id(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps(empty_record("a", None, 1.0, "x")) + '\n{"id": "b", "deb', encoding="utf-8")
    results = ResultsFile(path)
    assert results.ids == {"a"}
    results.append(empty_record("a", None, 2.0, "again"))
    results.append(empty_record("b", "deb-1", 2.0, "boom"))
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [line["id"] for line in lines] == ["a", "b"]
    assert lines[0]["wall_s"] == 1.0


def test_the_store_keeps_each_problems_debate_and_result(tmp_path: Path) -> None:
    run_id = new_run_id()
    assert run_id.startswith("batch-") and len(run_id) == len("batch-20260101-000000-ABCD")
    with BatchStore(tmp_path / "batch.sqlite3") as store:
        store.create(run_id, [Problem("a", "one"), Problem("b", "two")], {"concurrency": 2})
        store.started(run_id, "a", "deb-1")
        store.finished(run_id, "b", empty_record("b", None, 0.5, "bad"))
    with BatchStore(tmp_path / "batch.sqlite3") as store:
        first, second = store.items(run_id)
        assert store.settings(run_id) == {"concurrency": 2}
    assert (first.debate_id, first.status, first.finished) == ("deb-1", "running", False)
    assert (second.status, second.finished, second.record and second.record["error"]) == ("failed", True, "bad")


def test_an_unknown_run_is_a_usage_error(tmp_path: Path) -> None:
    with BatchStore(tmp_path / "batch.sqlite3") as store, pytest.raises(InvalidArgumentsError, match="no batch run"):
        store.settings("batch-x")


def test_the_summary_counts_statuses_cost_and_time() -> None:
    records = [
        {"status": "completed", "cost_usd": 0.5, "wall_s": 1.0},
        {"status": "completed", "cost_usd": 0.25, "wall_s": 3.0},
        {"status": "failed", "cost_usd": 0.0, "wall_s": 8.0},
    ]
    lines = summary_lines("batch-1", records, 4, 9.5)
    assert lines == [
        "batch batch-1: 3/4 debates finished (2 completed, 1 failed)",
        "cost: $0.7500 total, $0.2500 mean per debate",
        "time per debate: mean 4.0 s, median 3.0 s, max 8.0 s",
        "wall time: 9.5 s",
    ]
