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
    """A caller's handle on one run: the debate it runs, its calls in flight, and whether to pause."""

    def __init__(self) -> None:
        self.debate_id: str | None = None
        """Set once the run holds the debate's lease (for a new debate: once it exists)."""
        self._attached = asyncio.Event()
        self._pausing = False
        self._stopping = False
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    def attach(self, debate_id: str) -> None:
        """Called by the engine once the run holds ``debate_id``."""
        self.debate_id = debate_id
        self._attached.set()

    async def attached(self) -> str:
        """The debate's id, once the run holds it."""
        await self._attached.wait()
        assert self.debate_id is not None
        return self.debate_id

    @property
    def pausing(self) -> bool:
        return self._pausing

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def request_pause(self) -> None:
        """Refuse every new call from now on; the runner stops once the calls in flight are done."""
        self._pausing = True

    def withdraw_pause(self) -> bool:
        """Take back a pause that has not taken effect (no call refused, no step ended on it yet): the run
        goes on as if it had never been asked. ``False`` when there was none, or it is too late."""
        if not self._pausing or self._stopping:
            return False
        self._pausing = False
        return True

    def stop_if_pausing(self) -> None:
        """Between steps: raise :class:`PauseRequested` if a pause was asked for (it can no longer be taken back)."""
        if self._pausing:
            self._stopping = True
            raise PauseRequested()

    def begin_call(self) -> None:
        """Count a call in flight, or raise :class:`PauseRequested` if the run is pausing."""
        self.stop_if_pausing()
        self._in_flight += 1
        self._idle.clear()

    def end_call(self) -> None:
        self._in_flight -= 1
        if self._in_flight == 0:
            self._idle.set()

    async def idle(self) -> None:
        """Return once no call is in flight."""
        await self._idle.wait()
