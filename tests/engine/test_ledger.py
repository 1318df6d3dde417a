"""One ledger of every call a debate makes, saved with the results it paid for, and the same as the provider saw."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from dialectic.bench.metering import Meter, MeteredProvider
from dialectic.core.changes import CallRecorded, ContributionRecorded, SolutionRecorded, SummaryRecorded
from dialectic.core.config import SystemConfig
from dialectic.core.domain import DebateState
from dialectic.core.events import EventBus
from dialectic.core.ledger import ledger_totals
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import ScriptedProvider, ScriptedReply
from dialectic.store.base import DebateStore
from dialectic.testing.harness import FAST_RETRY, make_config, scripted_judge

SUMMARIZE_EARLY = {"enabled": True, "threshold": 10, "maxLength": 80}


def metered_run(
    store: DebateStore, config: SystemConfig, provider: ScriptedProvider, *, clarify: bool = False
) -> tuple[DebateState, Meter]:
    """Run a debate to its end (answering every question), counting at the provider."""
    meter = Meter()
    pool = ProviderPool(overrides={"scripted": MeteredProvider(provider, meter)})
    engine = DebateEngine(store, pool, EventBus(), retry=FAST_RETRY)
    request = DebateRequest(problem="Design a rate limiter", config=config, config_dir=Path("."), clarify=clarify)
    state = asyncio.run(engine.start(request))
    while state.status == "suspended":
        answers = {q.id: "yes" for q in state.pending_questions()}
        state = asyncio.run(engine.resume(state.id, answers))
    return state, meter


def every_kind() -> SystemConfig:
    return make_config(
        agents=3,
        rounds=2,
        personas="auto",
        assessment="on",
        verdict="on",
        summarization=SUMMARIZE_EARLY,
        clarificationsMaxIterations=1,
    )


def test_every_call_of_a_debate_is_one_ledger_entry_and_the_totals_are_the_providers(store: DebateStore) -> None:
    state, meter = metered_run(store, every_kind(), ScriptedProvider(scripted_judge()), clarify=True)

    assert state.status == "completed"
    kinds = Counter(e.kind for e in state.ledger)
    assert kinds == {
        "clarification": 3,
        "personas": 1,
        "proposal": 3,
        "critique": 12,
        "refinement": 6,
        "summary": 3,
        "assessment": 2,
        "judge_summary": 1,
        "synthesis": 1,
        "verdict": 1,
    }
    totals = ledger_totals(state.ledger)
    assert (totals.requests, totals.input_tokens, totals.output_tokens) == (
        meter.calls,
        meter.input_tokens,
        meter.output_tokens,
    )
    assert totals.cost_known and totals.cost_usd == 0  # scripted costs nothing
    contributions = [c for c in state.all_contributions() if not c.metadata.carried_over]
    for c in contributions:
        key = (c.type, c.agent_id, c.target_agent_id)
        entry = next(e for e in state.ledger if (e.kind, e.agent_id, e.target_agent_id) == key)
        assert entry.provider == "scripted" and entry.model == "m" and entry.status == "ok"


def test_votes_are_in_the_ledger(store: DebateStore) -> None:
    config = make_config(agents=3, rounds=1, format="vote")
    state, meter = metered_run(store, config, ScriptedProvider(scripted_judge()))
    assert Counter(e.kind for e in state.ledger)["vote"] == 3
    assert ledger_totals(state.ledger).requests == meter.calls


def test_an_entry_is_saved_in_the_same_append_as_the_result_it_paid_for(store: DebateStore) -> None:
    state, _ = metered_run(store, make_config(agents=2, rounds=2, summarization=SUMMARIZE_EARLY), ScriptedProvider())
    log = store.changes(state.id)
    for index, change in enumerate(log):
        if not isinstance(change, CallRecorded):
            continue
        entry = change.entry
        before = log[:index]
        kept = [c for c in reversed(before) if not isinstance(c, CallRecorded)][0]
        if entry.kind in ("proposal", "critique", "refinement"):
            assert isinstance(kept, ContributionRecorded)
            assert (kept.contribution.type, kept.contribution.agent_id) == (entry.kind, entry.agent_id)
        elif entry.kind == "summary":
            assert isinstance(kept, SummaryRecorded) and kept.summary.agent_id == entry.agent_id
        elif entry.kind == "synthesis":
            assert any(isinstance(c, SolutionRecorded) for c in before[-3:])
        assert kept.at <= change.at


def test_retries_and_continuations_are_attempts_of_one_call(store: DebateStore) -> None:
    from dialectic.core.errors import ProviderUnavailable
    from dialectic.llm.base import FINISH_LENGTH
    from dialectic.llm.scripted import default_reply

    script: list[Any] = [
        ProviderUnavailable("scripted: server error (500)"),  # retried by the client
        ScriptedReply(text="a reply cut off", finish_reason=FINISH_LENGTH),  # then continued
    ]

    def respond(request: Any) -> Any:
        if request.tag.startswith("proposal") and "architect" in request.tag and script:
            return script.pop(0)
        return default_reply(request)

    state, meter = metered_run(store, make_config(agents=2, rounds=1), ScriptedProvider(respond))
    architect = next(e for e in state.ledger if e.kind == "proposal" and e.agent_id == "agent-architect")
    assert (architect.attempts, architect.requests) == (3, 2)
    others = [e for e in state.ledger if e is not architect]
    assert all((e.attempts, e.requests) == (1, 1) for e in others)
    assert ledger_totals(state.ledger).requests == meter.calls


def test_work_ahead_of_an_early_stop_is_in_the_ledger_as_discarded(store: DebateStore) -> None:
    config = make_config(agents=3, rounds=3, terminationCondition={"type": "judge"}, summarization=SUMMARIZE_EARLY)
    state, meter = metered_run(store, config, ScriptedProvider(scripted_judge(should_continue=False)))

    assert state.stopped_early is not None and state.stopped_early.round_number == 1
    thrown = [e for e in state.ledger if e.discarded]
    assert thrown and all(e.round_number == 2 for e in thrown)
    assert len([e for e in thrown if e.status == "ok"]) == sum(d.calls for d in state.discarded)
    assert sum(e.input_tokens for e in thrown if e.status == "ok") == sum(d.input_tokens for d in state.discarded)
    assert ledger_totals(state.ledger).requests == meter.calls


def test_a_failed_call_is_in_the_ledger_with_its_attempts(store: DebateStore) -> None:
    from dialectic.core.errors import ProviderUnavailable

    def respond(request: Any) -> Any:
        if request.tag.startswith("critique"):
            return ProviderUnavailable("scripted: server error (500)")
        return scripted_judge()(request)

    state, meter = metered_run(store, make_config(agents=2, rounds=1), ScriptedProvider(respond))
    failed = [e for e in state.ledger if e.status == "failed"]
    assert failed and all(e.kind == "critique" and e.requests == 0 and e.attempts >= 2 for e in failed)
    assert ledger_totals(state.ledger).requests == meter.calls


@pytest.mark.parametrize("provider_name", ["openai"])
def test_a_model_without_a_price_costs_unknown_never_zero(store: DebateStore, provider_name: str) -> None:
    config = SystemConfig.model_validate(
        {
            **make_config(agents=2, rounds=1).to_json_dict(),
            "agents": [
                {"id": f"agent-{r}", "name": r, "role": r, "provider": provider_name, "model": "no-such-model"}
                for r in ("architect", "kiss")
            ],
            "judge": {"id": "judge", "name": "Judge", "role": "generalist", "provider": provider_name, "model": "x"},
        }
    )
    pool = ProviderPool(overrides={provider_name: ScriptedProvider(name=provider_name)})
    engine = DebateEngine(store, pool, EventBus(), retry=FAST_RETRY)
    state = asyncio.run(engine.start(DebateRequest(problem="P", config=config, config_dir=Path("."))))
    assert state.ledger and all(e.cost_usd is None for e in state.ledger)
    totals = ledger_totals(state.ledger)
    assert not totals.cost_known and totals.unpriced_calls == totals.calls


class CachingProvider(ScriptedProvider):
    """The scripted model, as a provider whose prompt cache served half of every prompt."""

    async def complete(self, request: Any) -> Any:
        from dataclasses import replace

        completion = await super().complete(request)
        usage = completion.usage.model_copy(update={"cached_input_tokens": completion.usage.input_tokens // 2})
        return replace(completion, usage=usage)


def test_cached_input_tokens_are_counted_and_cost_the_cached_price(store: DebateStore) -> None:
    data = make_config(agents=2, rounds=1).to_json_dict()
    data["pricing"] = {"scripted/m": {"input": 10.0, "output": 20.0, "cachedInput": 1.0}}
    state, _ = metered_run(store, SystemConfig.model_validate(data), CachingProvider())
    for e in state.ledger:
        assert e.cached_input_tokens == e.input_tokens // 2
        hits = e.cached_input_tokens
        expected = ((e.input_tokens - hits) * 10.0 + hits * 1.0 + e.output_tokens * 20.0) / 1_000_000
        assert e.cost_usd == pytest.approx(expected)
    assert ledger_totals(state.ledger).cached_input_tokens == sum(e.input_tokens // 2 for e in state.ledger)


class BrokenWatcher:
    """A watcher (a tracer, say) with a bug in every method."""

    def call_started(self, info: Any) -> Any:
        return self

    def request_started(self, provider: str, request: Any) -> None:
        raise RuntimeError("watcher bug")

    def request_finished(self, request: Any, completion: Any, error: Any) -> None:
        raise RuntimeError("watcher bug")

    def finished(self, entry: Any, error: Any) -> None:
        raise RuntimeError("watcher bug")


def test_a_failing_watcher_never_stops_a_debate_nor_its_ledger(store: DebateStore) -> None:
    provider = ScriptedProvider()
    engine = DebateEngine(
        store, ProviderPool(overrides={"scripted": provider}), EventBus(), retry=FAST_RETRY, watchers=[BrokenWatcher()]
    )
    config = make_config(agents=2, rounds=1)
    state = asyncio.run(engine.start(DebateRequest(problem="P", config=config, config_dir=Path("."))))
    assert state.status == "completed"
    assert ledger_totals(state.ledger).requests == len(provider.calls)
