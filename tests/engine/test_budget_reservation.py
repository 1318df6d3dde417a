"""A budget is a ceiling even for participants without ``maxTokens``: issue 21, item 8 ("A cap that overshoots").

Under a budget every request is sent with a reply limit (the participant's ``maxTokens``, else
:data:`~dialectic.engine.budget.DEFAULT_REPLY_TOKENS`), and its worst case — its prompt's estimate
plus that limit — is held back before it is sent. The scripted model counts words as tokens and
cuts a reply at the request's limit, so here the worst case really bounds each request: whatever
the replies' length, the debate's spend never passes its cap.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dialectic.core.config import BudgetSettings, ModelPrice, SystemConfig
from dialectic.core.domain import DebateState
from dialectic.core.errors import BudgetExceeded
from dialectic.core.ledger import LedgerTotals, ledger_totals
from dialectic.core.pricing import PriceTable
from dialectic.engine.budget import DEFAULT_REPLY_TOKENS, BudgetGuard, with_reply_limits
from dialectic.engine.calls import CallInfo, CallScope
from dialectic.llm.base import Completion, CompletionRequest, Message, ToolCall
from dialectic.llm.client import LLMClient
from dialectic.llm.observe import observing
from dialectic.llm.retry import RetryPolicy
from dialectic.llm.scripted import Script, ScriptedProvider, ScriptedReply
from dialectic.store import MemoryStore
from dialectic.testing.harness import Harness, make_config, scripted_judge

PRICED = {"scripted/m": {"input": 100.0, "output": 200.0}}
"""US dollars per million tokens: 0.0001 per input token, 0.0002 per output token."""
LONG_WORDS = 3 * DEFAULT_REPLY_TOKENS
"""Words of every free-text reply: far past the default limit, as a model that rambles on."""
LONG = " ".join(f"w{i}" for i in range(LONG_WORDS))


def long_winded(request: CompletionRequest) -> Script:
    """Structured replies as the scripted judge gives them; every free-text reply :data:`LONG`.

    With tools offered and none used yet, it first asks to read a file (a tool loop of two steps)."""
    if request.tools and not any(m.role == "tool" for m in request.messages):
        return ScriptedReply(tool_calls=(ToolCall("c1", "file_read", {"path": "notes.md"}),))
    if request.json_schema is not None:
        return scripted_judge()(request)
    return LONG


def unlimited(**budget: Any) -> SystemConfig:
    """Two agents and a judge, none with ``maxTokens``, over two rounds, with ``budget`` and a price."""
    data = make_config(agents=2, rounds=2).to_json_dict()
    data["debate"]["budget"] = budget  # type: ignore[index]
    data["pricing"] = PRICED
    config = SystemConfig.model_validate(data)
    assert all(p.max_tokens is None for p in [*config.agents, config.judge])
    return config


def run_to_the_end(config: SystemConfig, provider: ScriptedProvider | None = None) -> tuple[DebateState, Harness]:
    """The debate run until it completes or its budget stops it, and the harness that ran it."""
    store = MemoryStore()
    h = Harness(store=store, provider=provider or ScriptedProvider(long_winded))
    try:
        return h.start(config), h
    except BudgetExceeded as stopped:
        assert stopped.debate_id is not None and stopped.message.startswith("budget reached:")
        state = store.load(stopped.debate_id)
        assert (state.status, state.failure_reason) == ("failed", "budget")
        return state, h


def sent_limits(provider: ScriptedProvider) -> set[int | None]:
    """The reply limits of the free-text requests the model received."""
    return {c.max_tokens for c in provider.calls if c.json_schema is None}


def assert_every_request_counted(state: DebateState, provider: ScriptedProvider) -> LedgerTotals:
    assert all(c.max_tokens is not None for c in provider.calls)  # structured requests included
    totals = ledger_totals(state.ledger)
    assert totals.requests == len(provider.calls)  # nothing the model answered is missing from the spend
    return totals


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cap=st.integers(min_value=DEFAULT_REPLY_TOKENS, max_value=150_000))
def test_a_token_budget_is_never_passed_by_agents_without_max_tokens(cap: int) -> None:
    state, h = run_to_the_end(unlimited(maxTokens=cap))

    totals = assert_every_request_counted(state, h.provider)
    assert totals.total_tokens <= cap
    assert sent_limits(h.provider) <= {DEFAULT_REPLY_TOKENS}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cents=st.integers(min_value=50, max_value=3_000))
def test_a_cost_budget_is_never_passed_by_agents_without_max_tokens(cents: int) -> None:
    cap = cents / 100
    state, h = run_to_the_end(unlimited(maxCostUsd=cap))

    totals = assert_every_request_counted(state, h.provider)
    assert totals.cost_known and totals.cost_usd <= cap
    assert sent_limits(h.provider) <= {DEFAULT_REPLY_TOKENS}


def test_the_issue_s_run_stops_under_its_cap_where_it_used_to_pass_it() -> None:
    """The shape of the report: a budget a few calls deep, long replies, no ``maxTokens``."""
    cap = 2.0  # about five of these calls
    state, h = run_to_the_end(unlimited(maxCostUsd=cap))

    assert state.failure_reason == "budget"
    assert 0 < ledger_totals(state.ledger).cost_usd <= cap
    free_text = [c for c in h.provider.calls if c.json_schema is None]
    assert free_text and all(c.max_tokens == DEFAULT_REPLY_TOKENS for c in free_text)


def test_each_step_of_a_tool_loop_carries_the_limit_and_is_held_against_the_budget(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("Use Redis with a token bucket.\n", encoding="utf-8")
    config = unlimited(maxTokens=40_000)
    context = config.debate.context.model_copy(update={"dir": str(tmp_path), "mode": "tools"})
    config = config.model_copy(update={"debate": config.debate.model_copy(update={"context": context})})

    state, h = run_to_the_end(config)

    tool_steps = [c for c in h.provider.calls if c.tools]
    assert tool_steps, "the agents read through tools"
    assert all(c.max_tokens == DEFAULT_REPLY_TOKENS for c in tool_steps)
    assert sent_limits(h.provider) == {DEFAULT_REPLY_TOKENS}
    assert assert_every_request_counted(state, h.provider).total_tokens <= 40_000


def test_a_participant_s_own_max_tokens_is_kept() -> None:
    data = unlimited(maxTokens=1_000_000).to_json_dict()
    data["agents"][0]["maxTokens"] = 300  # type: ignore[index]
    state, h = run_to_the_end(SystemConfig.model_validate(data))

    assert state.status == "completed"
    assert sent_limits(h.provider) == {300, DEFAULT_REPLY_TOKENS}


def test_without_a_budget_no_limit_is_added() -> None:
    state, h = run_to_the_end(make_config(agents=2, rounds=1))

    assert state.status == "completed"
    assert {c.max_tokens for c in h.provider.calls} == {None}


def test_the_default_limit_leaves_half_of_a_configured_context_window_to_the_prompt() -> None:
    data = unlimited(maxTokens=10_000).to_json_dict()
    data["agents"][0]["contextWindow"] = 1_000  # type: ignore[index]
    limited = with_reply_limits(SystemConfig.model_validate(data))

    assert [a.max_tokens for a in limited.agents] == [500, DEFAULT_REPLY_TOKENS]
    assert limited.judge.max_tokens == DEFAULT_REPLY_TOKENS
    assert with_reply_limits(make_config()) == make_config()  # no budget: unchanged


# -- the guard on its own -------------------------------------------------------------------------


def request(words: int, max_tokens: int | None) -> CompletionRequest:
    return CompletionRequest(messages=(Message("user", " ".join(["word"] * words)),), model="m", max_tokens=max_tokens)


def test_a_request_without_a_limit_is_held_to_the_default_reply() -> None:
    guard = BudgetGuard(BudgetSettings(max_tokens=DEFAULT_REPLY_TOKENS + 5), PriceTable.of(), LedgerTotals())
    with pytest.raises(BudgetExceeded, match=r"could use up to 2,065 tokens and 0 of"):
        asyncio.run(guard.admit("the next call", "scripted", "m", request(10, None)))


def test_a_request_that_fails_or_is_cancelled_gives_back_what_it_held() -> None:
    """Through the client, as the engine sends: a failed and a cancelled request hold nothing after."""
    budget = BudgetSettings(max_cost_usd=1.0)
    prices = PriceTable.of({"p/m": ModelPrice(input=0, output=400)})  # 2,048 output tokens: $0.82 of $1
    guard = BudgetGuard(budget, prices, LedgerTotals())
    info = CallInfo("d", "proposal", "proposing", "a", "A", "p", "m")
    started = asyncio.Event()

    class Hanging(ScriptedProvider):
        async def complete(self, request: CompletionRequest) -> Completion:
            self.calls.append(request)
            started.set()
            await asyncio.Event().wait()  # never answers
            raise AssertionError("unreachable")

    async def scenario() -> None:
        once = RetryPolicy(max_attempts=1)
        scope = CallScope(info, guard=guard, prices=prices, watches=[])
        failing = LLMClient(ScriptedProvider(replies=[RuntimeError("boom")], name="p"), retry=once)
        with observing(scope), pytest.raises(RuntimeError):
            await failing.complete(request(10, DEFAULT_REPLY_TOKENS))

        hanging = LLMClient(Hanging(name="p"), retry=once)
        with observing(scope):
            task = asyncio.create_task(hanging.complete(request(10, DEFAULT_REPLY_TOKENS)))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

        # Nothing is held any more: a request as large as the first two is admitted at once,
        # without waiting for a request in flight (one that held on would keep it waiting).
        admitting = asyncio.create_task(guard.admit("the next call", "p", "m", request(10, DEFAULT_REPLY_TOKENS)))
        await asyncio.sleep(0)  # one turn of the loop
        assert admitting.done()
        guard.release(admitting.result())

    asyncio.run(scenario())
    assert (guard.spent_tokens, guard.spent_cost) == (0, 0.0)
