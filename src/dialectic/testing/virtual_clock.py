"""An asyncio event loop whose clock is virtual: waiting costs no real time.

When the loop has nothing ready to run, instead of sleeping until its next timer it moves
its clock forward to that timer. Code that waits with ``asyncio.sleep`` (the scripted
model's latency, back-off, timeouts) runs in an instant and measures exact, repeatable
durations with ``loop.time()`` — scheduling can be tested against a timeline, not a stopwatch.

Work handed to a thread (``asyncio.to_thread``, ``run_in_executor``) costs no virtual time:
while any is running, the loop waits for it for real and the clock stands still, so a timer
cannot fire "during" it however long it really takes on a loaded machine.

Real I/O still works (the selector is polled without blocking), but a test that waits on
real I/O while no timer is due would spin: use it for code whose waiting is all timers.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor
from typing import Any, TypeVar, TypeVarTuple

T = TypeVar("T")
Ts = TypeVarTuple("Ts")


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.threads_running = 0


class _JumpingSelector(selectors.DefaultSelector):
    """Polls for real I/O; when there is none, jumps the clock by the loop's wait instead of sleeping."""

    def __init__(self, clock: _Clock) -> None:
        super().__init__()
        self._clock = clock

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if self._clock.threads_running and timeout != 0:
            return super().select(None)  # a thread's result wakes the loop; the clock stands still meanwhile
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

    def run_in_executor(self, executor: Executor | None, func: Callable[[*Ts], T], *args: *Ts) -> asyncio.Future[T]:
        self._virtual.threads_running += 1
        future = super().run_in_executor(executor, func, *args)
        future.add_done_callback(self._thread_done)
        return future

    def _thread_done(self, _: asyncio.Future[Any]) -> None:
        self._virtual.threads_running -= 1


def run_virtual(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on a :class:`VirtualClockLoop`."""
    with asyncio.Runner(loop_factory=VirtualClockLoop) as runner:
        return runner.run(main)
