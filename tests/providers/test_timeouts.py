"""Per-call timeouts: explicit httpx timeouts, inactivity (not length) on streams, and a bounded worst case."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from dialectic.core.errors import (
    EXIT_PROVIDER_ERROR,
    DebateTimeoutError,
    ProviderError,
    ProviderTimeout,
    RetriesExhausted,
)
from dialectic.llm.anthropic_provider import AnthropicProvider
from dialectic.llm.base import CompletionRequest, Delta, LLMProvider, Message
from dialectic.llm.openai_provider import OpenAIProvider
from dialectic.llm.retry import RetryPolicy, with_retries
from dialectic.llm.scripted import ScriptedReply
from dialectic.llm.timeouts import CONNECT_TIMEOUT_S, DEFAULT_CALL_TIMEOUT_S, http_timeout_parts
from dialectic.testing.fake_server import FakeLLMServer, Fault

WORDS = 40
LONG_REPLY = " ".join(f"word{i}" for i in range(WORDS))


def ask(**changes: Any) -> CompletionRequest:
    return CompletionRequest(messages=(Message("user", "Write forty words."),), model="m").with_changes(**changes)


def test_http_timeout_parts_make_read_the_per_call_timeout_and_cap_connect() -> None:
    assert http_timeout_parts(None) == {
        "connect": CONNECT_TIMEOUT_S,
        "read": DEFAULT_CALL_TIMEOUT_S,
        "write": DEFAULT_CALL_TIMEOUT_S,
        "pool": DEFAULT_CALL_TIMEOUT_S,
    }
    assert http_timeout_parts(3.0) == {"connect": 3.0, "read": 3.0, "write": 3.0, "pool": 3.0}
    assert DEFAULT_CALL_TIMEOUT_S == 120.0


def test_the_wire_clients_get_an_explicit_httpx_timeout() -> None:
    async def built() -> tuple[object, object, object]:
        default = OpenAIProvider(api_key="k", base_url="http://127.0.0.1:9/v1")
        configured = OpenAIProvider(api_key="k", base_url="http://127.0.0.1:9/v1", timeout_s=45.0)
        claude = AnthropicProvider(api_key="k", base_url="http://127.0.0.1:9", timeout_s=45.0)
        try:
            return default._client.timeout, configured._client.timeout, claude._client.timeout
        finally:
            for provider in (default, configured, claude):
                await provider.aclose()

    default, configured, claude = asyncio.run(built())
    assert isinstance(default, httpx2.Timeout) and default.read == DEFAULT_CALL_TIMEOUT_S
    assert default.connect == CONNECT_TIMEOUT_S
    assert isinstance(configured, httpx2.Timeout) and configured.read == 45.0 and configured.pool == 45.0
    assert isinstance(claude, httpx2.Timeout) and claude.read == 45.0 and claude.connect == CONNECT_TIMEOUT_S


Make = Callable[[FakeLLMServer], LLMProvider]
PROVIDERS: dict[str, Make] = {
    "openai": lambda fake: OpenAIProvider(api_key="k", base_url=fake.openai_base_url),
    "anthropic": lambda fake: AnthropicProvider(api_key="k", base_url=fake.anthropic_base_url),
}


def stream_through(
    make: Make, fake: FakeLLMServer, request: CompletionRequest
) -> tuple[list[Delta], BaseException | None]:
    """Every delta received, and the error that ended the stream (None if it finished)."""

    async def scenario() -> tuple[list[Delta], BaseException | None]:
        provider = make(fake)
        received: list[Delta] = []
        try:
            async for delta in provider.stream(request):
                received.append(delta)
        except ProviderTimeout as error:
            return received, error
        finally:
            await provider.aclose()
        return received, None

    return asyncio.run(scenario())


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
def test_a_stream_slower_in_total_than_its_timeout_completes_while_chunks_keep_coming(kind: str) -> None:
    pause, timeout = 0.05, 1.0
    assert pause * WORDS > timeout, "the stream as a whole must take longer than the timeout"
    with FakeLLMServer(lambda request: ScriptedReply(text=LONG_REPLY)) as fake:
        fake.inject(Fault("delay", chunk_delay_s=pause))
        received, error = stream_through(PROVIDERS[kind], fake, ask(timeout_s=timeout))
    assert error is None
    assert "".join(d.text for d in received) == LONG_REPLY
    assert received[-1].finish_reason == "stop"


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
def test_a_stream_that_stalls_half_way_times_out_on_inactivity(kind: str) -> None:
    with FakeLLMServer(lambda request: ScriptedReply(text=LONG_REPLY)) as fake:
        fake.inject(Fault("delay", chunk_delay_s=30.0))
        received, error = stream_through(PROVIDERS[kind], fake, ask(timeout_s=0.3))
    assert isinstance(error, ProviderTimeout)
    assert "sent nothing for 0.3 s" in str(error)
    assert all(d.finish_reason is None for d in received)  # it never finished


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
def test_a_silent_endpoint_times_out_before_the_first_chunk(kind: str) -> None:
    with FakeLLMServer() as fake:
        fake.inject(Fault("stall", delay_s=30.0))
        received, error = stream_through(PROVIDERS[kind], fake, ask(timeout_s=0.3))
    assert isinstance(error, ProviderTimeout) and received == []


class VirtualClock:
    """Time that passes only when a fake call 'waits' for its timeout or the retry loop sleeps."""

    def __init__(self) -> None:
        self.now = 0.0

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_silent_endpoint_fails_after_two_timeouts_within_a_few_minutes() -> None:
    clock = VirtualClock()
    calls: list[float] = []

    async def silent_call() -> str:
        calls.append(clock.now)
        clock.now += DEFAULT_CALL_TIMEOUT_S
        raise ProviderTimeout("openai: model m sent nothing for 120 s")

    policy = RetryPolicy()
    with pytest.raises(RetriesExhausted) as raised:
        asyncio.run(with_retries(silent_call, policy, sleep=clock.sleep))
    assert len(calls) == policy.max_timeout_attempts == 2
    assert raised.value.attempts == 2 and "gave up after 2 attempts" in str(raised.value)
    worst_case = 2 * DEFAULT_CALL_TIMEOUT_S + policy.base_delay_s + policy.jitter_s
    assert clock.now <= worst_case < 4.5 * 60


def test_a_round_past_timeout_per_round_is_a_provider_failure_that_says_what_to_change() -> None:
    error = DebateTimeoutError("round 1 took longer than timeoutPerRound (600000 ms)")
    assert isinstance(error, ProviderError) and error.exit_code == EXIT_PROVIDER_ERROR
    assert not error.retryable
    assert "raise debate.timeoutPerRound" in error.message and "check their endpoints" in error.message
