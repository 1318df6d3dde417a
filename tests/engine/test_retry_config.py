"""``debate.retry`` configures the retry policy of every call; ``DebateEngine(retry=...)`` still wins."""

from __future__ import annotations

import asyncio
from pathlib import Path

from dialectic.core import events as ev
from dialectic.core.config import RetrySettings
from dialectic.core.errors import ProviderError, RateLimited
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.engine.roster import build_roster, retry_policy
from dialectic.llm.registry import ProviderPool
from dialectic.llm.retry import RetryPolicy
from dialectic.llm.scripted import ScriptedProvider
from dialectic.store import MemoryStore
from dialectic.testing.harness import make_config

TINY = {"maxAttempts": 3, "baseDelayMs": 1, "maxDelayMs": 2, "jitterMs": 0, "maxRetryAfterMs": 5}


def test_default_settings_are_the_default_policy() -> None:
    assert retry_policy(RetrySettings()) == RetryPolicy()


def test_configured_retry_reaches_every_client() -> None:
    config = make_config(agents=2, retry=TINY)
    pool = ProviderPool(overrides={"scripted": ScriptedProvider()})
    roster = build_roster(config, Path("."), pool)
    expected = RetryPolicy(max_attempts=3, base_delay_s=0.001, max_delay_s=0.002, jitter_s=0.0, max_retry_after_s=0.005)
    assert {agent.client.retry for agent in roster.agents} == {expected}
    assert roster.judge.client.retry == expected
    given = RetryPolicy(max_attempts=7)
    assert build_roster(config, Path("."), pool, given).judge.client.retry == given


def run_with(retry: dict[str, int], engine_retry: RetryPolicy | None) -> tuple[str, list[ev.CallRetrying]]:
    """One agent whose first two calls are rate limited with a 30 s Retry-After hint."""
    failures = [RateLimited("scripted: rate limited (429)", retry_after=30.0) for _ in range(2)]
    provider = ScriptedProvider(replies=failures)
    events: list[ev.Event] = []
    bus = ev.EventBus()
    bus.subscribe(events.append)
    engine = DebateEngine(MemoryStore(), ProviderPool(overrides={"scripted": provider}), bus, retry=engine_retry)
    request = DebateRequest(problem="p", config=make_config(agents=1, retry=retry), config_dir=Path("."))
    try:
        status = asyncio.run(engine.start(request)).status
    except ProviderError:  # the retries ran out: the engine saved the debate as failed
        status = "failed"
    return status, [e for e in events if isinstance(e, ev.CallRetrying)]


def test_configured_delays_are_used_and_the_server_hint_is_capped() -> None:
    status, retries = run_with(TINY, None)
    assert status == "completed"
    assert len(retries) == 2
    assert all(r.wait_s <= 0.005 for r in retries)  # Retry-After: 30 s, capped by maxRetryAfterMs


def test_max_attempts_one_means_no_retry() -> None:
    status, retries = run_with({**TINY, "maxAttempts": 1}, None)
    assert status == "failed"
    assert retries == []


def test_the_engine_argument_wins_over_the_configuration() -> None:
    status, retries = run_with(
        {**TINY, "maxAttempts": 1},
        RetryPolicy(max_attempts=3, base_delay_s=0.001, jitter_s=0.0, max_retry_after_s=0.001),
    )
    assert status == "completed"
    assert len(retries) == 2
