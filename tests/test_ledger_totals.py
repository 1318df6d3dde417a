"""Reading the ledger: totals, totals per kind, money as people read it, and debates saved before the ledger."""

from __future__ import annotations

from dialectic.core.domain import (
    Contribution,
    ContributionMetadata,
    DebateRound,
    DebateState,
    LedgerEntry,
    Participant,
)
from dialectic.core.ledger import (
    cost_text,
    entries_of,
    ledger_totals,
    prompt_cache_text,
    totals_by_kind,
    usage_text,
    usd,
)


def entry(kind: str, *, cost: float | None = 0.001, **figures: int | str | bool) -> LedgerEntry:
    return LedgerEntry(kind=kind, agent_id="a", provider="openai", model="m", cost_usd=cost, **figures)  # type: ignore[arg-type]


def test_totals_add_up_every_entry() -> None:
    entries = [
        entry("proposal", input_tokens=100, output_tokens=50, cached_input_tokens=20, requests=2, attempts=3),
        entry("critique", input_tokens=10, output_tokens=5, requests=1, attempts=1, status="failed"),
        entry("critique", input_tokens=1, output_tokens=1, requests=1, attempts=1, discarded=True),
    ]
    totals = ledger_totals(entries)
    assert (totals.calls, totals.requests, totals.attempts) == (3, 4, 5)
    assert (totals.input_tokens, totals.output_tokens, totals.cached_input_tokens) == (111, 56, 20)
    assert totals.total_tokens == 167
    assert (totals.failed_calls, totals.discarded_calls) == (1, 1)
    assert totals.cost_usd == 0.003 and totals.cost_known
    assert list(totals_by_kind(entries)) == ["proposal", "critique"]
    assert totals_by_kind(entries)["critique"].calls == 2


def test_an_unknown_cost_is_said_never_counted_as_zero() -> None:
    known, unknown = entry("proposal", cost=0.5), entry("vote", cost=None)
    assert cost_text(ledger_totals([unknown])) == "unknown"
    mixed = ledger_totals([known, unknown])
    assert not mixed.cost_known and mixed.to_json_dict()["costUsd"] is None
    assert cost_text(mixed) == "$0.50 + unknown (1 calls on models without a price)"


def test_money_is_written_with_the_digits_that_matter() -> None:
    assert [usd(x) for x in (0, 0.000031, 0.0042, 0.05, 0.0123, 0.5, 12.345, 1234.5)] == [
        "$0.00",
        "$0.000031",
        "$0.0042",
        "$0.05",
        "$0.0123",
        "$0.50",
        "$12.35",
        "$1,234.50",
    ]


def test_the_usage_line_every_view_prints() -> None:
    line = usage_text(ledger_totals([entry("proposal", input_tokens=1200, output_tokens=300, cached_input_tokens=100)]))
    assert line == "1 call · 1,500 tokens (1,200 input · 300 output · 100 cached) · cost $0.001"


def test_the_prompt_cache_share_is_cached_over_all_prompt_tokens() -> None:
    entries = [
        entry("proposal", input_tokens=1000, output_tokens=10, cached_input_tokens=0),
        entry("critique", input_tokens=3000, output_tokens=10, cached_input_tokens=2900),
    ]
    assert prompt_cache_text(ledger_totals(entries)) == "prompt tokens served from cache: 72%"
    assert prompt_cache_text(ledger_totals([entry("proposal", input_tokens=5, output_tokens=1)])) is None


def test_a_debate_saved_before_the_ledger_gets_one_from_its_metadata() -> None:
    said = Contribution(
        agent_id="a",
        agent_role="architect",
        type="proposal",
        content="x",
        metadata=ContributionMetadata(input_tokens=10, output_tokens=5, latency_ms=100, model="m"),
    )
    carried = said.model_copy(update={"metadata": ContributionMetadata(carried_over=True)})
    state = DebateState(
        id="d",
        problem="p",
        agents=[Participant(id="a", name="A", role="architect", model="m", provider="openai")],
        rounds=[
            DebateRound(round_number=1, contributions=[said]),
            DebateRound(round_number=2, contributions=[carried]),
        ],
    )
    (rebuilt,) = entries_of(state)
    assert (rebuilt.kind, rebuilt.provider, rebuilt.input_tokens, rebuilt.cost_usd) == ("proposal", "openai", 10, None)
    assert entries_of(DebateState(id="e", problem="p")) == []
