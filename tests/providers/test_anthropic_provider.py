"""AnthropicProvider over its own HTTP wire against the fake server on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dialectic.core.errors import (
    ContextWindowExceeded,
    InvalidResponse,
    ModelNotFound,
    ProviderAuthError,
    ProviderTimeout,
    ProviderUnavailable,
    RateLimited,
)
from dialectic.llm.anthropic_provider import DEFAULT_MAX_TOKENS, AnthropicProvider, tool_name
from dialectic.llm.base import Completion, CompletionRequest, Delta, JsonSchema, LLMProvider, Message
from dialectic.llm.retry import RetryPolicy, with_retries
from dialectic.llm.scripted import example_for_schema
from dialectic.testing.fake_server import FakeLLMServer, Fault

SCHEMA = {
    "type": "object",
    "properties": {"description": {"type": "string"}, "tradeoffs": {"type": "array", "items": {"type": "string"}}},
    "required": ["description"],
}


def ask(text: str = "Design a cache", **changes: Any) -> CompletionRequest:
    request = CompletionRequest(
        messages=(Message("system", "You are a judge."), Message("user", text)), model="claude-test", max_tokens=300
    )
    return request.with_changes(**changes)


async def complete(provider: AnthropicProvider, request: CompletionRequest | None = None) -> Completion:
    return await provider.complete(request or ask())


def test_is_an_llm_provider() -> None:
    provider = AnthropicProvider(api_key="", base_url="http://127.0.0.1:9")
    assert isinstance(provider, LLMProvider) and provider.name == "anthropic"


def test_happy_path(server: FakeLLMServer, run_anthropic: Any) -> None:
    completion = run_anthropic(complete)
    assert completion.text.startswith("[reply] Scripted answer")
    assert completion.model == "claude-test" and completion.finish_reason == "stop"
    assert completion.usage.input_tokens == 7 and completion.usage.output_tokens > 0
    assert completion.usage.total_tokens == completion.usage.input_tokens + completion.usage.output_tokens
    assert server.paths() == ["/v1/messages"]
    body = server.requests[0].body
    assert body["system"] == "You are a judge." and body["max_tokens"] == 300
    assert body["messages"] == [{"role": "user", "content": "Design a cache"}]
    assert "tools" not in body and "temperature" not in body
    assert server.requests[0].headers["authorization"] == "Bearer test-key"  # as the SDK 2.x sends it


def test_max_tokens_defaults_when_unset(server: FakeLLMServer, run_anthropic: Any) -> None:
    run_anthropic(lambda provider: complete(provider, ask(max_tokens=None)))
    assert server.requests[0].body["max_tokens"] == DEFAULT_MAX_TOKENS


def test_structured_output_uses_a_forced_tool(server: FakeLLMServer, run_anthropic: Any) -> None:
    completion = run_anthropic(lambda provider: complete(provider, ask(json_schema=JsonSchema("solution", SCHEMA))))
    body = server.requests[0].body
    assert body["tools"][0]["name"] == "solution" and body["tools"][0]["input_schema"] == SCHEMA
    assert body["tool_choice"] == {"type": "tool", "name": "solution"}
    assert completion.structured == example_for_schema(SCHEMA, name="solution")
    assert json.loads(completion.text) == completion.structured
    assert completion.finish_reason == "stop"


def test_tool_names_are_sanitised() -> None:
    assert tool_name("final solution.v2") == "final_solution_v2"
    assert tool_name("") == "output"
    assert len(tool_name("x" * 100)) == 64


def test_streaming_text_and_final_usage(server: FakeLLMServer, run_anthropic: Any) -> None:
    async def scenario(provider: AnthropicProvider) -> tuple[list[Delta], Completion]:
        return [delta async for delta in provider.stream(ask())], await provider.complete(ask())

    deltas, completion = run_anthropic(scenario)
    assert len(deltas) > 2 and "".join(d.text for d in deltas) == completion.text
    final = deltas[-1]
    assert final.finish_reason == "stop" and final.model == "claude-test" and final.usage == completion.usage
    assert server.requests[0].body["stream"] is True


def test_streaming_structured_output_yields_the_json(run_anthropic: Any) -> None:
    async def scenario(provider: AnthropicProvider) -> list[Delta]:
        return [delta async for delta in provider.stream(ask(json_schema=JsonSchema("solution", SCHEMA)))]

    deltas = run_anthropic(scenario)
    assert json.loads("".join(d.text for d in deltas)) == example_for_schema(SCHEMA, name="solution")


def test_truncation_maps_to_length(server: FakeLLMServer, run_anthropic: Any) -> None:
    server.inject(Fault("truncate"), times=2)

    async def scenario(provider: AnthropicProvider) -> tuple[Completion, list[Delta]]:
        return await provider.complete(ask()), [delta async for delta in provider.stream(ask())]

    completion, deltas = run_anthropic(scenario)
    assert completion.finish_reason == "length" and completion.text
    assert deltas[-1].finish_reason == "length"


def test_overloaded_is_unavailable_and_retried(server: FakeLLMServer, run_anthropic: Any) -> None:
    server.inject(Fault("status", status=529))
    with pytest.raises(ProviderUnavailable) as raised:
        run_anthropic(complete)
    assert str(raised.value) == "anthropic: overloaded (529) on model claude-test"

    server.inject(Fault("status", status=529))
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    async def scenario(provider: AnthropicProvider) -> Completion:
        return await with_retries(lambda: provider.complete(ask()), RetryPolicy(), sleep=record)

    assert run_anthropic(scenario).attempts == 2 and len(waits) == 1


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (Fault("status", status=429, retry_after=3), RateLimited),
        (Fault("status", status=401), ProviderAuthError),
        (
            Fault(
                "status",
                status=404,
                body='{"type": "error", "error": {"type": "not_found_error", "message": "model: claude-test"}}',
            ),
            ModelNotFound,
        ),
        (
            Fault(
                "status",
                status=400,
                body='{"type": "error", "error": {"type": "invalid_request_error", '
                '"message": "prompt is too long: 300000 tokens > 200000 maximum"}}',
            ),
            ContextWindowExceeded,
        ),
        (Fault("malformed"), InvalidResponse),
        (Fault("disconnect"), ProviderUnavailable),
    ],
    ids=["429", "401", "404-model", "400-context", "malformed", "disconnect"],
)
def test_error_translation(server: FakeLLMServer, run_anthropic: Any, fault: Fault, expected: type) -> None:
    server.inject(fault)
    with pytest.raises(expected) as raised:
        run_anthropic(complete)
    assert str(raised.value).startswith("anthropic: ") and "\n" not in str(raised.value)
    if isinstance(raised.value, RateLimited):
        assert raised.value.retry_after == 3.0


def test_per_call_timeout(server: FakeLLMServer, run_anthropic: Any) -> None:
    server.inject(Fault("delay", delay_s=1.0))
    with pytest.raises(ProviderTimeout):
        run_anthropic(lambda provider: complete(provider, ask(timeout_s=0.2)))


def test_network_errors_met_while_a_stream_is_read_are_translated() -> None:
    import httpx2

    from dialectic.llm.anthropic_provider import translate_error

    timeout = translate_error(httpx2.ReadTimeout("read timed out"), model="claude-test", timeout_s=7.0)
    assert isinstance(timeout, ProviderTimeout) and "sent nothing for 7 s" in str(timeout)
    dropped = translate_error(httpx2.RemoteProtocolError("peer closed connection"), model="claude-test")
    assert isinstance(dropped, ProviderUnavailable) and dropped.retryable
