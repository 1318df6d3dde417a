"""Pausing a running debate from outside: finish the calls in flight, start no new one, stop between steps.

Whoever runs a debate (the web server) hands the engine a :class:`RunControl` and may call
:meth:`RunControl.request_pause` at any time. From then on every new LLM call is refused
with :class:`PauseRequested` before it is made, while the calls already in flight run to
the end and their results are saved as usual. Once none is in flight, the runner stops the
debate with status ``paused``; its cursor stays on the step that was not finished, so a
resume redoes only what was not saved.
"""

from __future__ import annotations

import asyncio


class PauseRequested(Exception):
    """A call was refused because the debate is pausing (not a failure: the runner turns it into ``paused``)."""


class RunControl:
    """The calls of one run in flight, and whether the run was asked to pause."""

    def __init__(self) -> None:
        self._pausing = False
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def pausing(self) -> bool:
        return self._pausing

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def request_pause(self) -> None:
        """Refuse every new call from now on; the runner stops once the calls in flight are done."""
        self._pausing = True

    def begin_call(self) -> None:
        """Count a call in flight, or raise :class:`PauseRequested` if the run is pausing."""
        if self._pausing:
            raise PauseRequested()
        self._in_flight += 1
        self._idle.clear()

    def end_call(self) -> None:
        self._in_flight -= 1
        if self._in_flight == 0:
            self._idle.set()

    async def idle(self) -> None:
        """Return once no call is in flight."""
        await self._idle.wait()
