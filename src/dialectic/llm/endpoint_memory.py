"""What a provider learned about an endpoint, kept for a while and no longer.

An adapter asks a server once what it is (its context window, whether it has the Responses API,
which structured-output form it takes) and remembers the answer for every later call in the
process. A long-lived process (``dialectic serve``) outlives the servers it talks to: a local
``llama-server`` restarted on the same address with another ``-c`` is another server. So an answer
is kept for :data:`MEMORY_TTL_S` and then asked again, and an endpoint that cannot be reached is
forgotten at once (what answers there next may not be what answered before).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

MEMORY_TTL_S = 600.0
"""How long an endpoint's answer is trusted before it is asked again: ten minutes, a few debates'
worth of calls against one extra small request."""


class EndpointMemory(Generic[K, V]):
    """A map from keys that start with an endpoint's base URL (the key itself, or a tuple whose first
    item it is) to what that endpoint said, each entry dropped ``ttl_s`` seconds after it was set.

    ``clock`` is a monotonic clock in seconds; tests give a virtual one."""

    def __init__(self, ttl_s: float = MEMORY_TTL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.clock = clock
        self._entries: dict[K, tuple[float, V]] = {}

    def _fresh(self, key: object) -> tuple[float, V] | None:
        """The entry of ``key`` while it is trusted (an expired one is dropped)."""
        entry = self._entries.get(key)  # type: ignore[arg-type]
        if entry is not None and self.clock() - entry[0] >= self.ttl_s:
            del self._entries[key]  # type: ignore[arg-type]
            return None
        return entry

    def get(self, key: K, default: V) -> V:
        entry = self._fresh(key)
        return default if entry is None else entry[1]

    def __contains__(self, key: object) -> bool:
        return self._fresh(key) is not None

    def __setitem__(self, key: K, value: V) -> None:
        self._entries[key] = (self.clock(), value)

    def __getitem__(self, key: K) -> V:
        entry = self._fresh(key)
        if entry is None:
            raise KeyError(key)
        return entry[1]

    def values(self) -> list[V]:
        """The entries still trusted."""
        return [entry[1] for key in list(self._entries) if (entry := self._fresh(key)) is not None]

    def forget(self, endpoint: str) -> None:
        """Drop every entry about ``endpoint``."""
        for key in list(self._entries):
            if (key[0] if isinstance(key, tuple) else key) == endpoint:
                del self._entries[key]

    def clear(self) -> None:
        self._entries.clear()
