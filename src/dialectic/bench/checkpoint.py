"""Keeping ``-o`` current while a run goes: the results file is rewritten as items finish.

A run that is killed (the machine taken away, ``kill -9``) leaves in its results file every item
that finished more than :data:`CHECKPOINT_INTERVAL_S` before; committed, that file
resumes the run anywhere (``--resume results.json``). The file is written atomically by the writer
it is given, so a kill during a write leaves the previous version whole. Writes are spaced out
because each one recomputes the summary (its bootstrap intervals) on the event loop, which on a big
run takes a noticeable time (about a second for 10 arms × 200 items): the spacing grows so that
writing takes at most :data:`WRITE_SHARE` of the run's time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence

from dialectic.bench.records import ItemResult
from dialectic.bench.runner import ArmTally, ProgressSink

CHECKPOINT_INTERVAL_S = 10.0
"""At most one write in this many seconds while the run goes (the first result is written at once), and
no finished result waits longer than this to be written (longer on runs whose file takes long to write)."""
WRITE_SHARE = 0.05
"""The most of the run's time the writes may take: after a write of ``d`` seconds, the next waits
``max(interval, d / WRITE_SHARE)``."""


class Checkpoint:
    """A :class:`~dialectic.bench.runner.ProgressSink` that passes everything on to ``inner`` and calls
    ``write`` with all the run's results so far: when a result finishes and the last write is ``interval_s``
    old or more, else when it will be (a timer on the running event loop, if there is one); :meth:`flush`
    writes now whatever is unwritten."""

    def __init__(
        self,
        inner: ProgressSink | None,
        results: Sequence[ItemResult],
        write: Callable[[list[ItemResult]], None],
        *,
        interval_s: float = CHECKPOINT_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._inner = inner
        self._results = list(results)
        self._write = write
        self._interval_s = interval_s
        self._clock = clock
        self._last: float | None = None
        self._spacing = interval_s
        self._unwritten = False
        self._timer: asyncio.TimerHandle | None = None
        self._failed: Exception | None = None
        self.writes = 0

    @property
    def results(self) -> list[ItemResult]:
        return list(self._results)

    def begin(self, arms: Sequence[str], total: int, done: Mapping[str, ArmTally]) -> None:
        if self._inner is not None:
            self._inner.begin(arms, total, done)

    def advance(self, result: ItemResult) -> None:
        if self._failed is not None:  # a timed write failed: stop the run as a direct one would
            failed, self._failed = self._failed, None
            raise failed
        self._results.append(result)
        self._unwritten = True
        if self._inner is not None:
            self._inner.advance(result)
        now = self._clock()
        if self._last is None or now - self._last >= self._spacing:
            self.flush()
        elif self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no event loop: the next result or flush() writes it
                return
            self._timer = loop.call_later(self._spacing - (now - self._last), self._timed_flush)

    @property
    def pending(self) -> bool:
        """Whether a timed write is waiting."""
        return self._timer is not None

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._unwritten:
            self._last = self._clock()
            self._write(list(self._results))
            self._spacing = max(self._interval_s, (self._clock() - self._last) / WRITE_SHARE)
            self._unwritten = False
            self.writes += 1

    def _timed_flush(self) -> None:
        self._timer = None
        try:
            self.flush()
        except Exception as exc:  # an event-loop callback's error would only be logged: keep it for advance()
            self._failed = exc
