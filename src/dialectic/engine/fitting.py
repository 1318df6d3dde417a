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

When no shape fits, the step's own inputs are squeezed (:mod:`dialectic.agents.squeeze`), in order:

* the other participants' contributions the prompt quotes (the proposal a critique is about, the
  critiques a refinement answers) are cut to :data:`QUOTE_SHARES` of their length, the prompt
  saying so;
* the reply's ``maxTokens`` is lowered to what the window leaves after the prompt, never under
  :data:`REPLY_FLOOR_SHARE` of it; the leanest prompt then goes even past 90% (with a warning),
  as long as it fits the window with its reply;
* else the step is refused before any call (:class:`~dialectic.core.errors.WindowFull`, exit 3,
  the debate saved as failed and resumable with a larger window), with the numbers and the
  settings to change. No agent is dropped for a window its debate overfilled.

When the server refuses a prompt as too long (:class:`~dialectic.core.errors.ContextWindowExceeded`),
the gate has learned the window from the refusal; the call is tried once more, shrunk as above to
fit the window learned. A second refusal stops the debate as :class:`~dialectic.core.errors.WindowFull`:
the window, not the provider, is the cause.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from dialectic.agents.participants import Speaker
from dialectic.agents.squeeze import NONE as NO_SQUEEZE
from dialectic.agents.squeeze import Squeeze, squeezing
from dialectic.core.domain import DebateRound
from dialectic.core.errors import ContextWindowExceeded, WindowFull
from dialectic.engine.run_state import RunState
from dialectic.engine.windows import Counted, Overflow, WindowGate, WindowKeeper, warn_line
from dialectic.llm.observe import current_observer, observing

V = TypeVar("V")
T = TypeVar("T")

SUMMARIZE, SLIDE, FAIL = "summarize", "slide", "fail"
CUT, REPLY = "cut", "reply"
"""What was done past the strategy (the keys of ``WindowUse.fired``): quotes cut, the reply's limit lowered."""


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
        squeeze, cuts, stage = NO_SQUEEZE, iter(QUOTE_SHARES), _SHAPES
        asked: int | None = None  # the reply's maxTokens before it was lowered
        refused = False
        while True:
            last = stage == _LAST
            gate = WindowGate(
                keeper,
                current_observer(),
                may_refuse=not last,
                must_fit=last,
                on_warn=lambda counted: ctx.warn(_warning(keeper, counted, strategy)),
                on_refused=lambda error: ctx.warn(_refusal(keeper, what, error)),
            )
            ok, over = False, None
            try:
                with squeezing(squeeze), observing(gate):
                    result = await call(shape.value)
                ok = True
            except Overflow as overflow:
                over = overflow
            except ContextWindowExceeded as error:
                if refused:  # refused again after shrinking to the window it taught: the window is the cause
                    raise WindowFull(_refused_again(ctx, keeper, what, error)) from error
                refused = True  # the gate learned the window from it: shrunk to fit, the prompt goes once more
                continue
            finally:
                await asyncio.shield(gate.close(ok=ok))  # a probe's turn passes on even when this call is cancelled
            if over is None:
                tokens = gate.first_tokens
                over_line = last and tokens is not None and keeper.over(tokens, squeeze.max_tokens)
                _sent(ctx, keeper, shape.strategy, what, tokens, squeeze, over=over_line)
                return result
            if strategy == FAIL:
                keeper.fired(FAIL)
                raise WindowFull(_full(ctx, keeper, what, over.tokens))
            if stage == _SHAPES:
                following = await anext(made, None)  # made only now: a summary is asked for only when it is needed
                if following is not None:
                    shape = following
                    continue
                stage = _QUOTES
            if stage == _QUOTES:
                share = next(cuts, None)
                if share is not None:
                    squeeze = Squeeze(quote_share=share)
                    continue
                stage, asked = _LAST, over.max_tokens  # the reply's maxTokens lowered to what the window leaves
                squeeze = replace(squeeze, max_tokens=_lowered(over))
                continue
            raise WindowFull(_cannot_fit(ctx, keeper, what, over, squeeze, asked))


QUOTE_SHARES = (0.5, 0.25, 0.125)
"""Shares of the other participants' contributions a prompt keeps, tried in turn once nothing else is left to shrink."""
REPLY_FLOOR_SHARE = 0.25
"""The reply's ``maxTokens`` is never lowered under this share of the configured one."""
_SHAPES, _QUOTES, _LAST = "shapes", "quotes", "last"


def reply_floor(max_tokens: int) -> int:
    """The least ``maxTokens`` a reply is given to fit a prompt in its window."""
    return max(1, math.ceil(max_tokens * REPLY_FLOOR_SHARE))


def _lowered(over: Overflow) -> int | None:
    """The reply's ``maxTokens`` with which the prompt that overflowed would fit its window (down to the floor)."""
    if over.max_tokens is None:
        return None
    return max(reply_floor(over.max_tokens), min(over.max_tokens, over.window - over.tokens))


def _sent(
    ctx: RunState,
    keeper: WindowKeeper,
    strategy: str | None,
    what: str,
    tokens: int | None,
    squeeze: Squeeze,
    *,
    over: bool,
) -> None:
    """Note what was done to the prompt that went out (a warning the first time each thing is done)."""
    window = keeper.window
    if squeeze.cuts_quotes and keeper.fired(CUT) and window is not None:
        ctx.warn(
            f"{keeper.name}'s prompt for {what} did not fit its {window:,}-token context window with nothing "
            f"left to shrink: the other participants' contributions it quotes are cut (to {squeeze.quote_share:.1%})"
        )
    if squeeze.max_tokens is not None and keeper.fired(REPLY) and window is not None:
        ctx.warn(
            f"{keeper.name}'s reply for {what} is limited to {squeeze.max_tokens:,} tokens (under its maxTokens) "
            f"so that prompt and reply fit its {window:,}-token context window"
        )
    if strategy is not None and keeper.fired(strategy) and window is not None:
        done = {
            SUMMARIZE: "its older rounds are replaced by its summary",
            CUT: "the contributions it quotes are cut",
        }.get(strategy, "only the last rounds that fit are kept")
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


def _cannot_fit(
    ctx: RunState, keeper: WindowKeeper, what: str, over: Overflow, squeeze: Squeeze, asked: int | None
) -> str:
    """Why a step is refused before any call: the numbers, and the settings that would let it fit."""
    if asked:
        share = f"{REPLY_FLOOR_SHARE:.0%}"
        reply = f"a reply of at least {reply_floor(asked):,} tokens ({share} of its maxTokens of {asked:,})"
    else:
        reply = "room for a reply"
    cut = f", the others' contributions it quotes cut to {squeeze.quote_share:.1%}" if squeeze.cuts_quotes else ""
    larger = _larger_window(over.tokens + (asked or 0))
    return (
        f"{keeper.name}'s prompt for {what} needs {over.tokens:,} tokens{cut}, and {reply}, which does not fit "
        f"its {over.window:,}-token context window: nothing was sent. Resuming helps only with a larger window or "
        f"smaller replies: dialectic resume {ctx.debate_id} --context-window {keeper.use.agent_id}={larger} "
        "(or set its contextWindow, llama-server's -c per slot, or a lower maxTokens)"
    )


def _refused_again(ctx: RunState, keeper: WindowKeeper, what: str, error: ContextWindowExceeded) -> str:
    window = keeper.window or error.window or 0
    return (
        f"the server refused {keeper.name}'s request for {what} as too long again, after it was shrunk to the "
        f"{window:,}-token context window the first refusal taught ({error}). Resuming helps only with a larger "
        f"window: dialectic resume {ctx.debate_id} --context-window {keeper.use.agent_id}=TOKENS (or set its "
        "contextWindow)"
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
