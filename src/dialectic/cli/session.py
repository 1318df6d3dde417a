"""Running the engine for one CLI command.

One event loop serves the whole command (the provider clients belong to it), the progress
display runs while the engine does, and between engine calls the clarifying questions of a
suspended debate are answered and the debate resumed, until it completes or cannot be
answered here. Ctrl-C cancels the engine's task (the engine saves the debate as
interrupted) and surfaces as :class:`InterruptedRun`.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Callable, Coroutine
from typing import Any

from dialectic import events as ev
from dialectic.cli.answers import Answerer, describe_pending
from dialectic.cli.console import Terminal
from dialectic.cli.progress import ProgressReporter
from dialectic.cli.verbose import VerboseSetup
from dialectic.domain import DebateState
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.errors import DebateBusyError, LeaseLostError
from dialectic.events import EventBus
from dialectic.llm.registry import ProviderPool
from dialectic.store import DebateStore

EngineCall = Callable[[], Coroutine[Any, Any, DebateState]]

_STATUS_OF_EVENT: dict[type[ev.Event], str] = {
    ev.DebateStarted: "running",
    ev.DebateCompleted: "completed",
    ev.DebateSuspended: "suspended",
    ev.DebateInterrupted: "interrupted",
    ev.DebateFailed: "failed",
}


class InterruptedRun(Exception):
    """Ctrl-C stopped the command; the message says what was saved and how to continue."""


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
    ) -> None:
        self.store = store
        self.term = term
        self.debate_id: str | None = None
        self.status: str | None = None
        self._answerer = answerer
        self._store_flag = store_flag
        self._providers = ProviderPool()
        self._progress = ProgressReporter(term)
        bus = EventBus()
        bus.subscribe(self._progress)
        bus.subscribe(self._track)
        if verbose:
            bus.subscribe(VerboseSetup(term, store))
        self._engine = DebateEngine(store, self._providers, bus)

    def start(self, request: DebateRequest) -> DebateState:
        return self._run(lambda: self._engine.start(request))

    def resume(self, state: DebateState) -> DebateState:
        """Continue a stored debate; a suspended one only once its questions are answered here."""
        self.debate_id, self.status = state.id, state.status
        answers: dict[str, str] | None = None
        if state.status == "suspended":
            answers = self._answers_for(state, already_sent=set())
            if answers is None:
                return state
        return self._run(lambda: self._engine.resume(state.id, answers))

    def resume_hint(self) -> str:
        return resume_command(self.debate_id or "ID", self._store_flag)

    def announce_saved(self) -> None:
        """The closing notice, for every debate that was created, however the run ended."""
        if self.debate_id is None:
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

    def _run(self, first: EngineCall) -> DebateState:
        with asyncio.Runner() as runner:
            try:
                state = self._advance(runner, first)
                sent: set[str] = set()
                while state.status == "suspended":
                    answers = self._answers_for(state, already_sent=sent)
                    if answers is None:
                        break
                    sent |= answers.keys()
                    state = self._advance(runner, self._resumer(state.id, answers))
                return state
            except KeyboardInterrupt:
                raise InterruptedRun(self._interrupted_message()) from None
            except DebateBusyError as exc:
                if not isinstance(exc, LeaseLostError):
                    self.debate_id = None  # refused: another process runs it, so this command saved nothing
                raise
            finally:
                self._close_providers(runner)

    def _resumer(self, debate_id: str, answers: dict[str, str]) -> EngineCall:
        return lambda: self._engine.resume(debate_id, answers)

    def _advance(self, runner: asyncio.Runner, call: EngineCall) -> DebateState:
        with self._progress.running():
            state = runner.run(call())
        self.debate_id, self.status = state.id, state.status
        return state

    def _answers_for(self, state: DebateState, *, already_sent: set[str]) -> dict[str, str] | None:
        """Answers to every pending question, or ``None`` after telling the user how to continue.

        ``already_sent`` guards against asking the same question twice in one run.
        """
        pending = state.pending_questions()
        if not pending:
            self.term.line(f"Debate {state.id} is suspended; continue it with: {self.resume_hint()}")
            return None
        collected = self._answerer.collect(state)
        if collected.unanswered or already_sent & collected.answers.keys():
            for line in describe_pending(state, collected, self.resume_hint()):
                self.term.line(line)
            return None
        return collected.answers

    def _interrupted_message(self) -> str:
        if self.debate_id is None:
            return "interrupted before the debate was created; nothing was saved"
        if self.status == "suspended":
            return f"interrupted; debate {self.debate_id} still waits for answers: {self.resume_hint()}"
        return f"interrupted; debate {self.debate_id} was saved as interrupted; resume it with: {self.resume_hint()}"

    def _close_providers(self, runner: asyncio.Runner) -> None:
        try:
            runner.run(self._providers.aclose())
        except Exception:  # closing HTTP clients at exit; a failure there changes nothing for the user
            return
