"""The debate's task table and its gating (:mod:`dialectic.engine.work`): which work exists, whether its round happens.

It owns one task per :class:`~dialectic.engine.work_keys.WorkKey`, created on demand, and runs each
body it is given for a key (the bodies are :mod:`dialectic.engine.work_steps`); the first failure
of any task, which fails the whole debate; the gate of each round, which says whether the round
happens (at once, or once the judge's evaluation of the round before decides); and the work thrown
away for rounds that do not happen, or that are started again, with what it cost.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

from dialectic.core import events as ev
from dialectic.core.changes import WorkDiscarded
from dialectic.core.config import DebateSettings
from dialectic.core.domain import DiscardedWork, RoundAssessment
from dialectic.engine.assessment import assessed, decide
from dialectic.engine.dropping import active_agents
from dialectic.engine.run_state import RunState
from dialectic.engine.watchdog import wait_while_progressing
from dialectic.engine.work_keys import WorkKey, round_keys
from dialectic.llm.base import Completion

T = TypeVar("T")
Body = Callable[[WorkKey], Coroutine[Any, Any, Any]]
"""The work a key names, as a coroutine (made inside its task). Its result depends on the key's kind (a
contribution, a summary, the round's decision, or ``None`` for work skipped): ``Any`` here, read as its
kind by the caller that asked for that key."""


def _released(key: WorkKey) -> Coroutine[Any, Any, Any]:
    raise RuntimeError(f"the debate's run has ended: {key} cannot start")


class Discarded(Exception):
    """Work for a round that will not happen: its result is thrown away, never saved."""


class WorkTable:
    """Every task of the debate by its key, each round's gate, and the work discarded."""

    def __init__(self, ctx: RunState, body: Body, *, clock: Callable[[], float] | None = None) -> None:
        self.ctx = ctx
        self._body = body
        loop = asyncio.get_running_loop()
        self._clock = clock or loop.time
        self._tasks: dict[WorkKey, asyncio.Task[Any]] = {}
        self._gates: dict[int, asyncio.Future[bool]] = {}
        self._fatal: asyncio.Future[None] = loop.create_future()
        self._in_call: set[WorkKey] = set()
        self._discarded: dict[int, DiscardedWork] = {}
        self.last_progress = self._clock()

    def release(self) -> None:
        """Drop the tasks, the gates and the body once every task is done (see :meth:`DebateWork.release`).

        A task still pending (a run that crashed out, leaving its work behind) keeps the table as it is: it
        may yet start its body, and it holds the table alive until it ends anyway."""
        if any(not task.done() for task in self._tasks.values()):
            return
        self._tasks.clear()
        self._gates.clear()
        self._body = _released

    @property
    def settings(self) -> DebateSettings:
        return self.ctx.roster.settings

    # -- the tasks ------------------------------------------------------------------------------

    def task(self, key: WorkKey) -> asyncio.Task[Any]:
        existing = self._tasks.get(key)
        if existing is not None:
            return existing
        task = asyncio.ensure_future(self._guarded(key))
        self._tasks[key] = task
        return task

    def start_rounds(self, first: int) -> None:
        """Create the tasks of round ``first`` and every later round: each waits for its inputs."""
        for number in range(first, self.settings.rounds + 1):
            for key in round_keys(active_agents(self.ctx), number):
                self.task(key)
            if self.evaluates(number):
                self.task(WorkKey("evaluation", number))

    async def _guarded(self, key: WorkKey) -> Any:
        """Run one task: a discarded result is ``None``; any other failure fails the whole debate.

        The body coroutine is made here, inside the task, so a task cancelled before it ran
        leaves no coroutine behind.
        """
        try:
            return await self._body(key)
        except Discarded:
            return None
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            if not self._fatal.done():
                self._fatal.set_exception(exc)
            raise
        finally:
            self.last_progress = self._clock()

    def _raise_fatal(self) -> None:
        if self._fatal.done():
            error = self._fatal.exception()
            if error is not None:
                raise error

    async def wait(self, keys: Sequence[WorkKey]) -> list[Any]:
        """The results of ``keys`` (``None`` for work that was skipped).

        Raises the first fatal failure of any task of the debate, and ``DebateTimeoutError``
        when no work at all has finished for ``timeoutPerRound`` — a slow model that keeps
        producing is never cut off, a stalled one is.
        """
        tasks = [self.task(k) for k in keys]
        await wait_while_progressing(
            tasks,
            last_progress=lambda: self.ctx.stalled_since(self.last_progress, self._clock),
            clock=self._clock,
            limit_ms=self.settings.timeout_per_round,
            round_number=self.ctx.state.current_round,
            fatal=self._fatal,
        )
        self._raise_fatal()
        return [None if t.cancelled() else t.result() for t in tasks]

    async def input(self, key: WorkKey) -> Any:
        """Another task's result; ``None`` when that work was skipped or cancelled (a dropped agent)."""
        task = self.task(key)
        await asyncio.wait({task})
        return None if task.cancelled() else task.result()

    async def call(self, key: WorkKey, speaker: Any, activity: str, call: Awaitable[T]) -> T:
        """One LLM call, announced, and known to be in flight while it runs."""
        self._in_call.add(key)
        try:
            return await self.ctx.announce(
                speaker, activity, call, round_number=key.round, kind=key.kind, target_id=key.target
            )
        finally:
            self._in_call.discard(key)

    def cancel_work_of(self, agent_id: str, *, but: WorkKey) -> None:
        """Cancel the pending work ``agent_id`` authors or is the target of, all but ``but`` (the caller's)."""
        for other_key, task in self._tasks.items():
            if other_key != but and other_key.involves(agent_id) and not task.done():
                task.cancel()

    async def cancel(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._fatal.done() and not self._fatal.cancelled():
            self._fatal.exception()  # retrieved: it has been (or is being) reported by a waiter
        self._tasks.clear()

    # -- work thrown away ---------------------------------------------------------------------

    async def discard_beyond(self, number: int) -> None:
        """Cancel the work of rounds after ``number`` and record what it cost."""
        doomed = [t for k, t in self._tasks.items() if k.round > number and not t.done()]
        for key in self._in_call:
            if key.round > number:
                self._discard_entry(key.round).cancelled_calls += 1
        for task in doomed:
            task.cancel()
        await asyncio.gather(*doomed, return_exceptions=True)
        self._record_discarded()

    async def restart_beyond(self, number: int) -> None:
        """Start the unsaved work of rounds after ``number`` again (what ran already is recorded as discarded).

        The consensus guard spoke after round ``number``: work of the next round that started ahead never
        saw its objection. Call once that round's gate is open (nothing awaits the gate any more).
        """
        doomed = {k: t for k, t in self._tasks.items() if k.round > number and not t.done()}
        for key in self._in_call:
            if key in doomed:
                self._discard_entry(key.round).cancelled_calls += 1
        for task in doomed.values():
            task.cancel()
        await asyncio.gather(*doomed.values(), return_exceptions=True)
        for key, task in doomed.items():
            if self._tasks.get(key) is task:
                del self._tasks[key]
        self._record_discarded()
        self.start_rounds(number + 1)

    def _record_discarded(self) -> None:
        for round_number in sorted(self._discarded):
            entry = self._discarded.pop(round_number)
            if entry.calls or entry.cancelled_calls:
                self.ctx.record(WorkDiscarded(discarded=entry))
                self.ctx.emit(ev.WorkAbandoned(self.ctx.debate_id, entry))

    def _discard_entry(self, number: int) -> DiscardedWork:
        return self._discarded.setdefault(number, DiscardedWork(round_number=number))

    def _count_discarded(self, number: int, completion: Completion | None) -> None:
        if completion is not None:
            entry = self._discard_entry(number)
            entry.calls += 1
            entry.input_tokens += completion.usage.input_tokens
            entry.output_tokens += completion.usage.output_tokens

    # -- rounds that may not happen -------------------------------------------------------------

    def evaluates(self, number: int) -> bool:
        """Whether round ``number`` is assessed (by the judge, the detectors or both)."""
        return assessed(self.settings)

    def decides(self, number: int) -> bool:
        """Whether round ``number``'s assessment may end the debate, or the consensus guard may speak after it
        (``consensusGuard: on``), so the next round waits for it."""
        decisive = self.settings.termination().type != "fixed" or self.settings.consensus_guard == "on"
        return decisive and number < self.settings.rounds

    def gate(self, number: int) -> asyncio.Future[bool]:
        """Resolves to whether round ``number`` happens (known at once unless an evaluation decides)."""
        gate = self._gates.get(number)
        if gate is None:
            gate = asyncio.get_running_loop().create_future()
            self._gates[number] = gate
            previous = self.ctx.state.find_round(number - 1)
            if number <= 1 or not self.decides(number - 1):
                gate.set_result(number <= self.settings.rounds)
            elif previous is not None and previous.guard is not None:
                gate.set_result(True)  # the consensus guard spoke after it: the debate goes on
            elif self.ctx.state.find_round(number) is not None:
                gate.set_result(True)  # work of that round was saved: it was decided before a crash
            elif previous is not None and previous.assessment is not None:
                if self.settings.consensus_guard == "off" or not self._stops(previous.assessment):
                    gate.set_result(not self._stops(previous.assessment))
                # else the guard may still speak (a crash came between the assessment and its turn): the
                # evaluation, run again, decides
        return gate

    def _stops(self, assessment: RoundAssessment) -> bool:
        stop, _ = decide(self.settings.termination(), assessment, format_name=self.settings.format, may_stop=True)
        return stop

    async def save_or_discard(self, number: int, completion: Completion | None) -> None:
        """Wait until round ``number`` is decided; throw the work away if the round will not happen.

        Work cancelled while it waits (started again after the consensus guard spoke, see
        :meth:`restart_beyond`) is thrown away too, and its call counted as discarded.
        """
        try:
            happens = await self.gate(number)
        except asyncio.CancelledError:
            self._count_discarded(number, completion)
            raise
        if happens:
            return
        self._count_discarded(number, completion)
        raise Discarded()

    def save_when_decided(self, number: int, save: Callable[[], object]) -> None:
        """Save now if round ``number`` is sure to happen; else when the judge decides it does (or never)."""
        gate = self.gate(number)
        if gate.done():
            if not gate.result():
                raise Discarded()
            save()
            return

        def on_decided(decided: asyncio.Future[bool]) -> None:
            if decided.cancelled() or not decided.result():
                return
            try:
                save()
            except Exception as exc:  # a store failure here must still fail the debate
                if not self._fatal.done():
                    self._fatal.set_exception(exc)

        gate.add_done_callback(on_decided)
