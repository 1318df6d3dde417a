"""Running the engine for one CLI command.

One event loop serves the whole command (the provider clients belong to it), the progress
display runs while the engine does, and between engine calls the clarifying questions of a
suspended debate are answered and the debate resumed, until it completes or cannot be
answered here. Ctrl-C, SIGTERM and SIGHUP cancel the engine's task (the engine saves the
debate as interrupted) and surface as :class:`~dialectic.cli.interruptions.InterruptedRun`,
whose message is the one notice the user gets about it (:meth:`DebateSession.announce_saved`
stays silent then).
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from dialectic.cli.answers import Answerer, describe_pending, ran_out_warning
from dialectic.cli.console import Terminal
from dialectic.cli.interruptions import EXIT_INTERRUPTED, InterruptedRun, Terminated, exit_code_for, signal_name
from dialectic.cli.progress import ProgressReporter
from dialectic.cli.signals import StopSignals
from dialectic.cli.turns import TurnWriter, describe_pending_turns
from dialectic.cli.verbose import VerboseSetup
from dialectic.core import events as ev
from dialectic.core.domain import DebateState
from dialectic.core.errors import DebateBusyError, LeaseLostError
from dialectic.core.events import EventBus
from dialectic.core.receipts import ReceiptSigner
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.engine.api import BudgetChange
from dialectic.llm.registry import ProviderPool
from dialectic.store import DebateStore
from dialectic.tracing.settings import TraceSettings

if TYPE_CHECKING:
    from dialectic.tracing.otel import DebateTracer

EngineCall = Callable[[], Coroutine[Any, Any, DebateState]]
Replies = tuple[dict[str, str] | None, dict[str, str] | None]
"""Answers to clarifying questions, and texts of human turns, for a suspended debate."""

_STATUS_OF_EVENT: dict[type[ev.Event], str] = {
    ev.DebateStarted: "running",
    ev.DebateCompleted: "completed",
    ev.DebateSuspended: "suspended",
    ev.DebatePaused: "paused",
    ev.DebateInterrupted: "interrupted",
    ev.DebateFailed: "failed",
}


def resume_command(debate_id: str, store_flag: str | None) -> str:
    command = f"dialectic resume {debate_id}"
    return f"{command} --store {shlex.quote(store_flag)}" if store_flag else command


class DebateSession:
    """The engine, its providers and the stderr subscribers for one command."""

    def __init__(
        self,
        store: DebateStore,
        term: Terminal,
        *,
        answerer: Answerer,
        verbose: bool,
        store_flag: str | None,
        tracing: TraceSettings | None = None,
        turns: TurnWriter | None = None,
        signer: ReceiptSigner | None = None,
    ) -> None:
        self.store = store
        self.term = term
        self.debate_id: str | None = None
        self.status: str | None = None
        self._answerer = answerer
        self._turns = turns or TurnWriter(term)
        self._store_flag = store_flag
        self._signals = StopSignals()
        self._interrupted = False
        self._providers = ProviderPool()
        self._progress = ProgressReporter(term)
        bus = EventBus()
        bus.subscribe(self._progress)
        bus.subscribe(self._track)
        if verbose:
            bus.subscribe(VerboseSetup(term, store))
        self._tracer: DebateTracer | None = None
        if tracing is not None:
            from dialectic.tracing.otel import DebateTracer  # only a traced run loads OpenTelemetry

            self._tracer = DebateTracer.from_settings(tracing)
            bus.subscribe(self._tracer)
        watchers = [self._tracer] if self._tracer is not None else []
        self._engine = DebateEngine(store, self._providers, bus, watchers=watchers, signer=signer)

    def start(self, request: DebateRequest) -> DebateState:
        with self._stoppable():
            return self._run(lambda: self._engine.start(request))

    def resume(
        self, state: DebateState, *, budget: BudgetChange | None = None, windows: dict[str, int] | None = None
    ) -> DebateState:
        """Continue a stored debate (with a new ``budget``, new context ``windows``); a suspended one only
        once its questions are answered."""
        self.debate_id, self.status = state.id, state.status
        self._progress.preload(state)
        with self._stoppable():
            answers: dict[str, str] | None = None
            turns: dict[str, str] | None = None
            if state.status == "suspended":
                replies = self._replies_for(state, already_sent=set())
                if replies is None:
                    return state
                answers, turns = replies
            return self._run(
                lambda: self._engine.resume(state.id, answers, budget=budget, windows=windows, turns=turns)
            )

    def resume_hint(self) -> str:
        return resume_command(self.debate_id or "ID", self._store_flag)

    def announce_saved(self) -> None:
        """The closing notice, for every debate that was created, however the run ended."""
        if self.debate_id is None or self._interrupted:
            return
        line = f"Debate {self.debate_id} saved to {self.store.location}"
        if self.status in ("failed", "interrupted"):
            line += f" ({self.status}; continue it with: {self.resume_hint()})"
        self.term.line(line)

    def _track(self, event: ev.Event) -> None:
        if isinstance(event, ev.DebateStarted):
            self.debate_id = event.debate_id
        status = _STATUS_OF_EVENT.get(type(event))
        if status is not None:
            self.status = status

    @contextmanager
    def _stoppable(self) -> Iterator[None]:
        """Turn Ctrl-C, SIGTERM and SIGHUP, wherever they arrive, into one :class:`InterruptedRun`."""
        with self._signals.installed():
            try:
                yield
            except KeyboardInterrupt:
                raise self._interruption("interrupted", EXIT_INTERRUPTED) from None
            except Terminated as stop:
                raise self._terminated(stop.signum) from None
            except asyncio.CancelledError:
                received = self._signals.received
                if received is None:
                    raise
                raise self._terminated(received) from None

    def _run(self, first: EngineCall) -> DebateState:
        with asyncio.Runner() as runner:
            try:
                state = self._advance(runner, first)
                sent: set[str] = set()
                while state.status == "suspended":
                    replies = self._replies_for(state, already_sent=sent)
                    if replies is None:
                        break
                    state = self._advance(runner, self._resumer(state.id, *replies))
                return state
            except DebateBusyError as exc:
                if not isinstance(exc, LeaseLostError):
                    self.debate_id = None  # refused: another process runs it, so this command saved nothing
                raise
            finally:
                self._close_providers(runner)
                if self._tracer is not None:
                    self._tracer.shutdown()  # every span sent before the command leaves

    def _resumer(self, debate_id: str, answers: dict[str, str] | None, turns: dict[str, str] | None) -> EngineCall:
        return lambda: self._engine.resume(debate_id, answers, turns=turns)

    def _advance(self, runner: asyncio.Runner, call: EngineCall) -> DebateState:
        kept: list[DebateState] = []

        async def advance() -> None:
            # The state comes back through ``kept``, not as the task's result: after each run
            # asyncio.Runner looks up and restores the SIGINT handler, a partial holding the finished
            # task, and ``signal`` turns each such lookup into a failed enum lookup whose message
            # repr()s the task with its result: the whole debate, twice, at a cost that grows with it.
            kept.append(await self._signals.run_cancellable(call))

        with self._progress.running():
            runner.run(advance())
        (state,) = kept
        self.debate_id, self.status = state.id, state.status
        received = self._signals.received
        if received is not None and state.status != "completed":
            raise Terminated(received)  # it came as the engine finished a step: stop before asking for more
        return state

    def _replies_for(self, state: DebateState, *, already_sent: set[str]) -> Replies | None:
        """What a suspended debate waits for, gathered here (``already_sent`` grows with it), or ``None``
        after telling the user how to continue."""
        if state.pending_questions() or not state.pending_turns():
            answers = self._answers_for(state, already_sent=already_sent)
            if answers is None:
                return None
            already_sent |= answers.keys()
            return answers, None
        collected = self._turns.collect(state)
        fresh = (collected.texts.keys() | {turn.key for turn in collected.passed}) - already_sent
        if not fresh:
            for line in describe_pending_turns(state, self.resume_hint()):
                self.term.line(line)
            return None
        already_sent |= fresh
        return None, collected.texts

    def _answers_for(self, state: DebateState, *, already_sent: set[str]) -> dict[str, str] | None:
        """Answers to every pending question, or ``None`` after telling the user how to continue.

        ``already_sent`` guards against asking the same question twice in one run.
        """
        pending = state.pending_questions()
        if not pending:
            self.term.line(f"Debate {state.id} is suspended; continue it with: {self.resume_hint()}")
            return None
        collected = self._answerer.collect(state)
        warning = ran_out_warning(collected.defaulted)
        if warning:
            self.term.warning(warning[0])
            for line in warning[1:]:
                self.term.line(line, style="yellow")
        if collected.unanswered or already_sent & collected.answers.keys():
            for line in describe_pending(state, collected, self.resume_hint()):
                self.term.line(line)
            return None
        return collected.answers

    def _terminated(self, signum: int) -> InterruptedRun:
        return self._interruption(f"terminated by {signal_name(signum)}", exit_code_for(signum))

    def _interruption(self, what: str, exit_code: int) -> InterruptedRun:
        """The one notice about a stopped run (``announce_saved`` stays silent after it)."""
        self._interrupted = True
        if self.debate_id is None:
            return InterruptedRun(f"{what} before the debate was created; nothing was saved", exit_code)
        if self.status == "suspended":
            message = f"{what}; debate {self.debate_id} still waits for answers or a turn: {self.resume_hint()}"
        else:
            status = self.status or "interrupted"
            message = f"{what}; debate {self.debate_id} was saved as {status}; resume it with: {self.resume_hint()}"
        return InterruptedRun(message, exit_code)

    def _close_providers(self, runner: asyncio.Runner) -> None:
        try:
            runner.run(self._providers.aclose())
        except Exception:  # closing HTTP clients at exit; a failure there changes nothing for the user
            return
