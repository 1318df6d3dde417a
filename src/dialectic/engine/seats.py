"""Human seats: participants played by a person (``provider: human``).

A human seat's calls go through the engine like any participant's (built, fitted, announced,
saved, reported); its provider (:class:`~dialectic.llm.human.HumanProvider`) hands each request
to the :class:`SeatDesk` the run installs around the call (:meth:`RunState.announce
<dialectic.engine.run_state.RunState.announce>`). The desk decides who writes the turn:

1. a text saved for the turn (:class:`~dialectic.core.changes.TurnAnswered`: sent with
   ``dialectic resume ID --turn-file FILE``, the web page's form, the ``submit_turn`` tool) is
   the reply, so a resumed debate never asks twice;
2. else, past the seat's ``deadline`` (counted from when the turn was first asked), the seat's
   ``fallback`` model plays the turn, as a call of its own in the ledger;
3. else the run's :class:`TurnChannel`, when it has one, asks the person now and waits for the
   text (at most until the deadline: then the fallback plays);
4. else (no channel, or no one answered it) the turn is saved as awaited
   (:class:`~dialectic.core.changes.TurnAwaited`, with the prompt the person is to be shown) and
   :class:`~dialectic.llm.human.HumanTurnWanted` is raised: the runner lets the calls in flight
   finish and suspends the debate, as it does for clarifying questions.

A turn is keyed by the seat, what it makes, its round and its target (:func:`turn_key`): the
same turn has the same key in every run of the debate. A human seat asks no clarifying
questions and makes no summaries; the prompt it is shown is the one its model would get.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Protocol, TypeVar

from dialectic.agents.participants import Speaker
from dialectic.core import events as ev
from dialectic.core.changes import Change, TurnAnswered, TurnAwaited
from dialectic.core.domain import DebateState, HumanTurn, PlayedBy, TurnMessage, Usage, utc_now
from dialectic.core.errors import DebateStateError, InvalidArgumentsError, ProviderError, RetriesExhausted
from dialectic.core.files import KB, describe_size
from dialectic.engine.calls import CallInfo
from dialectic.llm.base import FINISH_STOP, Completion, CompletionRequest
from dialectic.llm.human import HumanTurnWanted

T = TypeVar("T")

MAX_TURN_BYTES = 256 * KB
"""The most a human turn may hold, as UTF-8: the same for a ``--turn-file``, the web form and the ``submit_turn``
tool (:func:`check_turn_text`)."""


def check_turn_text(text: str) -> None:
    """The rules every human turn is held to, however it is sent: text (no NUL byte, no lone surrogate), not
    blank, and at most :data:`MAX_TURN_BYTES`; an :class:`InvalidArgumentsError` (one line) otherwise."""
    if not text.strip():
        raise InvalidArgumentsError("the turn's text is empty: write what the seat says")
    if "\x00" in text:
        raise InvalidArgumentsError("the turn's text holds a NUL byte: a turn is text")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidArgumentsError("the turn's text is not valid Unicode (it holds a lone surrogate)") from None
    if size > MAX_TURN_BYTES:
        raise InvalidArgumentsError(
            f"the turn's text is {size:,} bytes, more than the limit of {describe_size(MAX_TURN_BYTES)}"
        )


class TurnChannel(Protocol):
    """How whoever runs a debate reaches the person in a human seat while the debate runs.

    ``take_turn`` shows ``turn`` (its :attr:`~dialectic.core.domain.HumanTurn.prompt`, what the
    participant would see) and returns what the person wrote; ``None`` (or blank text) when no one
    is there to write it: the debate then suspends until the text is sent. The engine cancels the
    call when the seat's deadline passes.
    """

    async def take_turn(self, turn: HumanTurn) -> str | None: ...


class Seating(Protocol):
    """What a desk needs of the run (:class:`~dialectic.engine.run_state.RunState` has it)."""

    @property
    def state(self) -> DebateState: ...

    @property
    def turns(self) -> TurnChannel | None: ...

    @property
    def fallbacks(self) -> dict[str, Speaker]:
        """Human seat id → the fallback model's participant in its place."""
        ...

    def record(self, *changes: Change) -> None: ...

    def emit(self, event: ev.Event) -> None: ...

    def warn(self, message: str) -> None: ...

    def waiting_for_people(self) -> AbstractContextManager[None]: ...

    async def announce(
        self,
        speaker: Speaker,
        activity: str,
        call: Awaitable[T],
        *,
        round_number: int | None = None,
        kind: str | None = None,
        target_id: str | None = None,
    ) -> T: ...


def turn_key(agent_id: str, kind: str | None, round_number: int | None, target_id: str | None = None) -> str:
    """``seat:kind[:round][:target]``, e.g. ``agent-alice:critique:1:agent-kiss``."""
    parts = [agent_id, kind or "turn"]
    if round_number is not None:
        parts.append(str(round_number))
    if target_id:
        parts.append(target_id)
    return ":".join(parts)


def turn_texts(state: DebateState, texts: Sequence[tuple[str | None, str]]) -> dict[str, str]:
    """Turn key → text for ``texts`` sent to a suspended debate, each ``(wanted, text)``.

    ``wanted`` is a turn's key, or the id of a seat with one turn waiting; ``None`` takes the next
    turn waiting, in the order they were asked, once the turns named have theirs. A debate that waits
    for no human turn is a
    :class:`~dialectic.core.errors.DebateStateError`; a key it does not wait for, a text that breaks
    :func:`check_turn_text`'s rules or more texts than turns an
    :class:`~dialectic.core.errors.InvalidArgumentsError`, each one line.
    """
    pending = state.pending_turns()
    if not pending:
        if state.status == "completed":
            raise DebateStateError(f"debate {state.id} is already completed; it waits for no human turn")
        raise DebateStateError(f"debate {state.id} is not waiting for a human turn (status {state.status})")
    waiting = ", ".join(turn.key for turn in pending)
    for _, text in texts:
        check_turn_text(text)
    chosen: dict[str, str] = {}
    for wanted, text in texts:  # the texts for a turn named first, then the others in the order asked
        if wanted is None:
            continue
        matches = [turn for turn in pending if turn.key == wanted] or [
            turn for turn in pending if turn.agent_id == wanted
        ]
        if len(matches) != 1:
            why = "has several turns waiting" if matches else "is not a human turn it waits for"
            raise InvalidArgumentsError(f"debate {state.id}: '{wanted}' {why} (waiting: {waiting})")
        if matches[0].key in chosen:
            raise InvalidArgumentsError(f"debate {state.id}: two texts for the turn {matches[0].key}")
        chosen[matches[0].key] = text.strip()
    for wanted, text in texts:
        if wanted is not None:
            continue
        free = [turn for turn in pending if turn.key not in chosen]
        if not free:
            raise InvalidArgumentsError(
                f"{len(texts)} texts for the {len(pending)} human turn(s) debate {state.id} waits for ({waiting})"
            )
        chosen[free[0].key] = text.strip()
    return chosen


def next_deadline(state: DebateState) -> datetime | None:
    """When the first deadline of the human turns ``state`` waits for passes (``None``: none has one).

    A server that holds a suspended debate resumes it then, so that the fallback model plays the turn."""
    moments = [at for turn in state.pending_turns() if (at := turn.deadline_at()) is not None]
    return min(moments) if moments else None


def deadline_passed(turn: HumanTurn) -> bool:
    """Whether the seat's deadline for ``turn`` has passed (never, for a seat without one)."""
    at = turn.deadline_at()
    return at is not None and utc_now() >= at


class SeatDesk:
    """Where one call of a human seat is played (see the module's docstring)."""

    def __init__(self, host: Seating, seat: Speaker, info: CallInfo) -> None:
        self._host = host
        self._seat = seat
        self._info = info
        self.key = turn_key(info.agent_id, info.kind, info.round_number, info.target_id)

    async def play(self, request: CompletionRequest) -> Completion:
        host = self._host
        saved = host.state.find_turn(self.key)
        if saved is not None and saved.text is not None:
            return self._written(request, saved.text, saved.played_by)
        if saved is not None and deadline_passed(saved):
            return await self._fallback(request, saved)
        turn = saved or self._turn(request)
        channel = host.turns
        if channel is not None:
            started = time.monotonic()
            wait = _seconds_left(turn)
            try:
                with host.waiting_for_people():
                    text = await asyncio.wait_for(channel.take_turn(turn), wait)
            except TimeoutError:
                return await self._fallback(request, saved)
            if text is not None and text.strip():
                if saved is not None:
                    host.record(TurnAnswered(key=self.key, text=text.strip(), played_by="person"))
                return self._written(request, text, "person", round((time.monotonic() - started) * 1000))
        if saved is None:
            host.record(TurnAwaited(turn=turn))
        host.emit(ev.TurnPending(host.state.id, turn))
        raise HumanTurnWanted(self.key)

    def _turn(self, request: CompletionRequest) -> HumanTurn:
        info = self._info
        return HumanTurn(
            key=self.key,
            agent_id=info.agent_id,
            agent_name=info.agent_name,
            activity=info.activity,
            kind=info.kind,
            round_number=info.round_number,
            target_agent_id=info.target_id,
            messages=[TurnMessage(role=m.role, content=m.content) for m in request.messages],
            deadline_ms=self._seat.config.deadline,
        )

    def _written(
        self, request: CompletionRequest, text: str, played_by: PlayedBy | None, latency_ms: int = 0
    ) -> Completion:
        """A saved or typed text as the seat's reply: the person's (the seat's model), or the fallback's."""
        model = request.model
        if played_by == "fallback":
            fallback = self._host.fallbacks.get(self._seat.id)
            model = fallback.config.model if fallback is not None else model
        return Completion(
            text=text.strip(), model=model, usage=Usage(), latency_ms=latency_ms, finish_reason=FINISH_STOP
        )

    async def _fallback(self, request: CompletionRequest, saved: HumanTurn | None) -> Completion:
        """The seat's fallback model plays the turn (its call announced, and in the ledger, as its own)."""
        host, info = self._host, self._info
        fallback = host.fallbacks.get(self._seat.id)
        if fallback is None:  # a deadline always comes with a fallback (checked with the configuration)
            raise HumanTurnWanted(self.key)
        config = fallback.config
        host.warn(
            f"{info.agent_name}'s deadline passed: {config.provider}/{config.model} plays the turn ({info.activity})"
        )
        asked = request.with_changes(
            model=config.model,
            temperature=config.temperature,
            max_tokens=config.max_tokens or request.max_tokens,
            timeout_s=config.timeout / 1000 if config.timeout else request.timeout_s,
        )
        try:
            completion = await host.announce(
                fallback,
                info.activity,
                fallback.client.complete(asked),
                round_number=info.round_number,
                kind=info.kind,
                target_id=info.target_id,
            )
        except ProviderError as exc:
            # Retried already by its own client: the seat's call must not retry it (nor wait out the deadline again).
            if exc.retryable:
                raise RetriesExhausted(exc, 1) from exc
            raise
        if saved is not None:
            host.record(TurnAnswered(key=self.key, text=completion.text, played_by="fallback"))
        return completion


def _seconds_left(turn: HumanTurn) -> float | None:
    at = turn.deadline_at()
    if at is None:
        return None
    return max(0.0, (at - utc_now()).total_seconds())


def played_by(seat: Speaker, completion: Completion) -> PlayedBy | None:
    """Who wrote a contribution of ``seat``: ``None`` for a seat a model plays."""
    if not seat.config.is_human:
        return None
    return "person" if completion.model == seat.config.model else "fallback"


class PeopleWaited:
    """Counts the turns a run waits on a person for: the round's watchdog does not count that time as a stall."""

    def __init__(self) -> None:
        self.count = 0

    @contextmanager
    def waiting(self) -> Iterator[None]:
        self.count += 1
        try:
            yield
        finally:
            self.count -= 1
