"""OpenAIProvider over its own HTTP wire against the fake server on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from dialectic.core.errors import (
    ContextWindowExceeded,
    InvalidResponse,
    ModelNotFound,
    ProviderAuthError,
    ProviderTimeout,
    ProviderUnavailable,
    RateLimited,
    RetriesExhausted,
)
from dialectic.llm.base import Completion, CompletionRequest, Delta, JsonSchema, LLMProvider, Message
from dialectic.llm.http_wire import WireError, WireShapeError, WireStatusError, WireTimeout
from dialectic.llm.openai_provider import OpenAIProvider, parse_json_text, responses_endpoint_missing, translate_error
from dialectic.llm.retry import RetryPolicy, with_retries
from dialectic.llm.scripted import example_for_schema
from dialectic.testing.fake_server import FakeLLMServer, Fault

SCHEMA = {
    "type": "object",
    "properties": {"confidence": {"type": "integer", "minimum": 0, "maximum": 100}, "reasoning": {"type": "string"}},
    "required": ["confidence", "reasoning"],
}


def ask(text: str = "Design a rate limiter", **changes: Any) -> CompletionRequest:
    request = CompletionRequest(
        messages=(Message("system", "You are an architect."), Message("user", text)), model="gpt-test", max_tokens=200
    )
    return request.with_changes(**changes)


class NoSleep:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def test_is_an_llm_provider() -> None:
    provider = OpenAIProvider(api_key="k", base_url="http://127.0.0.1:9/v1", name="openrouter")
    assert isinstance(provider, LLMProvider) and provider.name == "openrouter"


def test_responses_happy_path(server: FakeLLMServer, run_openai: Any) -> None:
    async def scenario(provider: OpenAIProvider) -> Completion:
        return await provider.complete(ask(temperature=0.3))

    completion = run_openai(scenario, api="responses")
    assert completion.text.startswith("[reply] Scripted answer")
    assert completion.model == "gpt-test" and completion.finish_reason == "stop" and completion.structured is None
    assert completion.usage.input_tokens == 8 and completion.usage.output_tokens > 0
    assert completion.usage.total_tokens == completion.usage.input_tokens + completion.usage.output_tokens
    assert completion.latency_ms >= 0
    assert server.paths() == ["/v1/responses"]
    body = server.requests[0].body
    assert body["instructions"] == "You are an architect."
    assert body["input"] == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Design a rate limiter"}]}
    ]
    assert body["max_output_tokens"] == 200 and body["temperature"] == 0.3
    assert server.requests[0].headers["authorization"] == "Bearer test-key"


def test_latency_is_measured_around_the_call(run_openai: Any) -> None:
    async def scenario(provider: OpenAIProvider) -> Completion:
        return await provider.complete(ask())

    with FakeLLMServer(latency_s=0.15) as slow:
        assert run_openai(scenario, base_url=slow.openai_base_url).latency_ms >= 150


@pytest.mark.usefixtures("official_endpoint")
def test_chat_fallback_is_used_and_remembered(chat_only_server: FakeLLMServer, run_openai: Any) -> None:
    base_url = chat_only_server.openai_base_url

    async def scenario(provider: OpenAIProvider) -> tuple[Completion, Completion]:
        return await provider.complete(ask("first")), await provider.complete(ask("second"))

    first, second = run_openai(scenario, base_url=base_url)
    assert first.text and second.text and first.finish_reason == "stop"
    assert first.usage.input_tokens > 0
    assert chat_only_server.paths() == ["/v1/responses", "/v1/chat/completions", "/v1/chat/completions"]
    messages = chat_only_server.requests[1].body["messages"]
    assert messages == [{"role": "system", "content": "You are an architect."}, {"role": "user", "content": "first"}]
    assert chat_only_server.requests[1].body["max_completion_tokens"] == 200  # OpenAI's own endpoint

    async def another_instance(provider: OpenAIProvider) -> Completion:
        assert provider.uses_responses_api is False
        return await provider.complete(ask("third"))

    run_openai(another_instance, base_url=base_url)
    assert chat_only_server.paths()[-1] == "/v1/chat/completions"
    assert chat_only_server.paths().count("/v1/responses") == 1


@pytest.mark.usefixtures("official_endpoint")
def test_model_not_found_does_not_trigger_the_fallback(server: FakeLLMServer, run_openai: Any) -> None:
    body = json.dumps({"error": {"message": "The model `gpt-test` does not exist", "code": "model_not_found"}})
    server.inject(Fault("status", status=404, body=body))

    async def scenario(provider: OpenAIProvider) -> Completion:
        return await provider.complete(ask())

    with pytest.raises(ModelNotFound) as raised:
        run_openai(scenario)
    assert str(raised.value).startswith("openai: model gpt-test not found (404)")
    assert server.paths() == ["/v1/responses"]
    assert False not in OpenAIProvider._responses_api.values()


@pytest.mark.parametrize("responses_api", [True, False], ids=["responses", "chat"])
def test_structured_output_reaches_the_server_and_parses(responses_api: bool, run_openai: Any) -> None:
    with FakeLLMServer(responses_api=responses_api) as fake:

        async def scenario(provider: OpenAIProvider) -> Completion:
            return await provider.complete(ask(json_schema=JsonSchema("evaluation", SCHEMA)))

        api = "responses" if responses_api else "chat"
        completion = run_openai(scenario, base_url=fake.openai_base_url, api=api)
        body = fake.requests[-1].body
    if responses_api:
        assert body["text"]["format"] == {
            "type": "json_schema",
            "name": "evaluation",
            "schema": SCHEMA,
            "strict": False,
        }
    else:
        assert body["response_format"] == {
            "type": "json_schema",
            "json_schema": {"name": "evaluation", "schema": SCHEMA},
        }
    assert completion.structured == example_for_schema(SCHEMA, name="evaluation")
    assert json.loads(completion.text) == completion.structured


def test_structured_reply_that_does_not_parse_leaves_structured_empty(run_openai: Any) -> None:
    async def scenario(provider: OpenAIProvider) -> Completion:
        return await provider.complete(ask(json_schema=JsonSchema("evaluation", SCHEMA)))

    with FakeLLMServer(lambda request: "not json at all") as fake:
        completion = run_openai(scenario, base_url=fake.openai_base_url)
    assert completion.text == "not json at all" and completion.structured is None


def test_parse_json_text_strips_fences() -> None:
    assert parse_json_text('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json_text('  {"a": [1, 2]}  ') == {"a": [1, 2]}
    assert parse_json_text("```\n[1]\n```") == [1]
    assert parse_json_text("{broken") is None


def test_streaming_concatenates_to_the_text_with_final_usage(server: FakeLLMServer, run_openai: Any) -> None:
    async def scenario(provider: OpenAIProvider) -> tuple[list[Delta], Completion]:
        deltas = [delta async for delta in provider.stream(ask())]
        return deltas, await provider.complete(ask())

    deltas, completion = run_openai(scenario)
    assert len(deltas) > 2
    assert "".join(d.text for d in deltas) == completion.text
    final = deltas[-1]
    assert final.text == "" and final.finish_reason == "stop" and final.model == "gpt-test"
    assert final.usage == completion.usage
    assert all(d.usage is None for d in deltas[:-1])
    stream_body = server.requests[0].body
    assert server.requests[0].path == "/v1/chat/completions"
    assert stream_body["stream"] is True and stream_body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("responses_api", [True, False], ids=["responses", "chat"])
def test_truncation_maps_to_length(responses_api: bool, run_openai: Any) -> None:
    with FakeLLMServer(responses_api=responses_api) as fake:
        fake.inject(Fault("truncate"))

        async def scenario(provider: OpenAIProvider) -> Completion:
            return await provider.complete(ask())

        completion = run_openai(scenario, base_url=fake.openai_base_url)
    assert completion.finish_reason == "length" and completion.cut_off and completion.text


def test_truncated_stream_maps_to_length(server: FakeLLMServer, run_openai: Any) -> None:
    server.inject(Fault("truncate"))

    async def scenario(provider: OpenAIProvider) -> list[Delta]:
        return [delta async for delta in provider.stream(ask())]

    assert run_openai(scenario)[-1].finish_reason == "length"


def test_rate_limit_with_retry_after_then_success(server: FakeLLMServer, run_openai: Any) -> None:
    server.inject(Fault("status", status=429, retry_after=2.5))
    sleep = NoSleep()
    retries: list[tuple[str, int, float]] = []

    async def scenario(provider: OpenAIProvider) -> Completion:
        return await with_retries(
            lambda: provider.complete(ask()),
            RetryPolicy(base_delay_s=0.01, jitter_s=0.0),
            on_retry=lambda error, attempt, wait: retries.append((str(error), attempt, wait)),
            sleep=sleep,
        )

    completion = run_openai(scenario)
    assert completion.text and completion.attempts == 2
    assert sleep.waits == [2.5]
    assert retries == [("openai: rate limited (429) on model gpt-test", 1, 2.5)]
    assert server.paths() == ["/v1/chat/completions", "/v1/chat/completions"]


def test_rate_limit_error_carries_retry_after(server: FakeLLMServer, run_openai: Any) -> None:
    server.inject(Fault("status", status=429, retry_after=0.05))

    async def scenario(provider: OpenAIProvider) -> Completion:
        return await provider.complete(ask())

    with pytest.raises(RateLimited) as raised:
        run_openai(scenario)
    assert raised.value.retry_after == 0.05 and raised.value.status_code == 429


def test_server_error_then_success(server: FakeLLMServer, run_openai: Any) -> None:
    server.inject(Fault("status", status=502))

    async def scenario(provider: OpenAIProvider) -> Completion:
        return await with_retries(lambda: provider.complete(ask()), RetryPolicy(), sleep=NoSleep())

    assert run_openai(scenario).attempts == 2
    assert server.call_count == 1 and len(server.requests) == 2


def test_persistent_server_errors_exhaust_retries(run_openai: Any) -> None:
    sleep = NoSleep()

    async def scenario(provider: OpenAIProvider) -> Completion:
        return await with_retries(lambda: provider.complete(ask()), RetryPolicy(max_attempts=3), sleep=sleep)

    with FakeLLMServer(fail_after=0, always_fail_status=503) as failing:
        with pytest.raises(RetriesExhausted) as raised:
            run_openai(scenario, base_url=failing.openai_base_url)
        assert len(failing.requests) == 3 and failing.call_count == 0
    assert isinstance(raised.value.last, ProviderUnavailable) and raised.value.attempts == 3
    assert str(raised.value) == "openai: server error (503) on model gpt-test (gave up after 3 attempts)"
    assert len(sleep.waits) == 2


def test_authentication_failure_is_not_retried(run_openai: Any) -> None:
    async def scenario(provider: OpenAIProvider) -> Completion:
        return await with_retries(lambda: provider.complete(ask()), RetryPolicy(), sleep=NoSleep())

    with FakeLLMServer(auth_key="right-key") as guarded:
        with pytest.raises(ProviderAuthError) as raised:
            run_openai(scenario, api_key="wrong-key", base_url=guarded.openai_base_url)
        assert len(guarded.requests) == 1
    assert str(raised.value).startswith("openai: authentication failed (401)")


def test_per_call_timeout(server: FakeLLMServer, run_openai: Any) -> None:
    server.inject(Fault("delay", delay_s=1.0))

    async def scenario(provider: OpenAIProvider) -> Completion:
        return await provider.complete(ask(timeout_s=0.2))

    with pytest.raises(ProviderTimeout) as raised:
        run_openai(scenario)
    assert str(raised.value).startswith("openai: model gpt-test sent nothing for 0.2 s")
    assert "`timeout`, in milliseconds" in str(raised.value)


def test_malformed_body_is_an_invalid_response(server: FakeLLMServer, run_openai: Any) -> None:
    server.inject(Fault("malformed"))

    async def scenario(provider: OpenAIProvider) -> Completion:
        return await provider.complete(ask())

    with pytest.raises(InvalidResponse) as raised:
        run_openai(scenario)
    assert str(raised.value) == "openai: malformed response from model gpt-test (not valid JSON)"


def test_malformed_stream_is_an_invalid_response(server: FakeLLMServer, run_openai: Any) -> None:
    server.inject(Fault("malformed"))

    async def scenario(provider: OpenAIProvider) -> list[Delta]:
        return [delta async for delta in provider.stream(ask())]

    with pytest.raises(InvalidResponse):
        run_openai(scenario)


def test_an_error_reported_inside_the_stream_is_a_provider_failure(server: FakeLLMServer, run_openai: Any) -> None:
    server.inject(Fault("malformed", body=json.dumps({"error": {"message": "the model is overloaded"}})))

    async def scenario(provider: OpenAIProvider) -> list[Delta]:
        return [delta async for delta in provider.stream(ask())]

    with pytest.raises(ProviderUnavailable) as raised:
        run_openai(scenario)
    assert raised.value.detail == "the model is overloaded"


def test_context_window_exceeded(server: FakeLLMServer, run_openai: Any) -> None:
    message = "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens."
    server.inject(Fault("status", status=400, body=json.dumps({"error": {"message": message}})))

    async def scenario(provider: OpenAIProvider) -> Completion:
        return await provider.complete(ask())

    with pytest.raises(ContextWindowExceeded) as raised:
        run_openai(scenario)
    assert raised.value.detail == message
    assert str(raised.value) == "openai: prompt exceeds the context window (400) on model gpt-test"


def test_disconnect_and_refused_connection_are_unavailable(server: FakeLLMServer, run_openai: Any) -> None:
    server.inject(Fault("disconnect"))

    async def scenario(provider: OpenAIProvider) -> Completion:
        return await provider.complete(ask())

    with pytest.raises(ProviderUnavailable):
        run_openai(scenario)
    with pytest.raises(ProviderUnavailable) as raised:
        run_openai(scenario, base_url="http://127.0.0.1:9/v1")
    assert str(raised.value) == "openai: cannot connect to http://127.0.0.1:9"


def _sdk_response(status: int, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.Response(status, headers=headers, request=httpx2.Request("POST", "http://127.0.0.1:1/v1/responses"))


def _status(status: int, body: object, headers: dict[str, str] | None = None) -> WireStatusError:
    return WireStatusError("x", response=_sdk_response(status, headers), body=body)


def test_translate_error_covers_the_wire_failures_without_a_server() -> None:
    limited = _status(429, {"error": {"message": "slow down"}}, {"retry-after-ms": "1500"})
    translated = translate_error(limited, provider="openrouter", model="m")
    assert isinstance(translated, RateLimited) and translated.retry_after == 1.5
    assert str(translated) == "openrouter: rate limited (429) on model m" and translated.detail == "slow down"

    quota = _status(429, {"error": {"message": "quota", "code": "insufficient_quota"}})
    assert isinstance(translate_error(quota, provider="openai", model="m"), ProviderAuthError)

    denied = _status(403, None)
    assert isinstance(translate_error(denied, provider="openai", model="m"), ProviderAuthError)

    invalid = WireShapeError("bad shape")
    assert isinstance(translate_error(invalid, provider="openai", model="m"), InvalidResponse)

    stream_error = WireError("boom", httpx2.Request("POST", "http://127.0.0.1:1/v1"), body={"message": "boom"})
    assert isinstance(translate_error(stream_error, provider="openai", model="m"), ProviderUnavailable)

    timeout = WireTimeout("Request timed out.", httpx2.Request("POST", "http://127.0.0.1:1/v1"))
    assert isinstance(translate_error(timeout, provider="openai", model="m"), ProviderTimeout)


@pytest.mark.parametrize(
    ("status", "body", "missing"),
    [
        (404, "404 page not found", True),
        (404, {"message": "Invalid URL (POST /v1/responses)"}, True),
        (405, None, True),
        (501, {"message": "Not Implemented"}, True),
        (404, {"message": "model 'llama3' not found, try pulling it first"}, False),
        (404, {"message": "Not found", "code": "model_not_found"}, False),
        (400, {"message": "bad"}, False),
    ],
)
def test_responses_endpoint_missing_rule(status: int, body: object, missing: bool) -> None:
    assert responses_endpoint_missing(_status(status, body), "llama3") is missing
