"""Run a batch: ``concurrency`` workers take the problems in order, each debate through :class:`dialectic.Debate`.

A problem's debate is recorded as started (its id saved) on the debate's first event, before any
model call, so a run that dies can resume it from its last saved step (the engine's resume
repeats no saved call). Whatever a debate ends with (completed, suspended, or an error) becomes
its result line; an error never stops the other debates. Cancelling the run (Ctrl-C, SIGTERM)
cancels the debates in flight, which the engine saves as interrupted for ``--resume``.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from dialectic.batch.store import BatchItem, BatchStore
from dialectic.core.errors import DebateBusyError, DialecticError, LeaseLostError
from dialectic.front.debate import Debate
from dialectic.front.results import DebateResult, Finished

DEFAULT_CONCURRENCY = 4
FAILED = "failed"


class Progress(Protocol):
    def started(self, item: BatchItem) -> None: ...
    def finished(self, record: dict[str, Any]) -> None: ...


class ResultsFile:
    """The ``-o`` JSONL file: one line a finished debate, appended as it finishes, never twice for an id.

    A line cut short by a kill is dropped when the file is opened again."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.ids: set[str] = set()
        if path.is_file():
            data = path.read_bytes()
            complete = data[: data.rfind(b"\n") + 1]
            if len(complete) != len(data):
                with path.open("r+b") as handle:
                    handle.truncate(len(complete))
            for line in complete.decode("utf-8", errors="replace").splitlines():
                try:
                    self.ids.add(str(json.loads(line)["id"]))
                except (ValueError, KeyError, TypeError):
                    continue
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()

    def append(self, record: dict[str, Any]) -> None:
        if record["id"] in self.ids:
            return
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, line)  # one write: a kill leaves the line whole or cut (then dropped), never mixed
        finally:
            os.close(fd)
        self.ids.add(record["id"])

    def catch_up(self, items: Iterable[BatchItem]) -> None:
        """Append the finished debates the file misses (a run killed between saving a result and writing it)."""
        for item in items:
            if item.record is not None:
                self.append(item.record)


@dataclass
class BatchRun:
    run_id: str
    store: BatchStore
    debate: Debate
    concurrency: int = DEFAULT_CONCURRENCY
    on_finished: Callable[[dict[str, Any]], None] = lambda record: None
    progress: Progress | None = None
    records: list[dict[str, Any]] = field(default_factory=list)
    """The result lines of the debates this run finished."""

    async def run(self) -> None:
        """Work through every problem not finished yet; returns when all are, raises when cancelled."""
        queue: asyncio.Queue[BatchItem] = asyncio.Queue()
        for item in self.store.items(self.run_id):
            if not item.finished:
                queue.put_nowait(item)
        # never more workers than debates to run: -k is a ceiling, not a number of tasks to make
        workers = [
            asyncio.ensure_future(self._worker(queue)) for _ in range(max(1, min(self.concurrency, queue.qsize())))
        ]
        try:
            await asyncio.gather(*workers)
        finally:
            for worker in workers:
                if not worker.done() and not worker.cancelling():  # once: a second cancel cuts the saving short
                    worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)

    async def _worker(self, queue: asyncio.Queue[BatchItem]) -> None:
        while not queue.empty():
            item = queue.get_nowait()
            if self.progress is not None:
                self.progress.started(item)
            record = await self._debate(item)
            self.store.finished(self.run_id, item.id, record)
            self.records.append(record)
            self.on_finished(record)
            if self.progress is not None:
                self.progress.finished(record)

    async def _debate(self, item: BatchItem) -> dict[str, Any]:
        return await run_one(
            self.debate, item, on_started=lambda debate_id: self.store.started(self.run_id, item.id, debate_id)
        )


async def run_one(
    debate: Debate, item: BatchItem, *, on_started: Callable[[str], None], busy_wait_s: float = 0.0
) -> dict[str, Any]:
    """One problem's debate, to its result line: the debate ``item`` has is resumed from its last saved step
    (or just read, when it completed), else a new one starts and ``on_started`` gets its id on its first
    event. Local runs and Ray workers both run debates through here.

    ``busy_wait_s``: how long a resume waits for the lease of a run that died (on another host its heartbeat
    must expire; on this one a dead owner's lease is taken over at once) before giving up with its error."""
    began = time.monotonic()
    debate_id = item.debate_id
    try:
        result: DebateResult | None = None
        if debate_id is not None:
            saved = debate.load(debate_id)
            result = saved if saved.status == "completed" else await _resume(debate, debate_id, busy_wait_s)
        else:
            async for event in debate.stream(item.problem, deltas=False):
                if debate_id is None and event.debate_id:
                    debate_id = event.debate_id
                    on_started(debate_id)
                if isinstance(event, Finished):
                    result = event.result
        assert result is not None
        return result_record(item.id, result, time.monotonic() - began)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # one debate's failure is its result line, never the batch's end
        message = exc.message if isinstance(exc, DialecticError) else f"{type(exc).__name__}: {exc}"
        record = empty_record(item.id, debate_id, time.monotonic() - began, message)
        if debate_id is not None:
            try:
                record.update(_usage(debate.load(debate_id)))
            except Exception:  # the error above is what the line reports
                pass
        return record


async def _resume(debate: Debate, debate_id: str, busy_wait_s: float) -> DebateResult:
    deadline = time.monotonic() + busy_wait_s
    while True:
        try:
            return await debate.resume(debate_id)
        except LeaseLostError:
            raise
        except DebateBusyError:
            if time.monotonic() >= deadline:
                raise
            await asyncio.sleep(min(1.0, max(0.05, deadline - time.monotonic())))


def empty_record(item_id: str, debate_id: str | None, wall_s: float, error: str) -> dict[str, Any]:
    return {
        "id": item_id,
        "debate_id": debate_id,
        "status": FAILED,
        "solution": None,
        "answer": None,
        "calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": 0.0,
        "wall_s": round(wall_s, 3),
        "error": " ".join(error.split()),
    }


def result_record(item_id: str, result: DebateResult, wall_s: float) -> dict[str, Any]:
    return {
        "id": item_id,
        "debate_id": result.id,
        "status": result.status,
        "solution": result.solution,
        "answer": result.answer.answer if result.answer is not None else None,
        **_usage(result),
        "wall_s": round(wall_s, 3),
        "error": None,
    }


def _usage(result: DebateResult) -> dict[str, Any]:
    usage = result.usage
    return {
        "calls": usage.calls,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cost_usd": round(usage.cost_usd, 6),
    }


def summary_lines(run_id: str, records: list[dict[str, Any]], total: int, wall_s: float | None = None) -> list[str]:
    """The end-of-run summary: counts by status, total and mean cost, mean/median/max time per debate."""
    counts: dict[str, int] = {}
    for record in records:
        counts[record["status"]] = counts.get(record["status"], 0) + 1
    by_status = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "none finished"
    lines = [f"batch {run_id}: {len(records)}/{total} debates finished ({by_status})"]
    if records:
        costs = [float(r["cost_usd"]) for r in records]
        times = [float(r["wall_s"]) for r in records]
        lines.append(f"cost: ${sum(costs):.4f} total, ${sum(costs) / len(costs):.4f} mean per debate")
        lines.append(
            f"time per debate: mean {statistics.fmean(times):.1f} s, median {statistics.median(times):.1f} s, "
            f"max {max(times):.1f} s"
        )
    if wall_s is not None:
        lines.append(f"wall time: {wall_s:.1f} s")
    return lines
