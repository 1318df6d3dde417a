"""``--verbose``: what the debate runs with (at the start) and what it did (at the end), on stderr."""

from __future__ import annotations

from pydantic import ValidationError

from dialectic.cli.console import Terminal
from dialectic.cli.wording import plural
from dialectic.core import events as ev
from dialectic.core.config import SummarizationConfig, SystemConfig
from dialectic.core.domain import AgentPromptSources, Contribution, DebateState, DebateSummary, LedgerEntry
from dialectic.core.ledger import cache_text, entries_of, ledger_totals, prompt_cache_text, totals_by_kind, usage_text
from dialectic.reporting.windows import window_lines
from dialectic.store import DebateStore

PREVIEW_CHARS = 80


class VerboseSetup:
    """Prints the prompt sources and summarization settings once the debate is saved and started."""

    def __init__(self, term: Terminal, store: DebateStore) -> None:
        self._term = term
        self._store = store

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.DebateStarted):
            for line in setup_lines(self._store.load(event.debate_id)):
                self._term.line(line, style="dim")


def participant_names(state: DebateState) -> dict[str, str]:
    """Agent and judge ids to display names."""
    names = {p.id: p.name for p in state.agents}
    if state.judge is not None:
        names[state.judge.id] = state.judge.name
    return names


def setup_lines(state: DebateState) -> list[str]:
    names = participant_names(state)
    lines = ["Prompt sources:"]
    sources = list(state.prompt_sources.agents)
    if state.prompt_sources.judge is not None:
        sources.append(state.prompt_sources.judge)
    lines += [f"  {_prompt_line(names.get(s.agent_id, s.agent_id), s)}" for s in sources]
    config = _config_of(state)
    if config is not None:
        lines.append(f"Summarization: {_describe_summarization(config.debate.summarization)}")
        for agent in config.agents:
            if agent.summarization is not None:
                effective = agent.summarization.apply_to(config.debate.summarization)
                lines.append(f"  {agent.name} overrides: {_describe_summarization(effective)}")
    if config is not None:
        lines.append(_describe_windows(config))
    if state.context:
        lines.append(f"Context: {len(state.context)} characters")
    if config is not None and config.debate.context.dir and config.debate.context.mode == "tools":
        context = config.debate.context
        judge = ", the judge too" if context.judge_tools else ""
        cap = f"at most {context.max_tool_calls} tool calls per contribution{judge}"
        lines.append(f"Context: {context.dir} through tools ({cap})")
    return lines


def _prompt_line(name: str, sources: AgentPromptSources) -> str:
    return (
        f"{name} ({sources.role}): system {sources.system_prompt.describe()}; "
        f"summary {sources.summary_prompt.describe()}; "
        f"clarification {sources.clarification_prompt.describe()}"
    )


def _config_of(state: DebateState) -> SystemConfig | None:
    if not state.config:
        return None
    try:
        return state.config_or_defaults()
    except ValidationError:
        return None


def _describe_windows(config: SystemConfig) -> str:
    """``Context windows: past 90% summarize; Architect 1,500 tokens; the others as their servers say``."""
    speakers = [*config.participants(), config.judge]
    sized = [f"{s.name} {s.context_window:,} tokens" for s in speakers if s.context_window is not None]
    others = "the others as their servers say" if sized else "each as its server says"
    if len(sized) == len(speakers):
        others = ""
    parts = [f"past 90% {config.debate.context_strategy}", *sized, *([others] if others else [])]
    return "Context windows: " + "; ".join(parts)


def _describe_summarization(s: SummarizationConfig) -> str:
    if not s.enabled:
        return "disabled"
    return f"enabled, threshold {s.threshold} chars, max length {s.max_length} chars, method {s.method}"


def summary_lines(state: DebateState) -> list[str]:
    """Per round: each contribution with a preview, tokens and latency; summaries; then the ledger's totals."""
    names = participant_names(state)
    entries = entries_of(state)
    cached = _cached_calls(entries)
    lines = [f"Debate {state.id} ({state.status})" + (f", a replay of {state.replay_of}" if state.replay_of else "")]
    lines += team_lines(state)
    for rnd in state.rounds:
        lines.append(f"Round {rnd.round_number}")
        lines += [f"  {_summary_line(names, s)}" for s in rnd.summaries.values()]
        for c in rnd.contributions:
            from_cache = (c.type, rnd.round_number, c.agent_id, c.target_agent_id) in cached
            lines.append(f"  {_contribution_line(names, c, from_cache=from_cache)}")
            lines += [f"      tool {record.describe()}" for record in c.tool_calls or []]
    if state.judge_summary is not None:
        lines.append(f"Judge {_summary_line(names, state.judge_summary)}")
    if state.final_solution is not None and state.final_solution.tool_calls:
        lines.append("Judge's tool calls for the solution:")
        lines += [f"      tool {record.describe()}" for record in state.final_solution.tool_calls]
    contributions = state.all_contributions()
    failed = sum(1 for c in contributions if not c.ok)
    duration = (state.updated_at - state.created_at).total_seconds()
    lines.append(
        f"Totals: {plural(len(state.rounds), 'round')}, {plural(len(contributions), 'contribution')}"
        + (f" ({failed} failed)" if failed else "")
        + f", {duration:.1f}s"
    )
    totals = ledger_totals(entries)
    lines.append(f"Usage: {usage_text(totals)}")
    prompt_cache = prompt_cache_text(totals)
    if prompt_cache is not None:
        lines.append(prompt_cache[0].upper() + prompt_cache[1:])
    if totals.cached:
        lines.append(f"Call cache: {cache_text(totals)}")
    lines += [f"  {kind:<14} {usage_text(totals)}" for kind, totals in totals_by_kind(entries).items()]
    lines += window_lines(state)
    return lines


def team_lines(state: DebateState) -> list[str]:
    """The team picked from a pool (``debate.team``) and each pick's reasons; nothing without one."""
    choice = state.team
    if choice is None:
        return []
    lines = [f"Team: {len(choice.members)} picked from the pool {choice.pool} ({choice.debates} debate(s) rated)"]
    lines += [f"  {m.name} ({m.model}, {m.role}): {'; '.join(m.reasons)}" for m in choice.members]
    return lines


def _cached_calls(entries: list[LedgerEntry]) -> set[tuple[str, int | None, str, str | None]]:
    """The calls (kind, round, agent, target) the call cache answered without a request."""
    return {(e.kind, e.round_number, e.agent_id, e.target_agent_id) for e in entries if e.cached and not e.requests}


def _contribution_line(names: dict[str, str], c: Contribution, *, from_cache: bool = False) -> str:
    who = names.get(c.agent_id, c.agent_id)
    if c.target_agent_id:
        who += f" → {names.get(c.target_agent_id, c.target_agent_id)}"
    if not c.ok:
        return f"{c.type:<10} {who}: failed: {c.error or 'unknown error'}"
    first = next((line.strip() for line in c.content.splitlines() if line.strip()), "")
    preview = first if len(first) <= PREVIEW_CHARS else first[: PREVIEW_CHARS - 1] + "…"
    meta = c.metadata
    notes = [f"{meta.tokens_used or 0} tokens", f"{(meta.latency_ms or 0) / 1000:.1f}s"]
    if meta.truncated:
        notes.append("cut off")
    if meta.carried_over:
        notes.append("carried over")
    if from_cache:
        notes.append("from the call cache")
    if c.tool_calls:
        notes.append(plural(len(c.tool_calls), "tool call"))
    return f"{c.type:<10} {who}: {preview} ({', '.join(notes)})"


def _summary_line(names: dict[str, str], s: DebateSummary) -> str:
    m = s.metadata
    return (
        f"summary    {names.get(s.agent_id, s.agent_id)}: {m.before_chars} → {m.after_chars} chars "
        f"({m.tokens_used or 0} tokens, {(m.latency_ms or 0) / 1000:.1f}s)"
    )
