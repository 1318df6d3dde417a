"""Waiting for a round's work while it makes progress: ``timeoutPerRound`` measures inactivity.

A round fails with :class:`~dialectic.core.errors.DebateTimeoutError` only when no work at all has
finished for ``timeoutPerRound``: a slow model that keeps producing is never cut off, a
stalled one is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

from dialectic.core.errors import DebateTimeoutError


async def wait_while_progressing(
    work: Iterable[asyncio.Future[Any]],
    *,
    last_progress: Callable[[], float],
    clock: Callable[[], float],
    limit_ms: int,
    round_number: int,
    fatal: asyncio.Future[Any] | None = None,
) -> None:
    """Return when every future in ``work`` is done; raise ``fatal``'s error as soon as it has one.

    The futures' results are never read, only whether they are done: ``Any`` lets any future in (``Future``
    is invariant, so ``Future[object]`` would refuse a ``Future[Contribution]``)."""
    pending: set[asyncio.Future[Any]] = {f for f in work if not f.done()}
    while True:
        if fatal is not None and fatal.done():
            error = fatal.exception()
            if error is not None:
                raise error
        if not pending:
            return
        left = last_progress() + limit_ms / 1000 - clock()
        if left <= 0:
            raise DebateTimeoutError(
                f"round {round_number} made no progress for timeoutPerRound ({limit_ms} ms); the work "
                "saved so far is kept and the debate can be resumed"
            )
        watched = pending | ({fatal} if fatal is not None else set())
        _, still = await asyncio.wait(watched, timeout=left, return_when=asyncio.FIRST_COMPLETED)
        pending = {f for f in still if f is not fatal}
