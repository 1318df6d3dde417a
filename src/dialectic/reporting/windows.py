"""How much of its context window each participant's prompts took, in words: for ``--verbose``, ``show``
and the report. Pure rendering of ``state.windows`` (see :class:`~dialectic.core.domain.WindowUse`)."""

from __future__ import annotations

from dialectic.core.domain import DebateState, WindowUse

SOURCES = {
    "config": "configured",
    "server": "said by its server",
    "refusal": "learned from a refusal",
    "remembered": "learned earlier",
}
VERBS = {
    "summarize": "summarized",
    "slide": "slid",
    "cut": "cut its quotes",
    "reply": "shortened its reply",
    "fail": "failed on",
}


def ordered_uses(state: DebateState) -> list[tuple[str, WindowUse]]:
    """Each participant's use, with its name: agents in configured order, then the judge, then any other."""
    people = [*state.agents, *([state.judge] if state.judge else [])]
    names = {p.id: p.name for p in people}
    order = [p.id for p in people if p.id in state.windows]
    order += [agent_id for agent_id in state.windows if agent_id not in names]
    return [(names.get(agent_id, agent_id), state.windows[agent_id]) for agent_id in order]


def largest_text(use: WindowUse) -> str:
    """``1,185 of 1,500 tokens (79%, estimated)``, or without a window when it is unknown."""
    how = "counted" if use.counted_by == "tokenizer" else "estimated"
    if use.window is None:
        return f"{use.largest_prompt:,} tokens ({how}; window unknown)"
    share = use.largest_prompt / use.window
    return f"{use.largest_prompt:,} of {use.window:,} tokens ({share:.0%}, {how})"


def done_text(use: WindowUse) -> str:
    """What was done about full prompts: ``summarized 2×, slid 1×, 1 refusal``, or ``nothing needed``."""
    parts = [f"{VERBS.get(strategy, strategy)} {count}×" for strategy, count in use.fired.items()]
    if use.refusals:
        parts.append(f"{use.refusals} refusal{'s' if use.refusals != 1 else ''}")
    if use.over_sent:
        parts.append(f"{use.over_sent} sent over 90%")
    if use.warned and not parts:
        parts.append("warned at 80%")
    return ", ".join(parts) or "nothing needed"


def source_text(use: WindowUse) -> str:
    return SOURCES.get(use.source or "", "unknown")


def window_line(name: str, use: WindowUse) -> str:
    """One participant on one line: ``Architect: largest prompt 1,185 of 1,500 tokens (79%, estimated);
    window configured; summarized 2×``."""
    window = f"; window {source_text(use)}" if use.window is not None else ""
    return f"{name}: largest prompt {largest_text(use)}{window}; {done_text(use)}"


def window_lines(state: DebateState) -> list[str]:
    """Every participant's line, with the strategy the debate applies past 90%."""
    uses = ordered_uses(state)
    if not uses:
        return []
    strategy = _strategy(state)
    return [f"Context windows (past 90%: {strategy}):", *(f"  {window_line(name, use)}" for name, use in uses)]


def window_blocks(state: DebateState) -> list[str]:
    """The report's ``## Context windows`` section (none when no prompt was counted)."""
    uses = ordered_uses(state)
    if not uses:
        return []
    strategy = _strategy(state)
    rows = [
        "| Participant | Window | Largest prompt | Past 90% |",
        "| --- | --: | --: | --- |",
    ]
    for name, use in uses:
        window = f"{use.window:,} ({source_text(use)})" if use.window is not None else "unknown"
        largest = f"{use.largest_prompt:,}"
        if use.window:
            largest += f" ({use.largest_prompt / use.window:.0%})"
        if use.counted_by != "tokenizer":
            largest += " est."
        rows.append(f"| {name.replace('|', '/')} | {window} | {largest} | {done_text(use)} |")
    lead = (
        f"Tokens of each participant's largest prompt against its context window; past 90% the debate "
        f"applies `{strategy}` (debate.contextStrategy). Estimated counts are characters / 3."
    )
    return ["## Context windows", lead, "\n".join(rows)]


def _strategy(state: DebateState) -> str:
    """What the debate does past 90% of a window (``debate.contextStrategy``)."""
    saved = state.saved_config()
    return saved.debate.context_strategy if saved is not None else "summarize"
