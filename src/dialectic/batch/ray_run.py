"""``dialectic batch --ray [ADDRESS|auto]``: the batch's debates on a Ray cluster (extra ``[ray]``).

Ray is imported only when a Ray batch runs: the CLI starts without it, and ``--ray`` without it is a
one-line usage error (:data:`dialectic.cluster.connection.RAY_MISSING`). What ``bench --ray`` shares with
this (joining the cluster, the limiter actors, the worker pool) is in :mod:`dialectic.cluster`.

The driver (the ``dialectic batch`` process) keeps the run as a local batch does: the run's
problems in ``batch.sqlite3``, the result lines, the progress and the summary. The debates run
on a pool of :class:`DebateWorker` actors (one per CPU of the cluster, at most ``--concurrency``),
each running its share of the ``--concurrency`` debates at once through
:func:`dialectic.batch.runner.run_one`, the function the local batch runs them with, against the
same store (its location is passed to the workers: a SQLite store on one disk serves a local
cluster; the workers also record each debate's id in ``batch.sqlite3`` when it starts).

Each provider endpoint's concurrency is shared by the whole cluster: one named actor per endpoint
(:class:`~dialectic.cluster.limits.EndpointLimiter`, ``dialectic-limit:<job>:<endpoint>`` in the
``dialectic`` namespace, one set per batch command) hands out at most ``debate.maxConcurrency`` slots at
a time, and every worker's LLM clients take a slot from it around each request (the provider pool's
``shared_limits`` hook).

A worker that dies (killed, its node lost) fails the debates it was running; the driver gives
their slots back to the limiters, and hands each debate to a worker again (up to
:data:`MAX_ATTEMPTS` times), which resumes it from its last saved step through the engine's
resume: on the same host the dead worker's lease is taken over at once (its process is gone),
on another host once its heartbeat has expired (:data:`BUSY_WAIT_S`).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialectic.batch.runner import Progress, empty_record, run_one
from dialectic.batch.store import BatchItem, BatchStore
from dialectic.cluster.connection import import_ray
from dialectic.cluster.limits import RayLimits, endpoint_keys, start_limiters
from dialectic.cluster.workers import ClusterWorker, Worker, cancel_refs, describe, revive, start_workers, worker_count
from dialectic.core.config import AgentConfig, SystemConfig
from dialectic.front.debate import Debate
from dialectic.llm.registry import ProviderPool
from dialectic.store.leases import DEFAULT_TTL

MAX_ATTEMPTS = 3
"""How many times a debate is handed to a worker when the workers running it die."""
BUSY_WAIT_S = DEFAULT_TTL.total_seconds() + 5
"""How long a retried debate waits for a dead worker's lease to expire (another host: its heartbeat stops)."""


@dataclass(frozen=True)
class RayJob:
    """What every worker needs to run the batch's debates (absolute paths: a worker has its own directory)."""

    run_id: str
    batch_path: str
    config: SystemConfig
    config_dir: str
    location: str
    """The debate store: a directory or database path, or a URL."""


class DebateWorker(ClusterWorker):
    """The body of a worker actor: runs the debates it is handed, many at once, on its event loop."""

    def __init__(self, job: RayJob, limiter_names: dict[str, str]) -> None:
        super().__init__()
        self._job = job
        self._limiter_names = dict(limiter_names)
        self._debate: Debate | None = None
        self._store: BatchStore | None = None

    async def run(self, item_id: str) -> dict[str, Any]:
        """The result line of ``item_id``'s debate: resumed when it has one (an earlier worker died), else new."""
        return await self.working(lambda: self._run(item_id))

    async def _run(self, item_id: str) -> dict[str, Any]:
        job = self._job
        if self._store is None:  # opened on the event loop's thread, where every call runs
            self._store = BatchStore(Path(job.batch_path))
        store = self._store
        item = store.item(job.run_id, item_id)
        if item.record is not None:
            return item.record
        if self._debate is None:
            pool = ProviderPool(shared_limits=RayLimits.by_name(self._limiter_names, self.token))
            self._debate = Debate(job.config, config_dir=job.config_dir, store=job.location, providers=pool)
        record = await run_one(
            self._debate,
            item,
            on_started=lambda debate_id: store.started(job.run_id, item_id, debate_id),
            busy_wait_s=BUSY_WAIT_S,
        )
        if job.config.hooks.active:
            # the driver stops the workers when the batch ends, and a worker's hooks would go with it: each
            # debate's hooks (bounded by hooks.waitMs) are done before its result goes back
            from dialectic.reporting.hooks import wait_pending

            await asyncio.to_thread(wait_pending)
        return record


def debate_agents(config: SystemConfig) -> list[AgentConfig]:
    """Every agent whose calls the debates make: the participants, their fallbacks and the judge."""
    agents = [*config.participants(), config.judge]
    return agents + [fallback for cfg in config.participants() if (fallback := cfg.fallback_agent()) is not None]


@dataclass
class RayBatchRun:
    """The driver of a Ray batch: same store, result lines and progress as :class:`~dialectic.batch.runner.BatchRun`."""

    run_id: str
    store: BatchStore
    job: RayJob
    concurrency: int
    on_finished: Callable[[dict[str, Any]], None] = lambda record: None
    progress: Progress | None = None
    note: Callable[[str], None] = lambda text: None
    workers: int | None = None
    """How many worker actors (default: one per CPU of the cluster, at most ``concurrency``)."""
    records: list[dict[str, Any]] = field(default_factory=list)
    attempts: dict[str, int] = field(default_factory=dict)

    async def run(self) -> None:
        ray = import_ray()
        endpoints = endpoint_keys(debate_agents(self.job.config))
        self._limiters = await start_limiters(ray, endpoints, self.job.config.debate.max_concurrency)
        queue: asyncio.Queue[BatchItem] = asyncio.Queue()
        for item in self.store.items(self.run_id):
            if not item.finished:
                queue.put_nowait(item)
        concurrency = max(1, min(self.concurrency, queue.qsize()))  # never more slots than debates to run
        count = self.workers or worker_count(ray, concurrency)
        per_worker = math.ceil(concurrency / count)
        self._workers = await start_workers(ray, DebateWorker, (self.job, self._limiters.names), count, per_worker)
        self.note(f"ray: {describe(self._workers)}; {self._limiters.describe()}")
        self._in_flight: set[Any] = set()
        slots = [asyncio.ensure_future(self._slot(self._workers[i % count], queue)) for i in range(concurrency)]
        try:
            await asyncio.gather(*slots)
        finally:
            for slot in slots:
                slot.cancel()
            await asyncio.gather(*slots, return_exceptions=True)
            await cancel_refs(ray, list(self._in_flight), self._workers)
        for item in self.store.items(self.run_id):  # every worker gone for good: what is left fails
            if not item.finished:
                self._finish(empty_record(item.id, item.debate_id, 0.0, "no Ray worker was left to run it"))

    async def _slot(self, worker: Worker, queue: asyncio.Queue[BatchItem]) -> None:
        ray = import_ray()
        while worker.alive and not queue.empty():
            item = queue.get_nowait()
            self.attempts[item.id] = self.attempts.get(item.id, 0) + 1
            if self.progress is not None and self.attempts[item.id] == 1:
                self.progress.started(item)
            token = worker.token
            ref = worker.handle.run.remote(item.id)
            self._in_flight.add(ref)  # kept when this is cancelled: run() cancels it on the cluster
            try:
                record = await ref
            except ray.exceptions.RayTaskError as exc:  # the worker's code failed: this debate's line says so
                record = empty_record(item.id, item.debate_id, 0.0, f"Ray worker error: {exc}")
            except (ray.exceptions.RayError, ConnectionError) as exc:  # the worker (or its node) died
                self._in_flight.discard(ref)
                await revive(ray, worker, token, self._limiters, self.note)
                again = self.store.item(self.run_id, item.id)  # with the debate id the dead worker recorded
                if self.attempts[item.id] < MAX_ATTEMPTS:
                    queue.put_nowait(again)
                    continue
                why = f"its Ray worker died {self.attempts[item.id]} times (last: {type(exc).__name__})"
                record = empty_record(item.id, again.debate_id, 0.0, why)
            self._in_flight.discard(ref)
            self._finish(record)

    def _finish(self, record: dict[str, Any]) -> None:
        self.store.finished(self.run_id, record["id"], record)
        self.records.append(record)
        self.on_finished(record)
        if self.progress is not None:
            self.progress.finished(record)
