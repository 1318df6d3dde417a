"""Riding out a short outage of the debate store: a write that finds it unreachable waits and tries again.

A Postgres server restarted (or a network blip) mid-debate makes a write fail with
:attr:`~dialectic.core.errors.StoreError.unreachable`. Failing the debate for it would lose the
calls in flight, and the failure could not even be saved. So :func:`patient_append` waits, with
growing pauses, and appends again, for at most :func:`outage_bound_s` (``DIALECTIC_STORE_OUTAGE_S``,
else :data:`OUTAGE_BOUND_S`); past that it gives up with a message saying that the store is the cause
and that the debate can be resumed once it is back. The run then stops as ``interrupted``, not
``failed`` (see :mod:`dialectic.engine.runner`): nothing went wrong with the debate itself.

The write runs on the event loop and so holds it while it waits, as the store's own connection
timeout already does: nothing of the debate can go on without its store, and the calls in flight
carry on in the server meanwhile.

A connection cut *during* the commit leaves it unknown whether the append landed. Before appending
again, the stored log's tail is compared with what was being appended (every change carries the
moment it was made): when it is there, it is not appended a second time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from dialectic.core import environment
from dialectic.core.changes import Change, dump_change, parse_change
from dialectic.core.errors import StoreError
from dialectic.store.base import DebateStore

OUTAGE_BOUND_S = 60.0
"""How long a write waits for an unreachable store before the debate gives up on it."""
FIRST_PAUSE_S = 0.25
LONGEST_PAUSE_S = 4.0


def outage_bound_s() -> float:
    """The bound in force: ``DIALECTIC_STORE_OUTAGE_S`` when set, else :data:`OUTAGE_BOUND_S`."""
    return environment.store_outage_s() or OUTAGE_BOUND_S


def patient_append(
    store: DebateStore,
    debate_id: str,
    changes: Sequence[Change],
    *,
    on_wait: Callable[[StoreError], None] | None = None,
    bound_s: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """``store.append(debate_id, *changes)``, waiting out an unreachable store for at most ``bound_s``;
    ``on_wait`` is told once, when the waiting starts; ``bound_s`` defaults to :func:`outage_bound_s`."""
    bound_s = outage_bound_s() if bound_s is None else bound_s
    deadline: float | None = None
    pause = FIRST_PAUSE_S
    while True:
        try:
            return store.append(debate_id, *changes)
        except StoreError as error:
            if not error.unreachable:
                raise
            now = clock()
            if deadline is None:
                deadline = now + bound_s
                if on_wait is not None:
                    on_wait(error)
            if now >= deadline:
                gone = StoreError(
                    f"{error.message}; it has been unreachable for {bound_s:g} s, so the debate stops here. "
                    f"What was saved is kept: resume it once the store is back (dialectic resume {debate_id})",
                    detail=error.detail,
                )
                gone.unreachable = True
                raise gone from error
            sleep(min(pause, max(0.0, deadline - now)))
            pause = min(pause * 2, LONGEST_PAUSE_S)
        landed = _landed(store, debate_id, changes)
        if landed is not None:
            return landed


def _landed(store: DebateStore, debate_id: str, changes: Sequence[Change]) -> int | None:
    """The number of the debate's last change when ``changes`` are already the stored log's tail, else ``None``
    (also when the store cannot be read yet: the append is then tried again, and fails or lands)."""
    if not changes:
        return None
    try:
        log = store.changes(debate_id)
    except StoreError:
        return None
    tail = log[-len(changes) :]
    saved = [dump_change(parse_change(dump_change(c))) for c in changes]  # as the store reads them back
    if len(tail) == len(changes) and [dump_change(c) for c in tail] == saved:
        return len(log)
    return None
