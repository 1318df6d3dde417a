"""SIGTERM and SIGHUP stop a command the way Ctrl-C does.

``timeout``, systemd, ``docker stop`` and a closing terminal send SIGTERM or SIGHUP, not
SIGINT. While the engine runs, :meth:`StopSignals.run_cancellable` registers event-loop
signal handlers that cancel the engine's task, exactly what :class:`asyncio.Runner` does
for Ctrl-C, so the engine saves the debate as ``interrupted``. Outside the event loop (for
instance while the user types answers to clarifying questions) the process-level handler
raises :class:`~dialectic.cli.interruptions.Terminated` instead, as Python raises
``KeyboardInterrupt`` for Ctrl-C (:mod:`dialectic.cli.interruptions` gives the exit status).
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

from dialectic.cli.interruptions import Terminated

T = TypeVar("T")

STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    sig for sig in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if sig is not None
)


class StopSignals:
    """SIGTERM/SIGHUP handling for one command; ``received`` is the first such signal, if any."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._active = False

    @contextmanager
    def installed(self) -> Iterator[None]:
        """Raise :class:`Terminated` on SIGTERM/SIGHUP until the block ends (then restore the old handlers)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._raise)
        self._active = True
        try:
            yield
        finally:
            self._active = False
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    async def run_cancellable(self, call: Callable[[], Awaitable[T]]) -> T:
        """Await ``call()`` with SIGTERM/SIGHUP cancelling this task (the engine then saves the debate)."""
        task = asyncio.current_task()
        if not self._active or task is None:
            return await call()
        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, self._cancel, sig, task)
        try:
            return await call()
        finally:
            for sig in STOP_SIGNALS:
                loop.remove_signal_handler(sig)  # this resets the process-level handler to the default...
                signal.signal(sig, self._raise)  # ...so put ours back

    def run(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` to its end in a new event loop; SIGTERM or SIGHUP cancels it (what it saved stays
        saved) and raises :class:`Terminated`. The one wrapper of the commands that run one coroutine
        (``batch``, ``bench``)."""

        async def cancellable() -> None:
            await self.run_cancellable(lambda: work)

        try:
            asyncio.run(cancellable())
        except asyncio.CancelledError:
            if self.received is None:
                raise
            raise Terminated(self.received) from None

    def _raise(self, signum: int, frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signum
        raise Terminated(signum)

    def _cancel(self, signum: int, task: asyncio.Task[object]) -> None:
        if self.received is not None:
            return  # the engine is already saving; a second signal must not cut that short
        self.received = signum
        task.cancel()
