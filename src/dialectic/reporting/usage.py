"""The report's ``## Totals``: contributions, then the usage ledger's calls, tokens, cost and latency.

Pure rendering, used by :mod:`dialectic.reporting.report`. Every figure about calls comes from the
ledger (:mod:`dialectic.core.ledger`), as in every other view.
"""

from __future__ import annotations

from dialectic.core.domain import DebateState
from dialectic.core.ledger import cache_text, cost_text, entries_of, ledger_totals, prompt_cache_text, totals_by_kind


def totals_blocks(state: DebateState) -> list[str]:
    contributions = state.all_contributions()
    failed = sum(1 for c in contributions if not c.ok)
    truncated = sum(1 for c in contributions if c.metadata.truncated)
    entries = entries_of(state)
    totals = ledger_totals(entries)
    latency = "none recorded"
    if totals.calls:
        mean = round(totals.latency_ms / totals.calls)
        latency = f"{totals.latency_ms:,} ms total · {mean:,} ms mean over {totals.calls} calls"
    notes = [f"{totals.failed_calls} failed"] if totals.failed_calls else []
    if totals.discarded_calls:
        notes.append(f"{totals.discarded_calls} discarded")
    if totals.attempts > totals.calls:
        notes.append(f"{totals.attempts} provider requests tried")
    cached = f" · {totals.cached_input_tokens:,} cached" if totals.cached_input_tokens else ""
    ok = len(contributions) - failed
    lines = [
        f"- **Contributions:** {len(contributions)} ({ok} ok, {failed} failed, {truncated} truncated)",
        f"- **Failed:** {failed}",
        f"- **Calls:** {totals.calls}" + (f" ({', '.join(notes)})" if notes else ""),
        f"- **Tokens:** {totals.input_tokens:,} input · {totals.output_tokens:,} output{cached} · "
        f"{totals.total_tokens:,} total",
        f"- **Cost:** {cost_text(totals)}",
        f"- **Latency:** {latency}",
    ]
    prompt_cache = prompt_cache_text(totals)
    if prompt_cache is not None:
        lines.append(f"- **Prompt cache:** {prompt_cache}")
    if totals.cached or reads_cache(state):
        lines.append(f"- **Call cache:** {cache_text(totals)}")
    for work in state.discarded:
        lines.append(
            f"- **Work thrown away:** round {work.round_number} was worked on ahead but the debate stopped "
            f"before it: {work.calls} finished call(s) discarded ({work.input_tokens:,} input · "
            f"{work.output_tokens:,} output tokens), {work.cancelled_calls} cancelled in flight"
        )
    blocks = ["## Totals", "\n".join(lines)]
    by_kind = totals_by_kind(entries)
    if by_kind:
        rows = ["| Call | Calls | Input tokens | Output tokens | Cached | Cost |", "|---|--:|--:|--:|--:|--:|"]
        for kind, t in by_kind.items():
            rows.append(
                f"| {kind.replace('_', ' ')} | {t.calls} | {t.input_tokens:,} | {t.output_tokens:,} | "
                f"{t.cached_input_tokens:,} | {cost_text(t)} |"
            )
        blocks += ["### Usage by call", "\n".join(rows)]
    return blocks


def reads_cache(state: DebateState) -> bool:
    """Whether the debate's requests were answered from the call cache when it had them (``debate.cache: read``)."""
    debate = state.config.get("debate")
    return isinstance(debate, dict) and debate.get("cache") == "read"
