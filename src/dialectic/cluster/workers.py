"""The pool of worker actors a driver hands its work to, and what it does when one of them dies.

A worker is an actor of one CPU running many pieces of work at once on its event loop. When its
process dies (killed, its node lost), the work it was running fails on the driver, which gives the
dead process's slots back to the limiters (:meth:`~dialectic.cluster.limits.Limiters.release_holder`)
and waits for Ray to restart the actor (:func:`revive`) before handing it work again.
"""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, TypeVar

from dialectic.cluster.limits import Limiters

RESTART_WAIT_S = 120.0
"""How long the driver waits for a dead worker to be restarted before it stops handing it work."""
CLOSE_WAIT_S = 30.0
"""How long a driver on its way out waits for its workers to end the work they were running."""

T = TypeVar("T")


class WorkerClosed(Exception):
    """Work handed to a worker after the driver closed it: not started."""


class ClusterWorker:
    """The base of a worker actor's body: its holder token (a restarted process has a new one) and ident.

    Each piece of work runs through :meth:`working`, as a task of its own, so that :meth:`close` can
    end it and wait for it on the worker, whatever Ray's cancellation of the call did or did not reach
    (a call cancelled while it was being handed over may still start): a debate saves itself as
    interrupted there, before the driver exits and the worker process goes with it.
    """

    def __init__(self) -> None:
        self.token = uuid.uuid4().hex
        """Names this worker process as a slot holder: a restarted worker has a new one."""
        self._work: set[asyncio.Task[Any]] = set()
        self._closed = False

    async def ident(self) -> tuple[str, int, str]:
        """This worker's holder token, process id and host."""
        return self.token, os.getpid(), socket.gethostname()

    async def working(self, work: Callable[[], Awaitable[T]]) -> T:
        """Run ``work`` as a task :meth:`close` can end (a cancelled call cancels it too)."""
        if self._closed:
            raise WorkerClosed("this worker was closed by its driver")
        task: asyncio.Task[T] = asyncio.ensure_future(work())
        self._work.add(task)
        try:
            return await task
        finally:
            self._work.discard(task)

    async def close(self) -> int:
        """Start no more work; cancel the work running and wait until it has ended; how much there was."""
        self._closed = True
        running = [task for task in self._work if not task.done()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        return len(running)


@dataclass
class Worker:
    """The driver's view of one worker actor: its handle and the process now behind it."""

    handle: Any
    token: str
    pid: int
    host: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    alive: bool = True


def worker_count(ray: Any, concurrency: int) -> int:
    """One worker per CPU of the cluster, at most ``concurrency``."""
    cpus = int(ray.cluster_resources().get("CPU", 1))
    return max(1, min(concurrency, cpus))


async def start_workers(
    ray: Any, body: type[ClusterWorker], args: Sequence[Any], count: int, per_worker: int
) -> list[Worker]:
    """``count`` actors of ``body(*args)``, each running up to ``per_worker`` calls at once; up once this returns."""
    actor = ray.remote(body).options(num_cpus=1, max_concurrency=per_worker + 2, max_restarts=-1, max_task_retries=0)
    handles = [actor.remote(*args) for _ in range(count)]
    idents = await asyncio.gather(*(handle.ident.remote() for handle in handles))
    return [Worker(handle, *ident) for handle, ident in zip(handles, idents, strict=True)]


def describe(workers: Sequence[Worker]) -> str:
    """``2 workers (pid 10 on host, pid 11 on host)``: what the tests read the workers' processes from."""
    return f"{len(workers)} workers ({', '.join(f'pid {w.pid} on {w.host}' for w in workers)})"


async def revive(ray: Any, worker: Worker, token: str, limiters: Limiters, note: Callable[[str], None]) -> None:
    """After ``worker``'s process ``token`` died: give its slots back to the limiters, and wait for Ray to
    restart it (``worker.alive`` is False when it was not restarted within :data:`RESTART_WAIT_S`)."""
    async with worker.lock:
        if worker.token != token or not worker.alive:
            return  # another piece of its work has seen to it
        await limiters.release_holder(token)
        deadline = asyncio.get_running_loop().time() + RESTART_WAIT_S
        while True:
            try:
                worker.token, worker.pid, worker.host = await worker.handle.ident.remote()
            except (ray.exceptions.RayError, ConnectionError):
                if asyncio.get_running_loop().time() >= deadline:
                    worker.alive = False
                    note(f"ray: a worker died and was not restarted within {RESTART_WAIT_S:.0f} s")
                    return
                await asyncio.sleep(0.5)
                continue
            note(f"ray: a worker died; restarted as pid {worker.pid} on {worker.host}")
            return


async def cancel_refs(
    ray: Any, refs: Sequence[Any], workers: Sequence[Worker] = (), timeout_s: float = CLOSE_WAIT_S
) -> None:
    """On the way out (Ctrl-C, SIGTERM): cancel the calls still running on the workers, close the workers
    (no more work starts; the work running ends: a debate saves itself as interrupted), and wait a while
    for all of it to end."""
    for ref in refs:
        with suppress(Exception):  # already finished, or its worker is gone
            ray.cancel(ref)
    closing = []
    for worker in workers:
        if worker.alive:
            with suppress(Exception):  # its process is gone
                closing.append(worker.handle.close.remote())
    if not refs and not closing:
        return
    with suppress(Exception):  # what did not end in time is left to the cluster
        await asyncio.wait_for(asyncio.gather(*refs, *closing, return_exceptions=True), timeout=timeout_s)
