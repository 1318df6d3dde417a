"""Each provider endpoint's concurrency, shared by the whole cluster.

One named actor per endpoint (:class:`EndpointLimiter`, ``dialectic-limit:<job>:<endpoint>`` in the
``dialectic`` namespace, one set per command) hands out at most ``limit`` slots at a time, and every
worker's LLM clients take a slot from it around each request (the provider pool's ``shared_limits`` hook,
:class:`RayLimits`).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from dialectic.cluster.connection import NAMESPACE
from dialectic.core.config import AgentConfig
from dialectic.llm.client import SharedLimit
from dialectic.llm.registry import ProviderPool

LIMITER_PREFIX = "dialectic-limit:"


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

    @classmethod
    def by_name(cls, names: Mapping[str, str], holder: str) -> RayLimits:
        """The limits of the limiter actors called ``names`` (by endpoint), in a worker holding as ``holder``."""
        from dialectic.cluster.connection import import_ray

        ray = import_ray()
        return cls({endpoint: ray.get_actor(name, namespace=NAMESPACE) for endpoint, name in names.items()}, holder)


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


def endpoint_keys(agents: Iterable[AgentConfig]) -> list[str]:
    """The provider endpoints ``agents`` call (as the workers' provider pools name them); humans call none."""
    pool = ProviderPool()
    return sorted({pool.key_for(agent) for agent in agents if not agent.is_human})


def limiter_name(job_id: str, endpoint: str) -> str:
    """The name of this driver's limiter of ``endpoint``: a run resumed while the actors of the run it
    resumes are still going away, or two commands on one cluster, never share one."""
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


@dataclass(frozen=True)
class Limiters:
    """The driver's limiter actors: by endpoint, their names (what the workers look them up by) and handles."""

    limit: int
    names: dict[str, str]
    handles: dict[str, Any]

    async def release_holder(self, holder: str) -> None:
        """Give back every slot of ``holder``, a worker process that died."""
        await asyncio.gather(*(h.release_holder.remote(holder) for h in self.handles.values()), return_exceptions=True)

    def describe(self) -> str:
        count = len(self.handles)
        endpoints = f"{count} endpoint{'s' if count != 1 else ''}"
        return f"{self.limit} calls at a time per endpoint across the cluster ({endpoints})"


async def start_limiters(ray: Any, endpoints: Iterable[str], limit: int) -> Limiters:
    """One limiter actor of ``limit`` slots per endpoint, named after this driver's job; up once this returns."""
    job_id = ray.get_runtime_context().get_job_id()
    names = {endpoint: limiter_name(job_id, endpoint) for endpoint in endpoints}
    handles = {endpoint: limiter_actor(ray, name, limit) for endpoint, name in names.items()}
    await asyncio.gather(*(handle.stats.remote() for handle in handles.values()))  # up, by name
    return Limiters(limit, names, handles)
