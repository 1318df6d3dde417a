"""Fitting a prompt into its participant's context window: ``debate.contextStrategy`` applied.

A call whose prompt carries the debate so far is given its *shapes*: ways of carrying it, from the
fullest (what the prompt carries today) to the leanest, made one at a time and only when the one
before did not fit. :func:`fitted` tries them in order through a
:class:`~dialectic.engine.windows.WindowGate`, which refuses to send a first request past 90% of
the window; the first shape that fits is sent.

The shapes follow the strategy:

* ``summarize`` (the default): the participant's summary replaces the older rounds — the
  summary the engine makes anyway once a history is long (``debate.summarization``), made now
  even under its character threshold; then, if the prompt is still too large, as ``slide``;
* ``slide``: the problem and the last rounds that fit, the oldest dropped first;
* ``fail``: no shape but the first; a prompt past 90% stops the debate
  (:class:`~dialectic.core.errors.WindowFull`, exit 3), saved as failed and resumable with a larger
  window.

When no shape fits, the leanest is sent anyway (with a warning). When the server refuses a prompt
as too long (:class:`~dialectic.core.errors.ContextWindowExceeded`), the gate has learned the window
from the refusal; the call is tried once more, shrunk by the strategy to fit the window learned.
A second refusal fails the call as before (the agent is dropped).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from dialectic.agents.participants import Speaker
from dialectic.core.domain import DebateRound
from dialectic.core.errors import ContextWindowExceeded, WindowFull
from dialectic.engine.run_state import RunState
from dialectic.engine.windows import Counted, Overflow, WindowGate, WindowKeeper, warn_line
from dialectic.llm.observe import current_observer, observing

V = TypeVar("V")
T = TypeVar("T")

SUMMARIZE, SLIDE, FAIL = "summarize", "slide", "fail"


@dataclass(frozen=True)
class Shape(Generic[V]):
    """One way a prompt may carry the debate so far: ``value`` (what the call is given), and the
    strategy that made it (``None``: the prompt as it is)."""

    value: V
    strategy: str | None = None


Shapes = AsyncGenerator[Shape[V], None]


async def only(value: V) -> Shapes[V]:
    """The one shape of a prompt that has nothing to shrink."""
    yield Shape(value)


def slid(rounds: Sequence[DebateRound], render: Callable[[Sequence[DebateRound]], str], *, least: int = 0) -> list[str]:
    """The texts of ``slide``: the last ``len(rounds) - 1`` rounds, then one fewer each time, down to ``least``."""
    return [render(rounds[len(rounds) - keep :]) if keep else "" for keep in range(len(rounds) - 1, least - 1, -1)]


async def gated(ctx: RunState, speaker: Speaker, what: str, make_call: Callable[[], Awaitable[T]]) -> T:
    """A call whose prompt has nothing to shrink: counted and warned about like any other; under
    ``fail``, stopped past 90%."""
    return await fitted(ctx, speaker, what, only(None), lambda _: make_call())


async def fitted(ctx: RunState, speaker: Speaker, what: str, shapes: Shapes[V], call: Callable[[V], Awaitable[T]]) -> T:
    """``call`` with the first of ``shapes`` whose prompt fits ``speaker``'s window (see the module's docstring).

    ``what`` names the call in messages (``critiquing Simplicity Advocate``). A seat a person plays is
    given the fullest shape, uncounted. Runs inside the call's
    :meth:`~dialectic.engine.run_state.RunState.announce`, so the attempts that did not fit are
    never announced, and never reach the budget or the ledger.
    """
    if speaker.config.is_human:  # a person reads the debate whole: there is no window to fit it in
        async with contextlib.aclosing(shapes) as whole:
            return await call((await anext(whole)).value)
    keeper = await ctx.windows.keeper(speaker)
    strategy = ctx.roster.settings.context_strategy
    async with contextlib.aclosing(shapes) as made:
        shape = await anext(made)
        refused = leanest = False
        while True:
            gate = WindowGate(
                keeper,
                current_observer(),
                may_refuse=not leanest,
                on_warn=lambda counted: ctx.warn(_warning(keeper, counted, strategy)),
                on_refused=lambda error: ctx.warn(_refusal(keeper, what, error)),
            )
            ok, over = False, None
            try:
                with observing(gate):
                    result = await call(shape.value)
                ok = True
            except Overflow as overflow:
                over = overflow
            except ContextWindowExceeded:
                if refused or leanest:
                    raise
                refused = True  # the gate learned the window from it: shrunk to fit, the prompt goes once more
                continue
            finally:
                await asyncio.shield(gate.close(ok=ok))  # a probe's turn passes on even when this call is cancelled
            if over is None:
                _sent(ctx, keeper, shape.strategy, what, gate.first_tokens, leanest)
                return result
            if strategy == FAIL:
                keeper.fired(FAIL)
                raise WindowFull(_full(ctx, keeper, what, over.tokens))
            following = await anext(made, None)  # made only now: a summary is asked for only when it is needed
            if following is None:
                leanest = True  # nothing left to shrink: the leanest goes as it is
            else:
                shape = following


def _sent(ctx: RunState, keeper: WindowKeeper, strategy: str | None, what: str, tokens: int | None, over: bool) -> None:
    """Note what was done to the prompt that went out (a warning the first time each thing is done)."""
    window = keeper.window
    if strategy is not None and keeper.fired(strategy) and window is not None:
        done = (
            "its older rounds are replaced by its summary"
            if strategy == SUMMARIZE
            else "only the last rounds that fit are kept"
        )
        ctx.warn(
            f"{keeper.name}'s prompt for {what} passed 90% of its {window:,}-token context window: {done} "
            f"(debate.contextStrategy {ctx.roster.settings.context_strategy})"
        )
    if over and keeper.sent_over() and window is not None:
        ctx.warn(
            f"{keeper.name}'s prompt for {what} ({tokens or 0:,} tokens) is still over 90% of its {window:,}-token "
            "context window with nothing left to shrink; it is sent as it is"
        )


def _warning(keeper: WindowKeeper, counted: Counted, strategy: str) -> str:
    window = keeper.window or 1
    how = "counted by its tokenizer" if counted.exact else "estimated"
    return (
        f"{keeper.name}'s prompt reached {counted.tokens / window:.0%} of its {window:,}-token context window "
        f"({counted.tokens:,} tokens, {how}); past 90% debate.contextStrategy '{strategy}' applies"
    )


def _refusal(keeper: WindowKeeper, what: str, error: ContextWindowExceeded) -> str:
    told = "as the server says" if error.window else "at most: the refused prompt's size"
    return (
        f"the server refused {keeper.name}'s request for {what} as too long: its context window is "
        f"{keeper.window or 0:,} tokens ({told}); its prompts are shrunk to fit it from now on"
    )


def _full(ctx: RunState, keeper: WindowKeeper, what: str, tokens: int) -> str:
    window = keeper.window or 0
    larger = _larger_window(tokens)
    return (
        f"{keeper.name}'s prompt for {what} ({tokens:,} tokens) passes 90% of its {window:,}-token context "
        f"window and debate.contextStrategy is fail; resume with a larger window: "
        f"dialectic resume {ctx.debate_id} --context-window {keeper.use.agent_id}={larger} (or set its contextWindow)"
    )


def _larger_window(tokens: int) -> int:
    """A window the prompt would fit in with room to spare: the next power of two above it, with the 80% line clear."""
    size = 1024
    while warn_line(size) <= tokens:
        size *= 2
    return size
