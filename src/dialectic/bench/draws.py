"""Samples the arms of one bench run share.

Two arms that draw the same request — the k-th sample of ``self-consistency:7`` and of
``majority:5``, ``single``'s greedy answer and ``adaptive``'s first — would otherwise pay for the
same draw twice. Here the k-th draw of a request (its call-cache key,
:func:`dialectic.llm.call_cache.cache_key`, with draw index k) is asked once per run, and every
arm that needs it gets that reply. The arms so differ only in what they do with their draws,
which pairs their comparison more tightly (common random numbers) and saves the shared calls.

Each arm still counts a shared draw as its own call (its meter records the reply's tokens), so
an arm's calls and tokens per item are what it would cost alone; :attr:`SharedDraws.shared` says
how many requests the sharing saved.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from dialectic.llm.base import Completion


class SharedDraws:
    """One run's draws by key: the first arm to need a draw asks for it, the others wait for its reply.

    A draw that failed is forgotten (the arms that waited for it see the same error), so a later
    arm asks again.
    """

    def __init__(self) -> None:
        self._draws: dict[str, asyncio.Future[Completion]] = {}
        self.asked = 0
        """Draws requested from the provider."""
        self.shared = 0
        """Draws an arm took from another arm's request instead of asking."""

    async def draw(self, key: str, ask: Callable[[], Awaitable[Completion]]) -> tuple[Completion, bool]:
        """The reply filed under ``key``, asking for it with ``ask`` if no arm has; and whether it was shared."""
        pending = self._draws.get(key)
        if pending is not None:
            self.shared += 1
            return await asyncio.shield(pending), True
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self._draws[key] = future
        self.asked += 1
        try:
            completion = await ask()
        except BaseException as exc:
            del self._draws[key]
            if isinstance(exc, Exception):
                future.set_exception(exc)
                future.exception()  # retrieved here: an error no arm waited for is not logged
            else:
                future.cancel()
            raise
        future.set_result(completion)
        return completion, False
