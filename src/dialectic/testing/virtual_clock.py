"""An asyncio event loop whose clock is virtual: waiting costs no real time.

When the loop has nothing ready to run, instead of sleeping until its next timer it moves
its clock forward to that timer. Code that waits with ``asyncio.sleep`` (the scripted
model's latency, back-off, timeouts) runs in an instant and measures exact, repeatable
durations with ``loop.time()`` — scheduling can be tested against a timeline, not a stopwatch.

Real I/O still works (the selector is polled without blocking), but a test that waits on
real I/O while no timer is due would spin: use it for code whose waiting is all timers.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0


class _JumpingSelector(selectors.DefaultSelector):
    """Polls for real I/O; when there is none, jumps the clock by the loop's wait instead of sleeping."""

    def __init__(self, clock: _Clock) -> None:
        super().__init__()
        self._clock = clock

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = super().select(0)
        if not ready and timeout is not None and timeout > 0:
            self._clock.now += timeout
        return ready


class VirtualClockLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        self._virtual = _Clock()
        super().__init__(_JumpingSelector(self._virtual))

    def time(self) -> float:
        return self._virtual.now


def run_virtual(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on a :class:`VirtualClockLoop`."""
    with asyncio.Runner(loop_factory=VirtualClockLoop) as runner:
        return runner.run(main)
