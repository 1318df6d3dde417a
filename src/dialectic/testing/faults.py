"""What can go wrong on the fake server: one fault, a seeded random mix of them, and seeded latency.

:class:`Fault` is one failure, queued by a test (``FakeLLMServer.inject``) or drawn by
:class:`RandomFaults`, which fails a share ``rate`` of the requests with kinds picked evenly from
a mix (:data:`FAULT_KINDS`). :class:`Latency` draws each request's delay. Both use their own
``random.Random`` seeded from the run's seed, so the *n*-th draw is the same on every run with that
seed (with concurrent requests, which request is the *n*-th depends on arrival order).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

FaultKindName = Literal["429", "500", "stall", "disconnect"]
FAULT_KINDS: tuple[FaultKindName, ...] = ("429", "500", "stall", "disconnect")
"""The kinds of the random mix: a 429 with ``Retry-After``, a 500, a stall (no answer for longer
than the client waits), and a connection closed without an answer."""

DEFAULT_STALL_S = 300.0
"""How long a stall keeps the request without answering: longer than dialectic's default per-call
timeout (120 s), so a client with default settings gives up first."""

DEFAULT_RETRY_AFTER_S = 1.0


@dataclass(frozen=True)
class Fault:
    """One injected failure.

    * ``status``: answer ``status`` (with ``Retry-After`` when ``retry_after`` is set; ``body``
      replaces the JSON error body);
    * ``delay``: wait ``delay_s``, then answer normally; a streamed answer also pauses
      ``chunk_delay_s`` before each chunk after the first (a slow but live stream, or, with a pause
      longer than the client's timeout, a stream that stalls half-way);
    * ``stall``: keep the request ``delay_s`` without answering, then close the connection;
    * ``malformed``: 200 with a body that is not JSON (``body`` if given);
    * ``truncate``: answer cut off by the token limit;
    * ``disconnect``: close the connection without answering.
    """

    kind: Literal["status", "delay", "stall", "malformed", "truncate", "disconnect"]
    status: int = 500
    retry_after: float | None = None
    delay_s: float = 0.0
    chunk_delay_s: float = 0.0
    body: str | None = None

    @property
    def label(self) -> str:
        """A short name for counting: the status code for ``status`` faults, else the kind."""
        return str(self.status) if self.kind == "status" else self.kind


def parse_fault_kinds(text: str | Iterable[str]) -> tuple[FaultKindName, ...]:
    """``"429,500"`` (or an iterable of names) → fault kinds; ``ValueError`` naming an unknown one."""
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text) if n.strip()]
    if not names:
        raise ValueError(f"give at least one fault kind (known: {', '.join(FAULT_KINDS)})")
    kinds: list[FaultKindName] = []
    for name in names:
        kind = next((k for k in FAULT_KINDS if k == name), None)
        if kind is None:
            raise ValueError(f"unknown fault kind '{name}' (known: {', '.join(FAULT_KINDS)})")
        kinds.append(kind)
    return tuple(dict.fromkeys(kinds))


class RandomFaults:
    """Fails a share ``rate`` (0..1) of the requests, each with a kind drawn evenly from ``kinds``."""

    def __init__(
        self,
        rate: float,
        kinds: Iterable[str] = FAULT_KINDS,
        *,
        seed: int = 0,
        stall_s: float = DEFAULT_STALL_S,
        retry_after_s: float = DEFAULT_RETRY_AFTER_S,
    ) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"the fault rate must be between 0 and 1 (got {rate:g})")
        if stall_s < 0 or retry_after_s < 0:
            raise ValueError("stall and Retry-After durations cannot be negative")
        self.rate = rate
        self.kinds = parse_fault_kinds(kinds)
        self.stall_s = stall_s
        self.retry_after_s = retry_after_s
        self._rng = random.Random(f"{seed}:faults")

    def next(self) -> Fault | None:
        """The fault for the next request, or None to answer it normally."""
        if self.rate <= 0.0 or self._rng.random() >= self.rate:
            return None
        kind = self._rng.choice(self.kinds)
        if kind == "429":
            return Fault("status", status=429, retry_after=self.retry_after_s)
        if kind == "500":
            return Fault("status", status=500)
        if kind == "stall":
            return Fault("stall", delay_s=self.stall_s)
        return Fault("disconnect")


class Latency:
    """Each request's delay: ``latency_s``, or with ``sigma`` > 0 a lognormal draw whose median is ``latency_s``.

    ``sigma`` is the standard deviation of the delay's logarithm: 0.5 puts about 95% of the
    delays between 0.38× and 2.7× the median.
    """

    def __init__(self, latency_s: float = 0.0, sigma: float = 0.0, *, seed: int = 0) -> None:
        if latency_s < 0 or sigma < 0:
            raise ValueError("latency and its spread cannot be negative")
        self.latency_s = latency_s
        self.sigma = sigma
        self._rng = random.Random(f"{seed}:latency")

    def next(self) -> float:
        if self.latency_s == 0.0 or self.sigma == 0.0:
            return self.latency_s
        return self._rng.lognormvariate(math.log(self.latency_s), self.sigma)
