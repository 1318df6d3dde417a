"""``dialectic bench --ray [ADDRESS|auto]``: the (arm, item) pairs of a bench run on a Ray cluster (extra ``[ray]``).

The driver (the ``dialectic bench`` process) keeps the run as a local run does: it alone writes
``bench.sqlite3`` (each result the moment it comes back), the results file, the progress and the
report, so ``--resume`` and ``-o`` behave exactly as locally. The pairs run on a pool of
:class:`BenchWorker` actors (one per CPU of the cluster, at most ``--concurrency``) through
:func:`dialectic.bench.arms.run_arm`, the function a local run uses; at most ``--concurrency`` pairs
are in flight across the cluster. Each endpoint's concurrency is shared by the cluster through the
limiter actors of :mod:`dialectic.cluster.limits` (``debate.maxConcurrency`` of the run's configuration).

The unit of work is one (arm, item) pair, but **all the arms of an item go to the same worker**: a
worker's slots take an item's pending pairs together and run them before taking the next item. A
worker keeps one :class:`~dialectic.bench.draws.SharedDraws` for its life, as a local run keeps one
for the process, and a shared draw's key includes the question, so the arms of an item share their
k-th samples exactly as they would locally. What differs: a pair re-run after its worker died asks
again for the draws the dead process held (as a resumed local run does), and two *items* with the
same question share draws locally only when they land on the same worker.

A worker that dies (killed, its node lost) fails the pairs it was running; nothing of them was
saved (only the driver saves, when a result comes back), so the driver gives the dead process's slots
back to the limiters, waits for Ray to restart the worker and hands the same pairs to it again (up to
:data:`MAX_ATTEMPTS` times each): no result is saved twice. A pair that could not be run is left
without a result, and the run stops with an error saying so; ``--resume`` runs it.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialectic.bench.arms import ArmEnv, ArmSpec, gather_or_cancel, run_arm
from dialectic.bench.records import ItemResult, RunSpec
from dialectic.bench.runner import ProgressSink, arms_for, calling_agents, env_for, pending, tallies
from dialectic.bench.store import BenchStore
from dialectic.bench.tasks import Item, Task
from dialectic.cluster.connection import import_ray
from dialectic.cluster.limits import RayLimits, endpoint_keys, start_limiters
from dialectic.cluster.workers import ClusterWorker, cancel_refs, describe, revive, start_workers, worker_count
from dialectic.core.errors import DialecticError, InvalidArgumentsError
from dialectic.llm.registry import ProviderPool
from dialectic.llm.retry import RetryPolicy

MAX_ATTEMPTS = 3
"""How many times a pair is handed to a worker when the workers running it die."""

Pair = tuple[ArmSpec, Item]


@dataclass(frozen=True)
class Stopped:
    """A worker's answer when its pair raised an error that stops the run (as it stops a local one): sent
    back as text and exit code, since an error class need not survive pickling."""

    message: str
    exit_code: int

    def error(self) -> DialecticError:
        error = DialecticError(self.message)
        error.exit_code = self.exit_code
        return error


class BenchWorker(ClusterWorker):
    """The body of a worker actor: runs the pairs it is handed, many at once, with one set of shared draws."""

    def __init__(self, spec: RunSpec, limiter_names: dict[str, str]) -> None:
        super().__init__()
        self._spec = spec
        self._limiter_names = dict(limiter_names)
        self._arms = {arm.name: arm for arm in arms_for(spec)}
        self._env: ArmEnv | None = None

    async def run(self, arm: str, item: Item) -> ItemResult | Stopped:
        return await self.working(lambda: self._run(arm, item))

    async def _run(self, arm: str, item: Item) -> ItemResult | Stopped:
        if self._env is None:  # built on the event loop, where every call runs
            pool = ProviderPool(shared_limits=RayLimits.by_name(self._limiter_names, self.token))
            self._env = env_for(self._spec, pool, RetryPolicy())
        try:
            return await run_arm(self._arms[arm], item, self._env)
        except DialecticError as exc:
            return Stopped(str(exc), exc.exit_code)


def for_workers(spec: RunSpec) -> RunSpec:
    """``spec`` with an absolute configuration directory: a worker runs in a directory of its own."""
    return spec.model_copy(update={"config_dir": str(Path(spec.config_dir).absolute())})


@dataclass
class RayBench:
    """The driver of a Ray bench run: same store, results and progress as :func:`~dialectic.bench.runner.run_bench`."""

    spec: RunSpec
    task: Task
    env: ArmEnv
    """The driver's environment: which agents call, and the run's configuration (no call is made with it)."""
    store: BenchStore
    concurrency: int
    progress: ProgressSink | None = None
    note: Callable[[str], None] = lambda text: None
    workers: int | None = None
    """How many worker actors (default: one per CPU of the cluster, at most ``concurrency``)."""
    attempts: dict[tuple[str, str], int] = field(default_factory=dict)

    async def run(self) -> int:
        """Run what is left of the run on the cluster; how many pairs were left to run."""
        if self.concurrency < 1:
            raise InvalidArgumentsError(f"--concurrency must be at least 1 (got {self.concurrency})")
        ray = import_ray()
        arms = arms_for(self.spec)
        todo = pending(self.task, arms, self.store.done(self.spec.id))
        if self.progress is not None:
            self.progress.begin([a.name for a in arms], len(self.task.items), tallies(self.store.results(self.spec.id)))
        if not todo:
            return 0
        endpoints = endpoint_keys(calling_agents(self.spec, self.env))
        self._limiters = await start_limiters(ray, endpoints, self.env.dialectic_config.debate.max_concurrency)
        slots = min(self.concurrency, len(todo))
        count = min(self.workers or worker_count(ray, slots), slots)
        args = (for_workers(self.spec), self._limiters.names)
        self._workers = await start_workers(ray, BenchWorker, args, count, math.ceil(slots / count))
        self.note(f"ray: {describe(self._workers)}; {self._limiters.describe()}")
        self._items: deque[list[Pair]] = deque(by_item(todo))
        self._local: list[deque[Pair]] = [deque() for _ in self._workers]
        self._in_flight: set[Any] = set()
        try:
            await gather_or_cancel(self._slot(i % count) for i in range(slots))
        finally:
            await cancel_refs(ray, list(self._in_flight), self._workers)
        left = pending(self.task, arms, self.store.done(self.spec.id))
        if left:
            raise DialecticError(
                f"{len(left)} (arm, item) pairs were not run: their Ray workers died {MAX_ATTEMPTS} times or were "
                "not restarted; --resume runs them"
            )
        return len(todo)

    async def _slot(self, index: int) -> None:
        """One of the pairs in flight, on worker ``index``: its pending pairs, then a new item's."""
        ray = import_ray()
        worker, local = self._workers[index], self._local[index]
        while worker.alive:
            if not local:
                if not self._items:
                    return
                local.extend(self._items.popleft())  # every pending arm of the item: they share draws here
            arm, item = local.popleft()
            key = (arm.name, item.id)
            self.attempts[key] = self.attempts.get(key, 0) + 1
            token = worker.token
            ref = worker.handle.run.remote(arm.name, item)
            self._in_flight.add(ref)  # kept when this is cancelled: run() cancels it on the cluster
            try:
                outcome = await ref
            except ray.exceptions.RayTaskError as exc:  # the worker's code failed: a bug, which stops the run
                cause = getattr(exc, "cause", None)
                why = f"{type(cause).__name__}: {cause}" if cause is not None else str(exc).splitlines()[0]
                raise DialecticError(f"a Ray worker failed on {arm.name} / {item.id}: {why}") from None
            except (ray.exceptions.RayError, ConnectionError):  # the worker (or its node) died: nothing was saved
                self._in_flight.discard(ref)
                await revive(ray, worker, token, self._limiters, self.note)
                if self.attempts[key] < MAX_ATTEMPTS:
                    local.appendleft((arm, item))
                continue
            self._in_flight.discard(ref)
            if isinstance(outcome, Stopped):
                raise outcome.error()
            self._save(outcome)
        if local:  # not restarted: its pairs go to the other workers
            self._items.appendleft(list(local))
            local.clear()

    def _save(self, result: ItemResult) -> None:
        self.store.save(self.spec.id, result)
        if self.progress is not None:
            self.progress.advance(result)


def by_item(pairs: list[Pair]) -> list[list[Pair]]:
    """``pairs`` (item-major) grouped by item, in order: what one worker takes at a time."""
    groups: dict[str, list[Pair]] = {}
    for pair in pairs:
        groups.setdefault(pair[1].id, []).append(pair)
    return list(groups.values())
