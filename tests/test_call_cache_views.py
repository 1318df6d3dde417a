"""Cache hits and misses as the ledger counts them, and as the report and ``--verbose`` show them."""

from __future__ import annotations

from dialectic.cli.verbose import summary_lines
from dialectic.core.domain import Contribution, DebateRound, DebateState, LedgerEntry, Participant
from dialectic.core.ledger import cache_text, ledger_totals, usage_text
from dialectic.reporting.usage import reads_cache, totals_blocks


def entry(agent: str, *, cached: int = 0, requests: int = 0, tokens: int = 0) -> LedgerEntry:
    return LedgerEntry(
        kind="proposal",
        agent_id=agent,
        round_number=1,
        provider="openai",
        model="m",
        cached=cached,
        requests=requests,
        attempts=requests,
        input_tokens=tokens,
        cost_usd=0.0 if not requests else 0.001,
    )


def state(*entries: LedgerEntry, cache: str = "off") -> DebateState:
    contributions = [
        Contribution(agent_id=e.agent_id, agent_role="architect", type="proposal", content=f"{e.agent_id} says")
        for e in entries
    ]
    return DebateState(
        id="deb-2",
        problem="p",
        status="completed",
        agents=[
            Participant(id=e.agent_id, name=e.agent_id.upper(), role="architect", provider="openai", model="m")
            for e in entries
        ],
        rounds=[DebateRound(round_number=1, contributions=contributions)],
        ledger=list(entries),
        config={"debate": {"cache": cache}},
        replay_of="deb-1",
    )


def test_cached_requests_are_counted_apart_from_those_sent() -> None:
    totals = ledger_totals([entry("a", cached=2), entry("b", requests=1, tokens=10)])

    assert (totals.calls, totals.cached, totals.requests, totals.input_tokens) == (2, 2, 1, 10)
    assert totals.to_json_dict()["cached"] == 2
    assert cache_text(totals) == "2 hits · 1 miss"
    assert usage_text(totals).startswith("2 calls (2 from the call cache) · 10 tokens")


def test_the_report_shows_hits_and_misses_when_the_cache_was_read() -> None:
    read = "\n".join(totals_blocks(state(entry("a", cached=1), entry("b", requests=1), cache="read")))
    assert "- **Call cache:** 1 hit · 1 miss" in read

    unread = state(entry("a", requests=1))
    assert not reads_cache(unread)
    assert "Call cache" not in "\n".join(totals_blocks(unread))


def test_verbose_marks_a_call_answered_from_the_cache() -> None:
    lines = summary_lines(state(entry("a", cached=1), entry("b", requests=1)))

    assert lines[0] == "Debate deb-2 (completed), a replay of deb-1"
    marked = [line for line in lines if "from the call cache" in line and "says" in line]
    assert len(marked) == 1 and "A:" in marked[0]
    assert "Call cache: 1 hit · 1 miss" in lines
