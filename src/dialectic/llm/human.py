"""The ``human`` provider: a seat of the debate played by a person.

To the engine a human seat is a participant like any other: its calls are built, fitted,
announced, saved and reported the same way. Only the provider differs: instead of sending the
request to a model, it hands it to the *desk* of the call, which whoever runs the call installs
with :func:`seated` (the engine, see :mod:`dialectic.engine.seats`). The desk shows the person
the request (the prompt the participant would have been sent) and returns what they wrote, or
raises :class:`HumanTurnWanted` when no one is there to write it, which the engine turns into a
suspended debate. This package knows nothing of debates, people or terminals.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

from dialectic.core.config import HUMAN_PROVIDER
from dialectic.core.errors import BadRequest
from dialectic.llm.base import Completion, CompletionRequest, Delta


class HumanTurnWanted(Exception):
    """No one could write a human seat's turn now (not a failure: the engine suspends the debate).

    ``key`` names the turn (see :class:`~dialectic.core.domain.HumanTurn`)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"human turn {key} is waiting for its text")
        self.key = key


class TurnDesk(Protocol):
    """Where one call of a human seat is played: the person's reply to ``request``."""

    async def play(self, request: CompletionRequest) -> Completion: ...


_desk: ContextVar[TurnDesk | None] = ContextVar("dialectic_turn_desk", default=None)


@contextmanager
def seated(desk: TurnDesk) -> Iterator[None]:
    """Calls to the ``human`` provider made inside this block (and in tasks it starts) are played at ``desk``."""
    token = _desk.set(desk)
    try:
        yield
    finally:
        _desk.reset(token)


class HumanProvider:
    """The provider of ``provider: human`` seats: each request goes to the desk of the call under way."""

    name = HUMAN_PROVIDER
    supports_tools = False

    async def complete(self, request: CompletionRequest) -> Completion:
        desk = _desk.get()
        if desk is None:
            raise BadRequest(
                "a seat played by a person (provider human) can only take its turns in a debate", provider=self.name
            )
        return await desk.play(request)

    async def stream(self, request: CompletionRequest) -> AsyncIterator[Delta]:
        """The whole turn as one piece (a person's text arrives at once)."""
        completion = await self.complete(request)
        yield Delta(
            text=completion.text,
            finish_reason=completion.finish_reason,
            usage=completion.usage,
            model=completion.model,
        )

    async def aclose(self) -> None:
        return None
