"""The debate's usage ledger, read: totals, totals per kind of call, and how money is written.

Every call a debate makes is one :class:`~dialectic.core.domain.LedgerEntry` in ``state.ledger``
(saved by the engine with the result it paid for). Every view — ``--verbose``, the report,
``show``, ``export``, ``bench`` — reads its figures from here, so they agree. Pure: no I/O.

Debates saved before the ledger existed have none; :func:`entries_of` then rebuilds one from
the tokens their contributions, summaries and synthesis recorded (their cost is unknown, and
the calls that recorded nothing, such as votes, are missing).

A request the call cache answered (``debate.cache: read``, ``dialectic replay``) is counted in its
call's ``cached``, not in its ``requests``: it sent nothing, so it adds no tokens and no cost (the
debate that first asked paid for them). A call answered wholly from the cache is a line with
``requests == 0`` and ``cached > 0``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dialectic.core.domain import ContributionMetadata, DebateState, DebateSummary, LedgerEntry
from dialectic.core.json_values import JsonObject


@dataclass(frozen=True)
class LedgerTotals:
    calls: int = 0
    requests: int = 0
    attempts: int = 0
    cached: int = 0
    """Requests answered from the call cache: the cache's hits (they add no tokens and no cost)."""
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cost_usd: float = 0.0
    """The sum of the known costs."""
    unpriced_calls: int = 0
    """Calls on a model without a price: their cost is unknown and not in ``cost_usd``."""
    failed_calls: int = 0
    discarded_calls: int = 0
    latency_ms: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def cost_known(self) -> bool:
        return self.unpriced_calls == 0

    def to_json_dict(self) -> JsonObject:
        """The totals as ``export`` writes them (camelCase; ``costUsd`` is ``null`` when any cost is unknown)."""
        return {
            "calls": self.calls,
            "requests": self.requests,
            "attempts": self.attempts,
            "cached": self.cached,
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "cachedInputTokens": self.cached_input_tokens,
            "totalTokens": self.total_tokens,
            "costUsd": round(self.cost_usd, 6) if self.cost_known else None,
            "knownCostUsd": round(self.cost_usd, 6),
            "unpricedCalls": self.unpriced_calls,
            "failedCalls": self.failed_calls,
            "discardedCalls": self.discarded_calls,
            "latencyMs": self.latency_ms,
        }


def ledger_totals(entries: Iterable[LedgerEntry]) -> LedgerTotals:
    calls = requests = attempts = hits = tokens_in = tokens_out = cached = unpriced = failed = discarded = latency = 0
    cost = 0.0
    for e in entries:
        calls += 1
        requests += e.requests
        attempts += e.attempts
        hits += e.cached
        tokens_in += e.input_tokens
        tokens_out += e.output_tokens
        cached += e.cached_input_tokens or 0
        latency += e.latency_ms
        if e.cost_usd is None:
            unpriced += 1
        else:
            cost += e.cost_usd
        failed += e.status != "ok"
        discarded += e.discarded
    return LedgerTotals(
        calls=calls,
        requests=requests,
        attempts=attempts,
        cached=hits,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cached_input_tokens=cached,
        cost_usd=cost,
        unpriced_calls=unpriced,
        failed_calls=failed,
        discarded_calls=discarded,
        latency_ms=latency,
    )


def totals_by_kind(entries: Iterable[LedgerEntry]) -> dict[str, LedgerTotals]:
    """Totals for each kind of call, in the order the kinds first appear."""
    grouped: dict[str, list[LedgerEntry]] = {}
    for entry in entries:
        grouped.setdefault(entry.kind, []).append(entry)
    return {kind: ledger_totals(group) for kind, group in grouped.items()}


def debate_totals(state: DebateState) -> LedgerTotals:
    return ledger_totals(entries_of(state))


def usd(amount: float) -> str:
    """Dollars as a person reads them: cents for large sums, enough digits that a small one is not shown as 0."""
    if amount == 0:
        return "$0.00"
    if amount < 0.01:
        return "$" + f"{amount:.6f}".rstrip("0")
    if amount < 1:
        digits = f"{amount:.4f}".rstrip("0")
        return "$" + (digits if len(digits.split(".")[1]) >= 2 else f"{amount:.2f}")
    return f"${amount:,.2f}"


def cost_text(totals: LedgerTotals) -> str:
    """``$0.0123``; ``unknown`` when no call has a price; else the known part and how many are unknown."""
    if totals.cost_known:
        return usd(totals.cost_usd)
    if totals.unpriced_calls == totals.calls:
        return "unknown"
    return f"{usd(totals.cost_usd)} + unknown ({totals.unpriced_calls} calls on models without a price)"


def entry_cost_text(entry: LedgerEntry) -> str:
    return "unknown" if entry.cost_usd is None else usd(entry.cost_usd)


def entries_of(state: DebateState) -> list[LedgerEntry]:
    """The debate's ledger; for a debate saved before there was one, the ledger its saved metadata gives."""
    if state.ledger or not _has_call_metadata(state):
        return list(state.ledger)
    return _rebuilt(state)


def _has_call_metadata(state: DebateState) -> bool:
    metas = [c.metadata for c in state.all_contributions()]
    return any(m.latency_ms is not None or m.tokens_used is not None for m in metas if not m.carried_over)


def _rebuilt(state: DebateState) -> list[LedgerEntry]:
    providers = {p.id: p.provider for p in [*state.agents, *([state.judge] if state.judge else [])]}
    entries: list[LedgerEntry] = []

    def add(kind: str, agent_id: str, round_number: int | None, meta: ContributionMetadata, ok: bool) -> None:
        entries.append(
            LedgerEntry(
                kind=kind,
                agent_id=agent_id,
                round_number=round_number,
                provider=providers.get(agent_id, "unknown"),
                model=meta.model or "unknown",
                input_tokens=meta.input_tokens or 0,
                output_tokens=meta.output_tokens or 0,
                requests=meta.attempts if ok else 0,
                attempts=meta.attempts,
                latency_ms=meta.latency_ms or 0,
                status="ok" if ok else "failed",
            )
        )

    def add_summary(summary: DebateSummary, kind: str, round_number: int | None) -> None:
        m = summary.metadata
        unsplit = m.input_tokens is None and m.output_tokens is None
        meta = ContributionMetadata(
            input_tokens=m.tokens_used if unsplit else m.input_tokens,  # a bare total is counted as input
            output_tokens=m.output_tokens,
            latency_ms=m.latency_ms,
            model=m.model,
        )
        add(kind, summary.agent_id, round_number, meta, True)

    for rnd in state.rounds:
        for summary in rnd.summaries.values():
            add_summary(summary, "summary", rnd.round_number)
        for c in rnd.contributions:
            if not c.metadata.carried_over:
                add(c.type, c.agent_id, rnd.round_number, c.metadata, c.ok)
    if state.judge_summary is not None:
        add_summary(state.judge_summary, "judge_summary", None)
    if state.final_solution is not None:
        add("synthesis", state.final_solution.synthesized_by, None, state.final_solution.metadata, True)
    return entries


def cache_text(totals: LedgerTotals) -> str:
    """The call cache's hits (requests it answered) and misses (requests the provider answered)."""
    hits = f"{totals.cached} hit" + ("" if totals.cached == 1 else "s")
    misses = f"{totals.requests} miss" + ("" if totals.requests == 1 else "es")
    return f"{hits} · {misses}"


def prompt_cache_text(totals: LedgerTotals) -> str | None:
    """``prompt tokens served from cache: N%``: the share of the prompt tokens the providers read from their
    prompt caches (as they report them: OpenAI's and llama-server's ``cached_tokens``, Anthropic's cache
    reads); ``None`` when no call reported any."""
    if not totals.cached_input_tokens or not totals.input_tokens:
        return None
    share = min(totals.cached_input_tokens, totals.input_tokens) / totals.input_tokens
    return f"prompt tokens served from cache: {share:.0%}"


def usage_text(totals: LedgerTotals) -> str:
    """One line of figures every view prints the same way: calls, tokens (input, output, cached) and cost."""
    calls = f"{totals.calls} call" + ("" if totals.calls == 1 else "s")
    extras = []
    if totals.failed_calls:
        extras.append(f"{totals.failed_calls} failed")
    if totals.discarded_calls:
        extras.append(f"{totals.discarded_calls} discarded")
    if totals.cached:
        extras.append(f"{totals.cached} from the call cache")
    if extras:
        calls += f" ({', '.join(extras)})"
    tokens = (
        f"{totals.total_tokens:,} tokens ({totals.input_tokens:,} input · {totals.output_tokens:,} output"
        + (f" · {totals.cached_input_tokens:,} cached" if totals.cached_input_tokens else "")
        + ")"
    )
    return f"{calls} · {tokens} · cost {cost_text(totals)}"
