"""The shapes each kind of prompt can take to fit its window (see :mod:`dialectic.engine.fitting`).

Pure, but for the summary a ``summarize`` shape asks for: the caller passes how to get it, and it
is asked for only when the prompt with the full history did not fit.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from dialectic.agents.squeeze import cut_quote
from dialectic.context.history import history_for, participant_names, perspective, rounds_text
from dialectic.core.domain import DebateRound, DebateState
from dialectic.engine.fitting import CUT, QUOTE_SHARES, SLIDE, SUMMARIZE, Shape, Shapes, slid

Summarize = Callable[[], Awaitable[str | None]]
"""Gets the participant's summary of the older rounds now (``None`` when there is none to be had)."""


@dataclass(frozen=True)
class History:
    """What an agent's prompt carries of its earlier rounds: their text, or its own summary of them."""

    text: str
    is_summary: bool = False


@dataclass(frozen=True)
class Discussion:
    """What a turn carries of the debate so far: the rounds verbatim, and the agent's summary of older ones."""

    text: str
    summary: str = ""


async def history_shapes(
    state: DebateState,
    agent_id: str,
    number: int,
    *,
    strategy: str,
    full_history: bool,
    summarize: Summarize | None,
) -> Shapes[History]:
    """An agent's history in ``number`` (critique-refine): as it is; its summary; its last rounds that fit."""
    text, is_summary = history_for(state, agent_id, number, full_history=full_history)
    yield Shape(History(text, is_summary))
    if not text:
        return
    if strategy == SUMMARIZE and not is_summary and summarize is not None:
        summary = await summarize()
        if summary:
            yield Shape(History(summary, True), SUMMARIZE)
    if not full_history:
        yield Shape(History(""), SLIDE)
        return
    names = participant_names(state)
    for kept in slid(perspective(state, agent_id, number), lambda rounds: rounds_text(rounds, names)):
        yield Shape(History(kept), SLIDE)


async def turn_shapes(
    full: Discussion,
    earlier: Sequence[DebateRound],
    recent: Sequence[DebateRound],
    render: Callable[[Sequence[DebateRound]], str],
    *,
    strategy: str,
    summarize: Summarize | None,
) -> Shapes[Discussion]:
    """A turn's discussion: as it is; the agent's summary of the older rounds with the ``recent`` ones
    verbatim; the last rounds that fit."""
    yield Shape(full)
    if not full.text and not full.summary:
        return
    if strategy == SUMMARIZE and not full.summary and summarize is not None:
        summary = await summarize()
        if summary:
            yield Shape(Discussion(render(recent), summary), SUMMARIZE)
    for kept in slid(earlier, render):
        yield Shape(Discussion(kept), SLIDE)


async def debate_shapes(
    full: History,
    rounds: Sequence[DebateRound],
    render: Callable[[Sequence[DebateRound]], str],
    *,
    strategy: str,
    summarize: Summarize | None,
    positions: str = "",
    cut_positions: Callable[[float], str] | None = None,
) -> Shapes[History]:
    """The debate as the judge reads it: as it is; its summary of the final round; the last rounds that fit;
    ``positions``: the final round's proposals and refinements without its critiques (a judge given no
    round at all would have nothing to judge); at the leanest, those positions each cut to a share of
    their length (``cut_positions``)."""
    yield Shape(full)
    if strategy == SUMMARIZE and not full.is_summary and summarize is not None:
        summary = await summarize()
        if summary:
            yield Shape(History(summary, True), SUMMARIZE)
    for kept in slid(rounds, render, least=1):
        yield Shape(History(kept), SLIDE)
    if positions:
        yield Shape(History(positions), SLIDE)
        if cut_positions is not None:
            for share in QUOTE_SHARES:
                yield Shape(History(cut_positions(share)), CUT)


async def cut_shapes(full: str, cut: Callable[[float], str]) -> Shapes[str]:
    """A text quoting others' contributions: as it is, then with each of them cut to :data:`QUOTE_SHARES`."""
    yield Shape(full)
    for share in QUOTE_SHARES:
        yield Shape(cut(share), CUT)


async def source_shapes(rounds: Sequence[DebateRound], render: Callable[[Sequence[DebateRound]], str]) -> Shapes[str]:
    """What a summary summarizes: every round given, then the last ones that fit, then the last round with
    its contributions cut (a summary's own prompt can only slide and cut: it is the summary)."""
    yield Shape(render(rounds))
    for kept in slid(rounds, render, least=1):
        yield Shape(kept, SLIDE)
    for share in QUOTE_SHARES if rounds else ():
        yield Shape(render(cut_rounds(rounds[-1:], share)), CUT)


def cut_rounds(rounds: Sequence[DebateRound], share: float) -> list[DebateRound]:
    """``rounds`` with every contribution cut to ``share`` of its length, marked where (:func:`cut_quote`)."""
    return [
        rnd.model_copy(
            update={
                "contributions": [
                    c.model_copy(update={"content": cut_quote(c.content, share)}) for c in rnd.contributions
                ]
            }
        )
        for rnd in rounds
    ]
