"""Debates running in the server process: one asyncio task each, and what their events say.

A job follows one debate. Its task consumes the debate's typed events (from
:meth:`dialectic.Debate.stream`, or a resumed run's) and keeps what the store does not say:
the phase under way and how far it got. Every event that moves the debate on wakes those
waiting on the job (:meth:`Jobs.wait`), which is how ``wait_for_debate`` reports progress
without polling. The saved debate stays the truth for everything else (status, rounds,
questions, result): the engine saves before it publishes.

Cancelling a job cancels its task; the engine saves the debate as ``interrupted``. A debate that
stops to wait for a human seat's turn with a ``deadline`` is resumed when the deadline passes, so
that the seat's fallback model plays the turn (:meth:`Jobs.watch_deadlines`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass, field

from dialectic.core import events as ev
from dialectic.core.domain import DebateState, utc_now
from dialectic.core.errors import DebateBusyError, DialecticError, InvalidArgumentsError
from dialectic.engine.seats import next_deadline
from dialectic.front.results import Finished

log = logging.getLogger(__name__)

EventStream = Callable[[], AsyncIterator[ev.Event]]
"""Starts a run when called: the run's events, as :meth:`dialectic.Debate.stream` yields them."""
Listener = Callable[["Job"], Awaitable[None]]

QUIET = (
    ev.TokenDelta,
    ev.ChangesSaved,
    ev.CallSaved,
    ev.AgentStarted,
    ev.AgentCompleted,
    ev.NodeStarted,
    ev.NodeFinished,
    Finished,
)
"""Events that do not move the debate on as a user counts it: nobody is woken for them."""
ENDINGS: dict[type[ev.Event], str] = {
    ev.DebateCompleted: "completed",
    ev.DebateSuspended: "waiting for answers",
    ev.DebateFailed: "failed",
    ev.DebateInterrupted: "interrupted",
    ev.DebatePaused: "paused",
}
"""How each way a run ends is told."""
DEFAULT_MAX_RUNNING = 20


@dataclass
class Job:
    """One debate run by this server: whether a run is going on, and where it stands."""

    debate_id: str
    running: bool = False
    total_rounds: int = 0
    round: int = 0
    phase: str | None = None
    phase_done: int = 0
    phase_expected: int = 0
    steps: int = 0
    """How many events moved the debate on in this process."""
    progress: float = 0.0
    """How far the run got, in rounds (the synthesis counts as one more): it only grows, up to :attr:`total`.
    A round's own share grows with each contribution by a part of what is left of it, sized by what its
    phase still expects, so it never reaches the next round early."""
    outcome: str | None = None
    """How the last run ended (``completed``, ``waiting for answers``…), once it has."""
    error: str | None = None
    """The last run's error, when it ended with one."""
    task: asyncio.Task[None] | None = None
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def apply(self, event: ev.Event) -> bool:
        """Take ``event`` in; whether it moved the debate on (and woke the waiters)."""
        if isinstance(event, QUIET):
            return False
        match event:
            case ev.DebateStarted(total_rounds=total):
                self.total_rounds, self.phase, self.outcome = total, None, None
            case ev.RoundBegan(round_number=number, total_rounds=total):
                self.round, self.total_rounds, self.phase = number, total, None
                self._reach(number - 1)
            case ev.PhaseStarted(round_number=number, phase=phase, expected=expected):
                self.round, self.phase, self.phase_done, self.phase_expected = number, phase, 0, expected
            case ev.ContributionAdded() | ev.SummaryAdded():
                self.phase_done += 1
                self._step_within_round()
            case ev.PhaseCompleted():
                self.phase_done = max(self.phase_done, self.phase_expected)
            case ev.SynthesisStarted():
                self.phase, self.phase_done, self.phase_expected = "synthesis", 0, 1
                self._reach(self.total_rounds)
            case ev.QuestionsPending():
                self.phase = "clarification"
            case _ if type(event) in ENDINGS:
                self.phase, self.phase_done, self.phase_expected = None, 0, 0
                self.outcome = ENDINGS[type(event)]
                if isinstance(event, ev.DebateCompleted):
                    self._reach(self.total)
        self.steps += 1
        self._wake()
        return True

    @property
    def total(self) -> int:
        """What :attr:`progress` counts up to: the rounds and the synthesis."""
        return self.total_rounds + 1

    def _reach(self, value: float) -> None:
        self.progress = max(self.progress, float(value))

    def _step_within_round(self) -> None:
        end = float(max(self.round, 1))  # the current round is over at this value
        left = max(self.phase_expected - self.phase_done, 0)
        self.progress += (end - self.progress) / (left + 2)

    def describe(self) -> str:
        """One line on where the run stands, e.g. ``round 1/2: critique 3/6``, or how it ended."""
        if self.outcome is not None:
            return self.outcome
        parts = []
        if self.round:
            parts.append(f"round {self.round}/{self.total_rounds}" if self.total_rounds else f"round {self.round}")
        if self.phase:
            counted = f" {self.phase_done}/{self.phase_expected}" if self.phase_expected else ""
            parts.append(f"{self.phase}{counted}")
        return ": ".join(parts) if parts else ("starting" if self.running else "not running")

    def changed(self) -> asyncio.Event:
        """Set at the next change (each change sets the current one and starts a new one)."""
        return self._changed

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def finish(self, error: str | None) -> None:
        """The run is over (``error``: what stopped it, when it was an error)."""
        self.running, self.task, self.error = False, None, error
        self.phase, self.phase_done, self.phase_expected = None, 0, 0
        self._wake()


class Jobs:
    """The debates this process runs, by id."""

    def __init__(self, max_running: int = DEFAULT_MAX_RUNNING) -> None:
        self.max_running = max_running
        self._jobs: dict[str, Job] = {}
        self.resumer: Callable[[str], AsyncIterator[ev.Event]] | None = None
        """A resumed run of a debate with nothing new: set by the server, so a human turn's deadline that
        passes lets the seat's fallback model play it."""
        self._deadlines: dict[str, asyncio.TimerHandle] = {}

    def get(self, debate_id: str) -> Job | None:
        return self._jobs.get(debate_id)

    def running(self) -> list[Job]:
        return [job for job in self._jobs.values() if job.running]

    async def start(self, events: EventStream) -> Job:
        """Start a new debate's run in the background; return once the debate exists (its first event).

        An error before the debate exists (the problem is empty, a provider has no key) is raised here."""
        self._check_room()
        return await self._launch(events, None)

    async def resume(self, debate_id: str, events: EventStream) -> Job:
        """Go on with ``debate_id`` in the background; return once the run has begun (or raise its error)."""
        job = self._jobs.setdefault(debate_id, Job(debate_id))
        if job.running:
            raise DebateBusyError(f"debate {debate_id} is already running")
        self._check_room()
        job.running, job.outcome, job.error = True, None, None  # before any await: a second call sees it running
        return await self._launch(events, job)

    async def cancel(self, debate_id: str) -> bool:
        """Cancel the run of ``debate_id``, and wait until it is saved as interrupted; whether one was running."""
        job = self._jobs.get(debate_id)
        task = job.task if job is not None else None
        if task is None or task.done():
            return False
        task.cancel()
        with suppress(asyncio.CancelledError):
            await asyncio.shield(task)  # the caller's own cancellation must not cut the saving short
        return True

    async def wait(self, job: Job, timeout_s: float, listener: Listener) -> bool:
        """Wait until ``job`` stops running, at most ``timeout_s`` seconds, calling ``listener`` at each change;
        whether it stopped."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while job.running:
            change = job.changed()
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            try:
                await asyncio.wait_for(change.wait(), remaining)
            except TimeoutError:
                return False
            await listener(job)
        return True

    def watch_deadlines(self, state: DebateState) -> None:
        """Resume ``state`` when the first deadline of the human turns it waits for passes (its fallback model
        then plays the turn); nothing for a debate that waits for none with a deadline."""
        previous = self._deadlines.pop(state.id, None)
        if previous is not None:
            previous.cancel()
        at = next_deadline(state) if state.status == "suspended" else None
        if at is None or self.resumer is None:
            return
        delay = max(0.0, (at - utc_now()).total_seconds())
        self._deadlines[state.id] = asyncio.get_running_loop().call_later(delay, self._deadline_passed, state.id)

    def _deadline_passed(self, debate_id: str) -> None:
        self._deadlines.pop(debate_id, None)
        job = self._jobs.get(debate_id)
        if self.resumer is None or (job is not None and job.running):
            return
        resumer = self.resumer
        task = asyncio.ensure_future(self.resume(debate_id, lambda: resumer(debate_id)))
        task.add_done_callback(_log_failure)

    async def close(self) -> None:
        """Cancel every run (each is saved as interrupted), for a server that stops."""
        for timer in self._deadlines.values():
            timer.cancel()
        self._deadlines.clear()
        for job in self.running():
            await self.cancel(job.debate_id)

    def _check_room(self) -> None:
        if len(self.running()) >= self.max_running:
            raise InvalidArgumentsError(
                f"this server already runs {self.max_running} debates; wait for one to end or cancel one"
            )

    async def _launch(self, events: EventStream, job: Job | None) -> Job:
        started: asyncio.Future[Job] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(self._run(events, job, started))
        if job is not None:
            job.task = task
        # shield: a caller that gives up waiting leaves the debate running
        return await asyncio.shield(started)

    async def _run(self, events: EventStream, job: Job | None, started: asyncio.Future[Job]) -> None:
        error: str | None = None
        rested: DebateState | None = None
        try:
            async for event in events():
                if job is None:
                    job = self._jobs.setdefault(event.debate_id, Job(event.debate_id))
                    job.running, job.task = True, asyncio.current_task()
                if not started.done():
                    started.set_result(job)
                job.apply(event)
                if isinstance(event, Finished):
                    rested = event.result.state
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not started.done():
                started.set_exception(exc)
            else:
                error = exc.message if isinstance(exc, DialecticError) else f"{type(exc).__name__}: {exc}"
                if not isinstance(exc, DialecticError):
                    log.exception("debate %s stopped on an unexpected error", job.debate_id if job else "?")
        finally:
            if job is not None:
                job.finish(error)
            if not started.done():
                started.set_exception(DialecticError("the debate stopped before it began"))
        if rested is not None:
            self.watch_deadlines(rested)


def _log_failure(task: asyncio.Future[Job]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("could not resume a debate for its fallback model: %s", task.exception())
