"""``dialectic batch --ray [ADDRESS|auto]``: the batch's debates on a Ray cluster (extra ``[ray]``).

Ray is imported here only, and only when a Ray batch runs: the CLI starts without it, and
``--ray`` without it is a one-line usage error (:data:`RAY_MISSING`).

The driver (the ``dialectic batch`` process) keeps the run as a local batch does: the run's
problems in ``batch.sqlite3``, the result lines, the progress and the summary. The debates run
on a pool of :class:`DebateWorker` actors (one per CPU of the cluster, at most ``--concurrency``),
each running its share of the ``--concurrency`` debates at once through
:func:`dialectic.batch.runner.run_one`, the function the local batch runs them with, against the
same store (its location is passed to the workers: a SQLite store on one disk serves a local
cluster; the workers also record each debate's id in ``batch.sqlite3`` when it starts).

Each provider endpoint's concurrency is shared by the whole cluster: one named actor per endpoint
(:class:`EndpointLimiter`, ``dialectic-limit:<job>:<endpoint>`` in the ``dialectic`` namespace, one set
per batch command) hands out at most ``debate.maxConcurrency`` slots at a time, and every worker's LLM
clients take a slot from it around each request (the provider pool's ``shared_limits`` hook).

A worker that dies (killed, its node lost) fails the debates it was running; the driver gives
their slots back to the limiters, and hands each debate to a worker again (up to
:data:`MAX_ATTEMPTS` times), which resumes it from its last saved step through the engine's
resume: on the same host the dead worker's lease is taken over at once (its process is gone),
on another host once its heartbeat has expired (:data:`BUSY_WAIT_S`).
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import socket
import uuid
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from dialectic.batch.runner import Progress, empty_record, run_one
from dialectic.batch.store import BatchItem, BatchStore
from dialectic.core.config import SystemConfig
from dialectic.core.errors import DialecticError, InvalidArgumentsError
from dialectic.front.debate import Debate
from dialectic.llm.client import SharedLimit
from dialectic.llm.registry import ProviderPool
from dialectic.store.leases import DEFAULT_TTL

RAY_MISSING = "--ray needs Ray, which is not installed: pip install 'dialectic-debate[ray]'"
NAMESPACE = "dialectic"
LIMITER_PREFIX = "dialectic-limit:"
MAX_ATTEMPTS = 3
"""How many times a debate is handed to a worker when the workers running it die."""
BUSY_WAIT_S = DEFAULT_TTL.total_seconds() + 5
"""How long a retried debate waits for a dead worker's lease to expire (another host: its heartbeat stops)."""
RESTART_WAIT_S = 120.0
"""How long the driver waits for a dead worker to be restarted before it stops handing it debates."""
_TOKEN_HINT = "set RAY_AUTH_MODE=token, and RAY_AUTH_TOKEN or ~/.ray/auth_token to its token"
_FORWARDED_SUFFIXES = ("_API_KEY", "_BASE_URL")
_FORWARDED_PREFIXES = ("DIALECTIC_",)


def import_ray() -> Any:
    """The ``ray`` module, or :class:`InvalidArgumentsError` (exit 2) telling to install the extra."""
    try:
        import ray
    except ImportError:
        raise InvalidArgumentsError(RAY_MISSING) from None
    return ray


def forwarded_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables the workers need to reach the providers as the driver does: API keys, base URLs,
    ``DIALECTIC_*`` (a worker started by ``ray start`` does not have the driver's environment)."""
    return {
        name: value
        for name, value in environ.items()
        if name.endswith(_FORWARDED_SUFFIXES) or name.startswith(_FORWARDED_PREFIXES)
    }


def connect(address: str) -> str:
    """Join the cluster at ``address`` (``auto``: the one running on this machine, else a new local one);
    the address joined. A cluster that cannot be reached is a :class:`DialecticError`."""
    ray = import_ray()
    env_vars = forwarded_env(os.environ)
    options: dict[str, Any] = {
        "namespace": NAMESPACE,
        "log_to_driver": False,
        "logging_level": logging.WARNING,
        "runtime_env": {"env_vars": env_vars} if env_vars else None,
    }
    try:
        if address == "auto":
            try:
                context = ray.init(address="auto", **options)
            except ConnectionError:  # none running here: start one, for this command only
                context = ray.init(include_dashboard=False, **options)
        else:
            context = ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        hint = "" if os.environ.get("RAY_AUTH_MODE") else f" (if it uses token authentication: {_TOKEN_HINT})"
        raise DialecticError(f"cannot join the Ray cluster at {address}: {exc}{hint}") from None
    return str(getattr(context, "address_info", {}).get("gcs_address") or address)


def disconnect() -> None:
    ray = import_ray()
    if ray.is_initialized():
        ray.shutdown()


class EndpointLimiter:
    """The body of one endpoint's limiter actor: at most ``limit`` slots held at once, waiters served in order.

    A slot is a ticket the caller names; :meth:`release` gives it back, or withdraws it while it waits
    (or before its :meth:`acquire` arrived, for a caller cancelled on the way). :meth:`release_holder`
    gives back every slot of a worker that died."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"the limit must be at least 1 (got {limit})")
        self.limit = limit
        self.max_held = 0
        self._held: dict[str, str] = {}
        self._waiting: dict[str, tuple[str, asyncio.Future[None]]] = {}
        self._dropped: set[str] = set()

    async def acquire(self, ticket: str, holder: str) -> bool:
        """Wait for a slot; True once ``ticket`` holds it, False when it was withdrawn first."""
        if ticket in self._dropped:
            self._dropped.discard(ticket)
            return False
        if len(self._held) < self.limit and not self._waiting:
            self._grant(ticket, holder)
            return True
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting[ticket] = (holder, future)
        try:
            await future
        except asyncio.CancelledError:
            pass  # withdrawn by release(), or this call was cancelled
        finally:
            self._waiting.pop(ticket, None)
        return ticket in self._held

    async def release(self, ticket: str) -> None:
        if self._held.pop(ticket, None) is not None:
            self._wake()
            return
        waiter = self._waiting.pop(ticket, None)
        if waiter is not None:
            waiter[1].cancel()
        else:
            self._dropped.add(ticket)

    async def release_holder(self, holder: str) -> int:
        """Give back every slot ``holder`` holds or waits for; how many it held."""
        held = [ticket for ticket, owner in self._held.items() if owner == holder]
        for ticket in held:
            del self._held[ticket]
        for ticket, (owner, future) in list(self._waiting.items()):
            if owner == holder:
                del self._waiting[ticket]
                future.cancel()
        self._wake()
        return len(held)

    async def stats(self) -> dict[str, int]:
        return {"limit": self.limit, "held": len(self._held), "waiting": len(self._waiting), "max_held": self.max_held}

    def _grant(self, ticket: str, holder: str) -> None:
        self._held[ticket] = holder
        self.max_held = max(self.max_held, len(self._held))

    def _wake(self) -> None:
        while len(self._held) < self.limit and self._waiting:
            ticket = next(iter(self._waiting))
            holder, future = self._waiting.pop(ticket)
            if future.done():
                continue
            self._grant(ticket, holder)
            future.set_result(None)


class RayLimits:
    """The provider pool's ``shared_limits`` hook in a worker: an endpoint's limiter actor, if it has one."""

    def __init__(self, limiters: Mapping[str, Any], holder: str) -> None:
        self._limits = {endpoint: _RayLimit(handle, holder) for endpoint, handle in limiters.items()}

    def __call__(self, endpoint: str) -> SharedLimit | None:
        return self._limits.get(endpoint)


class _RayLimit:
    def __init__(self, handle: Any, holder: str) -> None:
        self._handle, self._holder = handle, holder

    def slot(self) -> _RaySlot:
        return _RaySlot(self._handle, self._holder)


class _RaySlot:
    """One request's slot: taken from the limiter actor on entry, given back on exit (even when cancelled)."""

    def __init__(self, handle: Any, holder: str) -> None:
        self._handle, self._holder = handle, holder
        self._ticket = uuid.uuid4().hex

    async def __aenter__(self) -> None:
        try:
            await self._handle.acquire.remote(self._ticket, self._holder)
        except BaseException:
            self._handle.release.remote(self._ticket)  # withdraws the ticket, wherever its acquire is
            raise

    async def __aexit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._handle.release.remote(self._ticket)


@dataclass(frozen=True)
class RayJob:
    """What every worker needs to run the batch's debates (absolute paths: a worker has its own directory)."""

    run_id: str
    batch_path: str
    config: SystemConfig
    config_dir: str
    location: str
    """The debate store: a directory or database path, or a URL."""


class DebateWorker:
    """The body of a worker actor: runs the debates it is handed, many at once, on its event loop."""

    def __init__(self, job: RayJob, limiter_names: Mapping[str, str]) -> None:
        self.token = uuid.uuid4().hex
        """Names this worker process as a slot holder: a restarted worker has a new one."""
        self._job = job
        self._limiter_names = dict(limiter_names)
        self._debate: Debate | None = None
        self._store: BatchStore | None = None

    async def ident(self) -> tuple[str, int, str]:
        """This worker's holder token, process id and host."""
        return self.token, os.getpid(), socket.gethostname()

    async def run(self, item_id: str) -> dict[str, Any]:
        """The result line of ``item_id``'s debate: resumed when it has one (an earlier worker died), else new."""
        job = self._job
        if self._store is None:  # opened on the event loop's thread, where every call runs
            self._store = BatchStore(Path(job.batch_path))
        store = self._store
        item = store.item(job.run_id, item_id)
        if item.record is not None:
            return item.record
        if self._debate is None:
            ray = import_ray()
            limiters = {e: ray.get_actor(name, namespace=NAMESPACE) for e, name in self._limiter_names.items()}
            pool = ProviderPool(shared_limits=RayLimits(limiters, self.token))
            self._debate = Debate(job.config, config_dir=job.config_dir, store=job.location, providers=pool)
        return await run_one(
            self._debate,
            item,
            on_started=lambda debate_id: store.started(job.run_id, item_id, debate_id),
            busy_wait_s=BUSY_WAIT_S,
        )


def endpoint_keys(config: SystemConfig) -> list[str]:
    """The provider endpoints the debates call (as the workers' provider pools name them)."""
    pool = ProviderPool()
    configs = [*config.participants(), config.judge]
    configs += [fallback for cfg in config.participants() if (fallback := cfg.fallback_agent()) is not None]
    return sorted({pool.key_for(cfg) for cfg in configs if not cfg.is_human})


def limiter_name(job_id: str, endpoint: str) -> str:
    """The name of this driver's limiter of ``endpoint``: a run resumed while the actors of the run it
    resumes are still going away, or two batches on one cluster, never share one."""
    return f"{LIMITER_PREFIX}{job_id}:{endpoint}"


def limiter_actor(ray: Any, name: str, limit: int) -> Any:
    """A limiter actor of ``limit`` slots; restarted (empty) if its node is lost, its calls retried."""
    actor = ray.remote(EndpointLimiter)
    return actor.options(
        name=name,
        namespace=NAMESPACE,
        num_cpus=0,
        max_concurrency=100_000,  # every waiting request is a call in progress on the actor
        max_restarts=-1,
        max_task_retries=-1,
    ).remote(limit)


def worker_count(ray: Any, concurrency: int) -> int:
    cpus = int(ray.cluster_resources().get("CPU", 1))
    return max(1, min(concurrency, cpus))


@dataclass
class _Worker:
    handle: Any
    token: str
    pid: int
    host: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    alive: bool = True


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
        limit = self.job.config.debate.max_concurrency
        job_id = ray.get_runtime_context().get_job_id()
        names = {e: limiter_name(job_id, e) for e in endpoint_keys(self.job.config)}
        self._limiters = {e: limiter_actor(ray, name, limit) for e, name in names.items()}
        await asyncio.gather(*(limiter.stats.remote() for limiter in self._limiters.values()))  # up, by name
        count = self.workers or worker_count(ray, self.concurrency)
        per_worker = math.ceil(self.concurrency / count)
        actor = ray.remote(DebateWorker).options(
            num_cpus=1, max_concurrency=per_worker + 2, max_restarts=-1, max_task_retries=0
        )
        handles = [actor.remote(self.job, names) for _ in range(count)]
        idents = await asyncio.gather(*(handle.ident.remote() for handle in handles))
        self._workers = [_Worker(h, *ident) for h, ident in zip(handles, idents, strict=True)]
        where = ", ".join(f"pid {w.pid} on {w.host}" for w in self._workers)
        self.note(
            f"ray: {count} workers ({where}); {limit} calls at a time per endpoint across the cluster "
            f"({len(self._limiters)} endpoint{'s' if len(self._limiters) != 1 else ''})"
        )
        queue: asyncio.Queue[BatchItem] = asyncio.Queue()
        for item in self.store.items(self.run_id):
            if not item.finished:
                queue.put_nowait(item)
        self._in_flight: set[Any] = set()
        slots = [asyncio.ensure_future(self._slot(self._workers[i % count], queue)) for i in range(self.concurrency)]
        try:
            await asyncio.gather(*slots)
        finally:
            for slot in slots:
                slot.cancel()
            await asyncio.gather(*slots, return_exceptions=True)
            await self._cancel_in_flight(ray)
        for item in self.store.items(self.run_id):  # every worker gone for good: what is left fails
            if not item.finished:
                self._finish(empty_record(item.id, item.debate_id, 0.0, "no Ray worker was left to run it"))

    async def _slot(self, worker: _Worker, queue: asyncio.Queue[BatchItem]) -> None:
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
                await self._worker_died(ray, worker, token)
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

    async def _worker_died(self, ray: Any, worker: _Worker, token: str) -> None:
        """Give the dead process's slots back to the limiters, and wait for Ray to restart the worker."""
        async with worker.lock:
            if worker.token != token or not worker.alive:
                return  # another of its debates has seen to it
            await asyncio.gather(
                *(limiter.release_holder.remote(token) for limiter in self._limiters.values()), return_exceptions=True
            )
            deadline = asyncio.get_running_loop().time() + RESTART_WAIT_S
            while True:
                try:
                    worker.token, worker.pid, worker.host = await worker.handle.ident.remote()
                except (ray.exceptions.RayError, ConnectionError):
                    if asyncio.get_running_loop().time() >= deadline:
                        worker.alive = False
                        self.note(f"ray: a worker died and was not restarted within {RESTART_WAIT_S:.0f} s")
                        return
                    await asyncio.sleep(0.5)
                    continue
                self.note(f"ray: a worker died; restarted as pid {worker.pid} on {worker.host}")
                return

    async def _cancel_in_flight(self, ray: Any) -> None:
        """On the way out (Ctrl-C, SIGTERM): cancel the debates still running, so each saves itself as interrupted."""
        refs = list(self._in_flight)
        if not refs:
            return
        for ref in refs:
            with suppress(Exception):
                ray.cancel(ref)
        with suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*refs, return_exceptions=True), timeout=15)
