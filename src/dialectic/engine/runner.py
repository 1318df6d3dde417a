"""Runs the node graph: one node at a time, saving the cursor after every step.

That one rule gives resume after a crash (from the last saved step), suspension for a
human (a node that needs answers is saved as next and not run), clean interruption, and
pausing on request (see :mod:`dialectic.engine.pausing`): the calls in flight finish and are
saved, then the run stops between steps with status ``paused``. A human seat's turn that no
one can write now (:class:`~dialectic.llm.human.HumanTurnWanted`, see :mod:`dialectic.engine.seats`)
stops the run the same way, with status ``suspended``: its cursor stays on the step under way.
"""

from __future__ import annotations

import asyncio

from dialectic.core import events as ev
from dialectic.core.changes import CursorMoved, StatusChanged
from dialectic.core.domain import DebateState
from dialectic.core.errors import DialecticError, StoreError
from dialectic.engine.nodes import NODES, End, InitializationNode, Node, Suspend
from dialectic.engine.pausing import PauseRequested
from dialectic.engine.run_state import RunState
from dialectic.llm.human import HumanTurnWanted


def node_named(name: str | None) -> Node:
    if name is None:
        return InitializationNode()
    return NODES[name]()


async def run_graph(ctx: RunState, start: Node) -> DebateState:
    """Run from ``start`` until the debate completes, suspends, fails or is cancelled."""
    try:
        return await _run_graph(ctx, start)
    finally:
        # the work table and the run refer to each other: a reference cycle, freed only by the garbage
        # collector's rare full passes, so a server would keep every finished debate until then
        work, ctx.work = ctx.work, None
        if work is not None:
            work.release()


async def _run_graph(ctx: RunState, start: Node) -> DebateState:
    node = start
    people = False
    try:
        while True:
            ctx.emit(ev.NodeStarted(ctx.debate_id, node.name, ctx.state.current_round))
            try:
                outcome = await node.run(ctx)
            except HumanTurnWanted:
                ctx.emit(ev.NodeFinished(ctx.debate_id, node.name, "suspend"))
                raise
            except BaseException:
                ctx.emit(ev.NodeFinished(ctx.debate_id, node.name, "error"))
                raise
            if isinstance(outcome, End):
                ctx.commit(CursorMoved(next_node=None), StatusChanged(status="completed"), receipt=True)
                ctx.emit(ev.NodeFinished(ctx.debate_id, node.name, "end"))
                assert ctx.state.final_solution is not None
                ctx.emit(ev.DebateCompleted(ctx.debate_id, ctx.state.final_solution))
                return ctx.state
            if isinstance(outcome, Suspend):
                ctx.commit(CursorMoved(next_node=outcome.resume_at.name), StatusChanged(status="suspended"))
                ctx.emit(ev.NodeFinished(ctx.debate_id, node.name, "suspend"))
                groups = tuple(
                    g.model_copy(update={"items": [i for i in g.items if not i.answered]})
                    for g in ctx.state.clarifications
                    if any(not i.answered for i in g.items)
                )
                ctx.emit(ev.QuestionsPending(ctx.debate_id, groups))
                ctx.emit(ev.DebateSuspended(ctx.debate_id, outcome.reason))
                return ctx.state
            ctx.commit(CursorMoved(next_node=outcome.name))
            ctx.emit(ev.NodeFinished(ctx.debate_id, node.name, outcome.name))
            node = outcome
            ctx.control.stop_if_pausing()
    except PauseRequested:
        pass  # paused below, outside the handlers, so that a cancellation while pausing is an interruption
    except HumanTurnWanted:
        people = True  # suspended below, outside the handlers, as a pause is
    except asyncio.CancelledError:
        await _interrupted(ctx)
        raise
    except StoreError as exc:
        if exc.unreachable:
            raise await _store_gone(ctx, exc) from exc
        raise await _unsaved(ctx, exc) from exc
    except DialecticError as exc:
        await _stop(ctx, "failed", exc.message, exc.stop_reason)
        exc.debate_id = ctx.debate_id
        ctx.emit(ev.DebateFailed(ctx.debate_id, exc.message))
        raise
    except Exception as exc:
        message = f"unexpected {type(exc).__name__}: {exc}"
        await _stop(ctx, "failed", message)
        ctx.emit(ev.DebateFailed(ctx.debate_id, message))
        raise
    return await (_wait_for_people(ctx) if people else _pause(ctx))


async def _pause(ctx: RunState) -> DebateState:
    """Let the calls in flight finish (their work saves itself), then stop with status ``paused``."""
    ctx.emit(ev.DebatePausing(ctx.debate_id, ctx.control.in_flight))
    try:
        await ctx.control.idle()
    except asyncio.CancelledError:
        await _interrupted(ctx)
        raise
    await _stop(ctx, "paused", None)
    ctx.emit(ev.DebatePaused(ctx.debate_id))
    return ctx.state


async def _wait_for_people(ctx: RunState) -> DebateState:
    """A human turn waits for its text: start no new call, let those in flight finish (their work saves
    itself), then stop with status ``suspended`` (the cursor stays on the step under way)."""
    ctx.control.request_pause()
    try:
        await ctx.control.idle()
    except asyncio.CancelledError:
        await _interrupted(ctx)
        raise
    await _stop(ctx, "suspended", None)
    ctx.emit(ev.DebateSuspended(ctx.debate_id, waiting_reason(ctx.state)))
    return ctx.state


def waiting_reason(state: DebateState) -> str:
    """Why a debate waits for people: the human turns pending, by seat."""
    turns = state.pending_turns()
    if not turns:
        return "waiting for a human turn"
    first = turns[0]
    what = f"waiting for {first.agent_name}'s turn ({first.activity}"
    what += f", round {first.round_number})" if first.round_number is not None else ")"
    return what + (f" and {len(turns) - 1} more" if len(turns) > 1 else "")


async def _unsaved(ctx: RunState, exc: StoreError) -> StoreError:
    """The store cannot be written (its disk full, its server gone for longer than a write waits): the work
    stops without saving that it failed, which would fail the same way. Every write is one transaction, so
    what was saved before is whole, and the debate resumes from it once the store can be written again."""
    ctx.take_uncommitted()
    await ctx.cancel_work()
    hint = f"resume it once the store can be written again: dialectic resume {ctx.debate_id}"
    message = exc.message if f"dialectic resume {ctx.debate_id}" in exc.message else f"{exc.message}; {hint}"
    error = StoreError(
        f"{message} (the debate stopped at its last saved step: nothing after it was written)", detail=exc.detail
    )
    error.unreachable = exc.unreachable
    error.debate_id = ctx.debate_id
    ctx.emit(ev.DebateFailed(ctx.debate_id, error.message))
    return error


async def _store_gone(ctx: RunState, exc: StoreError) -> StoreError:
    """The store stayed unreachable past the outage bound: the run stops as ``interrupted`` (nothing went
    wrong with the debate), its calls in flight cancelled. Saving the status is tried once, without waiting:
    while the store is away the stored status stays ``running`` with a lease nobody renews, which shows as
    stale once it lapses (it has by then when the bound is longer than the lease's time-to-live, as by
    default), and either way ``dialectic resume`` takes the debate up from its last saved step."""
    ctx.take_uncommitted()
    await ctx.cancel_work()
    hint = f"resume it once the store is back: dialectic resume {ctx.debate_id}"
    message = exc.message if f"dialectic resume {ctx.debate_id}" in exc.message else f"{exc.message}; {hint}"
    try:
        ctx.record(StatusChanged(status="interrupted"), wait_for_store=False)
    except StoreError:
        ctx.state.status = "interrupted"  # in memory only: the store is still away
    error = StoreError(
        f"{message} (the debate stopped as interrupted at its last saved step: nothing after it was written)",
        detail=exc.detail,
    )
    error.unreachable = True
    error.debate_id = ctx.debate_id
    ctx.emit(ev.DebateInterrupted(ctx.debate_id))
    return error


async def _interrupted(ctx: RunState) -> None:
    """Save the interruption, even when more cancellations arrive meanwhile (a second Ctrl-C, a cancel
    sent twice): one landing inside the save would leave the debate saved as ``running``."""
    saving = asyncio.ensure_future(_stop(ctx, "interrupted", None))
    while not saving.done():
        try:
            await asyncio.shield(saving)
        except asyncio.CancelledError:
            continue  # already stopping: the run is cancelled once the interruption is saved
    saving.result()
    ctx.emit(ev.DebateInterrupted(ctx.debate_id))


async def _stop(ctx: RunState, status: str, error: str | None, reason: str | None = None) -> None:
    """Cancel in-flight calls and save why the debate stopped; the cursor stays on the unfinished node."""
    ctx.take_uncommitted()
    await ctx.cancel_work()
    ctx.record(StatusChanged(status=status, error=error, reason=reason))  # type: ignore[arg-type]
