"""The debates this server runs: each one a task on the server's event loop, with its pause control.

Every run goes through the engine, so through the store's lease: a debate another process
runs (``dialectic resume`` in a terminal, another server) is refused with
:class:`~dialectic.core.errors.DebateBusyError`, which the API answers with 409. A request that
starts or resumes a run is answered once the run holds the lease (the debate then exists and
is the run's), so whatever fails before that is the request's answer, and nothing is created.

A debate suspended for a human seat's turn with a ``deadline`` is resumed here when the deadline
passes, so that the seat's fallback model plays the turn (:meth:`ServerRuns.watch_deadlines`).

Every request that changes a debate's state (answers, turns, pause, resume, cancel) holds the debate's
lock (:meth:`ServerRuns.steering`) from its first check to its last change, so requests that
arrive together take effect one after another, each seeing what the one before it did: two
sets of answers cannot both resume a debate, and a cancel cannot land inside another's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from dialectic.core.domain import DebateState, utc_now
from dialectic.core.errors import DebateStateError, DialecticError
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.engine.pausing import RunControl
from dialectic.engine.seats import deadline_passed, next_deadline
from dialectic.web.errors import ApiError

log = logging.getLogger(__name__)


@dataclass
class Run:
    debate_id: str
    task: asyncio.Task[DebateState]
    control: RunControl
    cancelled: bool = field(default=False)
    """Whether the run was told to stop: it is cancelled once, however many ask."""

    def cancel(self) -> None:
        if not self.cancelled:
            self.cancelled = True
            self.task.cancel()


class TooManyRunning(ApiError):
    def __init__(self, limit: int) -> None:
        super().__init__(
            429,
            "too_many_debates",
            f"this server already runs {limit} debates, its limit (dialectic serve --max-running); "
            "try again when one has finished",
        )


class ServerRuns:
    """Starts, resumes, pauses and cancels runs; at most ``max_running`` at once."""

    def __init__(self, engine: DebateEngine, *, max_running: int, on_end: Callable[[str], None]) -> None:
        self.engine = engine
        self.max_running = max_running
        self._on_end = on_end
        self._runs: dict[str, Run] = {}
        self._starting = 0
        self._locks: dict[str, asyncio.Lock] = {}
        self._lock_users: dict[str, int] = {}
        self._deadlines: dict[str, asyncio.TimerHandle] = {}
        self._background: set[asyncio.Task[None]] = set()
        self.base_url: str | None = None
        """Where this server is reached (``http://host:port``), for the links a debate's hooks send."""

    @asynccontextmanager
    async def steering(self, debate_id: str) -> AsyncIterator[None]:
        """Hold ``debate_id``'s lock: one state change of the debate at a time on this server.

        A lock lives while a request holds or waits for it, so there is never more than one
        per debate in use and none is kept for debates no one steers."""
        lock = self._locks.setdefault(debate_id, asyncio.Lock())
        self._lock_users[debate_id] = self._lock_users.get(debate_id, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._lock_users[debate_id] -= 1
            if not self._lock_users[debate_id]:
                del self._lock_users[debate_id], self._locks[debate_id]

    @property
    def count(self) -> int:
        return len(self._runs)

    def is_running(self, debate_id: str) -> bool:
        return debate_id in self._runs

    def task_of(self, debate_id: str) -> asyncio.Task[DebateState] | None:
        """The task running ``debate_id`` here (``None`` once it ended): await it (shielded) for the outcome."""
        run = self._runs.get(debate_id)
        return run.task if run is not None else None

    async def start(self, request: DebateRequest) -> str:
        """Create and run a debate; its id once the run holds it."""
        return await self._launch(lambda control: self.engine.start(request, control=control))

    async def resume(
        self, debate_id: str, answers: Mapping[str, str] | None = None, turns: Mapping[str, str] | None = None
    ) -> str:
        run = self._runs.get(debate_id)
        if run is not None and run.control.pausing:
            raise DebateStateError(
                f"debate {debate_id} is pausing: its calls in flight are finishing; resume it once it is paused"
            )
        if run is not None:
            raise DebateStateError(f"debate {debate_id} is already running on this server")
        return await self._launch(lambda control: self.engine.resume(debate_id, answers, control=control, turns=turns))

    async def _launch(self, make: Callable[[RunControl], Coroutine[Any, Any, DebateState]]) -> str:
        if self.count + self._starting >= self.max_running:
            raise TooManyRunning(self.max_running)
        self._starting += 1
        try:
            control = RunControl()
            task = asyncio.ensure_future(make(control))
            attached = asyncio.ensure_future(control.attached())
            try:
                await asyncio.wait({task, attached}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                attached.cancel()
            if control.debate_id is None:
                task.result()  # it ended before holding the debate: its error is the answer
                raise RuntimeError("a run ended without a debate")  # pragma: no cover - the engine always attaches
            run = Run(control.debate_id, task, control)
            self._runs[run.debate_id] = run
        finally:
            self._starting -= 1
        task.add_done_callback(lambda _: self._ended(run))
        return run.debate_id

    def _ended(self, run: Run) -> None:
        if self._runs.get(run.debate_id) is run:
            del self._runs[run.debate_id]
        if not run.task.cancelled():
            error = run.task.exception()
            if isinstance(error, DialecticError):
                log.info("debate %s stopped: %s", run.debate_id, error.message)
            elif error is not None:
                log.error("debate %s stopped by an unexpected error", run.debate_id, exc_info=error)
            else:
                self.watch_deadlines(run.task.result())
        self._fire_hooks(run.debate_id)
        self._on_end(run.debate_id)

    def _fire_hooks(self, debate_id: str) -> None:
        """Start the hooks of the debate's configuration when it finished (in the background); never raises."""
        try:
            state = self.engine.store.load(debate_id)
            saved = state.saved_config()
            if saved is None or not saved.hooks.active:
                return
            from dialectic.reporting.hooks import fire, log_warning

            fire(saved.hooks, state, links=self.links(debate_id), warn=log_warning)
        except Exception:  # the debate is saved: its hooks change nothing about it
            log.warning("debate %s: hooks not run", debate_id, exc_info=True)

    def links(self, debate_id: str) -> dict[str, str]:
        """The debate's page and downloads on this server (none until its address is known)."""
        if self.base_url is None:
            return {}
        base = self.base_url.rstrip("/")
        return {
            "web": f"{base}/#/debates/{debate_id}",
            "export": f"{base}/api/debates/{debate_id}/export",
            "report": f"{base}/api/debates/{debate_id}/report",
        }

    def watch_deadlines(self, state: DebateState) -> None:
        """Resume ``state`` when the first deadline of the human turns it waits for passes (the seat's fallback
        model then plays the turn); nothing for a debate that waits for none with a deadline."""
        at = next_deadline(state) if state.status == "suspended" else None
        previous = self._deadlines.pop(state.id, None)
        if previous is not None:
            previous.cancel()
        if at is None:
            return
        delay = max(0.0, (at - utc_now()).total_seconds())
        self._deadlines[state.id] = asyncio.get_running_loop().call_later(delay, self._deadline_passed, state.id)

    def _deadline_passed(self, debate_id: str) -> None:
        self._deadlines.pop(debate_id, None)
        task = asyncio.ensure_future(self._play_fallbacks(debate_id))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _play_fallbacks(self, debate_id: str) -> None:
        async with self.steering(debate_id):
            try:
                state = self.engine.store.load(debate_id)
                if state.status != "suspended" or self.is_running(debate_id):
                    return
                if any(deadline_passed(turn) for turn in state.pending_turns()):
                    await self.resume(debate_id)
            except (DialecticError, ApiError) as exc:  # refused (busy, the limit on runs): it waits for a resume
                log.warning("debate %s: could not resume it for its fallback model: %s", debate_id, exc)

    def withdraw_pause(self, debate_id: str) -> bool:
        """Take back a pause asked of a run here before it took effect; ``True`` if the run goes on."""
        run = self._runs.get(debate_id)
        return run is not None and run.control.withdraw_pause()

    def pause(self, debate_id: str) -> None:
        """Ask the run to pause: it finishes its calls in flight, then stops as ``paused``."""
        self._run(debate_id).control.request_pause()

    async def cancel(self, debate_id: str) -> None:
        """Stop the run now (calls in flight are cancelled); the debate is saved as ``interrupted``."""
        run = self._run(debate_id)
        run.cancel()
        await asyncio.wait({run.task})

    def _run(self, debate_id: str) -> Run:
        run = self._runs.get(debate_id)
        if run is None:
            raise DebateStateError(f"debate {debate_id} is not running on this server")
        return run

    async def shutdown(self) -> None:
        """Cancel every run (each is saved as ``interrupted``, to be resumed later) and wait for them."""
        for timer in self._deadlines.values():
            timer.cancel()
        self._deadlines.clear()
        for task in list(self._background):
            task.cancel()
        runs = list(self._runs.values())
        for run in runs:
            run.cancel()
        if runs:
            await asyncio.wait({run.task for run in runs})
