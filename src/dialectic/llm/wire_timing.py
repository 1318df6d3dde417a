"""Latency as the wire sees it: from the request leaving to the reply arriving.

Timing around a whole call would also count the client's own work (building the request,
waiting for a connection from the pool), time the provider never spent. The HTTP adapters'
client (:mod:`dialectic.llm.http_wire`) has event hooks that mark when the request was sent and
when the reply's headers came back; :func:`measure` scopes those marks to one call (a context
variable, so concurrent calls on one client keep their own).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import httpx2


@dataclass
class WireTiming:
    started: float
    """When the caller began the call (the fallback when the hooks never fired)."""
    sent: float | None = None
    arrived: float | None = None

    def latency_ms(self) -> int:
        """Request sent → reply arrived; the caller's own span when the hooks did not see the request."""
        begin = self.sent if self.sent is not None else self.started
        end = self.arrived if self.arrived is not None and self.arrived >= begin else time.perf_counter()
        return round((end - begin) * 1000)


_CURRENT: ContextVar[WireTiming | None] = ContextVar("dialectic_wire_timing", default=None)


@contextmanager
def measure() -> Iterator[WireTiming]:
    """Time the one HTTP exchange made inside the block (the last one, if several were made)."""
    timing = WireTiming(started=time.perf_counter())
    token = _CURRENT.set(timing)
    try:
        yield timing
    finally:
        _CURRENT.reset(token)


async def _on_request(request: httpx2.Request) -> None:
    timing = _CURRENT.get()
    if timing is not None:
        timing.sent, timing.arrived = time.perf_counter(), None


async def _on_response(response: httpx2.Response) -> None:
    timing = _CURRENT.get()
    if timing is not None:
        timing.arrived = time.perf_counter()


EVENT_HOOKS: dict[str, list[Callable[..., Awaitable[None]]]] = {"request": [_on_request], "response": [_on_response]}
"""``event_hooks`` for the wire's httpx clients."""
