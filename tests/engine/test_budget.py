"""Budgets: a call whose worst case could pass ``debate.budget`` is not made; the debate stops, resumable with more.

The scripted model counts words as tokens and cuts a reply at ``maxTokens`` words, so every
request's worst case (its prompt's estimated tokens plus ``maxTokens``) really bounds it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from dialectic.core.config import BudgetSettings, ModelPrice, SystemConfig
from dialectic.core.errors import BudgetExceeded, ConfigError
from dialectic.core.events import EventBus
from dialectic.core.ledger import LedgerTotals, ledger_totals
from dialectic.core.pricing import PriceTable
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.engine.api import BudgetChange
from dialectic.engine.budget import DEFAULT_REPLY_TOKENS, BudgetGuard, estimate_input_tokens
from dialectic.llm.base import CompletionRequest, Message
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import ScriptedProvider, count_words
from dialectic.store.base import DebateStore
from dialectic.testing.harness import FAST_RETRY, Harness, make_config, scripted_judge

PRICED = {"scripted/m": {"input": 100.0, "output": 200.0}}
"""US dollars per million tokens: 0.0001 per input token, 0.0002 per output token."""


def budgeted(*, max_tokens: int | None = None, max_cost_usd: float | None = None, **debate: Any) -> SystemConfig:
    base = make_config(agents=2, rounds=2, **debate).to_json_dict()
    for agent in [*base["agents"], base["judge"]]:  # type: ignore[union-attr]
        agent["maxTokens"] = 40
    budget = {k: v for k, v in (("maxTokens", max_tokens), ("maxCostUsd", max_cost_usd)) if v is not None}
    base["debate"]["budget"] = budget  # type: ignore[index]
    base["pricing"] = PRICED
    return SystemConfig.model_validate(base)


def full_run_tokens(store: DebateStore) -> int:
    """What the same debate uses with no budget."""
    h = Harness(store=store, provider=ScriptedProvider(scripted_judge()))
    return ledger_totals(h.start(budgeted()).ledger).total_tokens


def start_expecting_budget_stop(h: Harness, config: SystemConfig) -> BudgetExceeded:
    with pytest.raises(BudgetExceeded) as raised:
        h.start(config)
    return raised.value


def test_a_token_budget_stops_the_debate_cleanly_before_a_call_that_could_pass_it(store: DebateStore) -> None:
    limit = full_run_tokens(store) // 2
    h = Harness(store=store, provider=ScriptedProvider(scripted_judge()))

    error = start_expecting_budget_stop(h, budgeted(max_tokens=limit))

    assert error.exit_code == 3 and error.debate_id is not None
    assert error.message.startswith("budget reached:") and f"{limit:,}-token budget" in error.message
    state = store.load(error.debate_id)
    assert (state.status, state.failure_reason) == ("failed", "budget")
    assert state.error == error.message
    totals = ledger_totals(state.ledger)
    assert 0 < totals.total_tokens <= limit
    assert totals.requests == len(h.provider.calls)  # every request made is in the ledger, none refused was made


def test_a_stopped_debate_resumes_with_a_larger_budget_and_counts_on(store: DebateStore) -> None:
    limit = full_run_tokens(store) // 2
    first = ScriptedProvider(scripted_judge())
    h = Harness(store=store, provider=first)
    error = start_expecting_budget_stop(h, budgeted(max_tokens=limit))
    assert error.debate_id is not None

    again = ScriptedProvider(scripted_judge())
    engine = h.engine(again)
    done = asyncio.run(engine.resume(error.debate_id, budget=BudgetChange(max_tokens=limit * 10)))

    assert (done.status, done.failure_reason) == ("completed", None)
    assert done.config["debate"]["budget"]["maxTokens"] == limit * 10
    assert ledger_totals(done.ledger).requests == len(first.calls) + len(again.calls)


def test_resuming_without_a_larger_budget_stops_again_at_once(store: DebateStore) -> None:
    limit = full_run_tokens(store) // 2
    h = Harness(store=store, provider=ScriptedProvider(scripted_judge()))
    error = start_expecting_budget_stop(h, budgeted(max_tokens=limit))
    assert error.debate_id is not None
    calls_before = len(h.provider.calls)

    with pytest.raises(BudgetExceeded):
        h.resume(error.debate_id)
    assert len(h.provider.calls) == calls_before
    assert store.load(error.debate_id).failure_reason == "budget"


def test_a_cost_budget_counts_dollars_at_the_configured_price(store: DebateStore) -> None:
    h = Harness(store=store, provider=ScriptedProvider(scripted_judge()))
    error = start_expecting_budget_stop(h, budgeted(max_cost_usd=0.05))

    assert "$0.05 budget" in error.message
    assert error.debate_id is not None
    state = store.load(error.debate_id)
    totals = ledger_totals(state.ledger)
    assert totals.cost_known and 0 < totals.cost_usd <= 0.05
    expected = sum(e.input_tokens * 100e-6 + e.output_tokens * 200e-6 for e in state.ledger)
    assert totals.cost_usd == pytest.approx(expected)


def test_a_cost_budget_on_a_model_without_a_price_is_refused_before_anything_is_made(store: DebateStore) -> None:
    data = budgeted(max_cost_usd=1.0).to_json_dict()
    data["pricing"] = {}
    for agent in data["agents"]:  # type: ignore[union-attr]
        agent["provider"] = "openai"
    config = SystemConfig.model_validate(data)
    provider = ScriptedProvider(name="openai")
    engine = DebateEngine(store, ProviderPool(overrides={"openai": provider}), EventBus(), retry=FAST_RETRY)

    with pytest.raises(ConfigError, match=r"openai/m has none"):
        asyncio.run(engine.start(DebateRequest(problem="P", config=config, config_dir=Path("."))))
    assert store.list() == [] and provider.calls == []


def test_without_max_tokens_each_request_is_sent_with_the_default_reply_limit_and_held_to_it(
    store: DebateStore,
) -> None:
    data = budgeted(max_tokens=6000).to_json_dict()
    for agent in [*data["agents"], data["judge"]]:  # type: ignore[union-attr]
        del agent["maxTokens"]
    h = Harness(store=store, provider=ScriptedProvider(scripted_judge()))
    error = start_expecting_budget_stop(h, SystemConfig.model_validate(data))

    assert "could use up to" in error.message and "6,000-token budget" in error.message
    assert error.debate_id is not None
    assert 0 < ledger_totals(store.load(error.debate_id).ledger).total_tokens <= 6000
    assert {c.max_tokens for c in h.provider.calls} == {DEFAULT_REPLY_TOKENS}


# -- the guard on its own -------------------------------------------------------------------------


def request(words: int, max_tokens: int | None) -> CompletionRequest:
    return CompletionRequest(messages=(Message("user", " ".join(["word"] * words)),), model="m", max_tokens=max_tokens)


def test_the_input_estimate_is_at_least_the_words_and_a_token_per_four_characters() -> None:
    prose = request(100, 10)
    assert estimate_input_tokens(prose) >= count_words(prose.messages[0].content)
    dense = CompletionRequest(messages=(Message("user", "x" * 400),), model="m")
    assert estimate_input_tokens(dense) >= 100


def test_a_request_that_fits_only_without_those_in_flight_waits_for_them() -> None:
    guard = BudgetGuard(BudgetSettings(max_tokens=300), PriceTable.of(), LedgerTotals())
    order: list[str] = []

    async def scenario() -> None:
        first = await guard.admit("the first call", "scripted", "m", request(50, 100))
        order.append("first admitted")

        async def second() -> None:
            await guard.admit("the second call", "scripted", "m", request(50, 150))
            order.append("second admitted")

        waiting = asyncio.create_task(second())
        await asyncio.sleep(0)
        order.append("first finishes")
        guard.settle(first, tokens=60, cost=0.0)
        await waiting

    asyncio.run(scenario())
    assert order == ["first admitted", "first finishes", "second admitted"]
    assert guard.spent_tokens == 60


def test_a_request_that_cannot_fit_is_refused_at_once() -> None:
    guard = BudgetGuard(
        BudgetSettings(max_cost_usd=0.01), PriceTable.of({"p/m": ModelPrice(input=100, output=100)}), LedgerTotals()
    )
    with pytest.raises(BudgetExceeded, match=r"could cost up to"):
        asyncio.run(guard.admit("the next call", "p", "m", request(10, 1000)))


def test_the_spend_starts_from_the_saved_ledger() -> None:
    spent = LedgerTotals(input_tokens=900, output_tokens=50)
    guard = BudgetGuard(BudgetSettings(max_tokens=1000), PriceTable.of(), spent)
    with pytest.raises(BudgetExceeded, match=r"950 of the debate's 1,000-token budget"):
        asyncio.run(guard.admit("the next call", "scripted", "m", request(10, 100)))
