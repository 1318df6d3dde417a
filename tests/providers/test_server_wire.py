"""The OpenAI adapter against a server that behaves as llama.cpp's ``llama-server`` (the fake server's strict mode).

What broke every debate on a real llama-server: untyped Responses items, the Responses-first default,
cut-off replies reported as complete, the server's file path stored as the model. Each test here
failed on the adapter before the fix.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from dialectic.core.errors import ContextWindowExceeded, ProviderUnavailable
from dialectic.llm.base import Completion, CompletionRequest, JsonSchema, Message
from dialectic.llm.endpoint_memory import MEMORY_TTL_S
from dialectic.llm.openai_provider import (
    ListedModel,
    OpenAIProvider,
    is_openai_endpoint,
    known_window,
    window_in_listing,
)
from dialectic.llm.scripted import ScriptedReply
from dialectic.testing.fake_server import MODEL_PATH, FakeLLMServer, closed_port_url

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def ask(user: str = "Design a rate limiter", **changes: Any) -> CompletionRequest:
    messages = (Message("system", "You are an architect."), Message("user", user))
    return CompletionRequest(messages=messages, model="qwen-small", max_tokens=200).with_changes(**changes)


def with_history() -> CompletionRequest:
    """A request that re-sends an assistant turn (a continuation, a repair, a tool loop, a later round)."""
    return ask().with_changes(
        messages=(
            Message("system", "You are an architect."),
            Message("user", "Design a rate limiter"),
            Message("assistant", "Use a token bucket per client."),
            Message("user", "Continue."),
        )
    )


def run(server: FakeLLMServer, scenario: Any, **options: Any) -> Any:
    async def main() -> Any:
        provider = OpenAIProvider(api_key="k", base_url=server.openai_base_url, timeout_s=10.0, **options)
        try:
            return await scenario(provider)
        finally:
            await provider.aclose()

    return asyncio.run(main())


@pytest.mark.parametrize("api", ["auto", "chat", "responses"])
def test_each_api_setting_speaks_only_its_api_and_the_strict_server_accepts_it(api: str) -> None:
    async def scenario(provider: OpenAIProvider) -> Completion:
        return await provider.complete(with_history())

    with FakeLLMServer(strict=True) as server:
        completion = run(server, scenario, api=api)
        paths = server.paths()
    expected = "/v1/responses" if api == "responses" else "/v1/chat/completions"
    assert paths == [expected]  # auto: Chat Completions off OpenAI's own endpoint, no probing
    assert completion.text


def test_responses_items_are_typed() -> None:
    with FakeLLMServer(strict=True) as server:
        run(server, lambda provider: provider.complete(with_history()), api="responses")
        items = server.requests[0].body["input"]
    assert [item["type"] for item in items] == ["message"] * 3
    # an easy input message: an output_text part would need the id and status of a server's output item
    assert items[1] == {"type": "message", "role": "assistant", "content": "Use a token bucket per client."}
    assert items[0]["content"] == [{"type": "input_text", "text": "Design a rate limiter"}]


def test_auto_means_responses_on_openais_own_endpoint_only() -> None:
    assert is_openai_endpoint("https://api.openai.com/v1")
    assert not is_openai_endpoint("http://127.0.0.1:8080/v1")
    assert not is_openai_endpoint("https://openrouter.ai/api/v1")
    official = OpenAIProvider(api_key="k")
    assert official.uses_responses_api
    assert not OpenAIProvider(api_key="k", base_url="http://127.0.0.1:8080/v1").uses_responses_api
    assert OpenAIProvider(api_key="k", base_url="http://127.0.0.1:8080/v1", api="responses").uses_responses_api
    assert not OpenAIProvider(api_key="k", api="chat").uses_responses_api


def test_a_reply_that_reaches_the_limit_is_cut_off_though_the_server_says_completed() -> None:
    long_reply = " ".join(["word"] * 400)
    with FakeLLMServer(lambda request: ScriptedReply(text=long_reply), strict=True) as server:
        completion = run(server, lambda p: p.complete(ask(max_tokens=50)), api="responses")
        assert server.requests[0].path == "/v1/responses"
    assert completion.usage.output_tokens == 50
    assert completion.finish_reason == "length" and completion.cut_off


def test_the_configured_model_is_stored_and_the_servers_goes_beside_it() -> None:
    with FakeLLMServer(strict=True) as server:
        completion = run(server, lambda p: p.complete(ask()))
    assert completion.model == "qwen-small"
    assert completion.served_model == MODEL_PATH


def test_extra_fields_are_ignored_and_usage_is_read() -> None:
    """The strict server's replies carry llama-server's ``timings`` object beside the usage."""
    with FakeLLMServer(strict=True) as server:
        completion = run(server, lambda p: p.complete(ask()))
    assert completion.text and completion.finish_reason == "stop"
    assert completion.usage.input_tokens > 0 and not completion.usage.estimated


def test_a_stream_without_usage_gets_an_estimate_marked_as_such() -> None:
    async def scenario(provider: OpenAIProvider) -> list[Any]:
        return [delta async for delta in provider.stream(ask())]

    with FakeLLMServer(stream_usage=False) as server:
        deltas = run(server, scenario)
    last = deltas[-1]
    assert last.usage is not None and last.usage.estimated is True
    assert last.usage.input_tokens > 0 and last.usage.output_tokens > 0
    assert last.model == "qwen-small"


def test_chat_structured_output_is_enforced_on_the_strict_server() -> None:
    with FakeLLMServer(strict=True) as server:
        completion = run(server, lambda p: p.complete(ask(json_schema=JsonSchema("answer", SCHEMA))))
        body = server.requests[0].body
    assert body["response_format"]["type"] == "json_schema"
    assert isinstance(completion.structured, dict)


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "response_format json_schema is not supported"),
        # llama-cpp-python's server: a 500 from its request validation
        (500, "1 validation error: ('body', 'response_format', 'type') Input should be 'text' or 'json_object'"),
    ],
)
def test_a_server_that_refuses_json_schema_is_asked_for_json_object_then_nothing(status: int, message: str) -> None:
    from dialectic.testing.faults import Fault

    refusal = json.dumps({"error": {"code": status, "message": message}})
    with FakeLLMServer() as server:
        server.inject(Fault("status", status=status, body=refusal))

        async def scenario(provider: OpenAIProvider) -> tuple[Completion, Completion]:
            first = await provider.complete(ask(json_schema=JsonSchema("answer", SCHEMA)))
            return first, await provider.complete(ask(json_schema=JsonSchema("answer", SCHEMA)))

        first, second = run(server, scenario)
        formats = [r.body.get("response_format", {}).get("type") for r in server.requests]
        server.inject(Fault("status", status=400, body=refusal))
        third = run(server, lambda p: p.complete(ask(json_schema=JsonSchema("answer", SCHEMA))))
        after = [r.body.get("response_format", {}).get("type") for r in server.requests][len(formats) :]
    # the refusal, its retry as json_object (with the schema), the next call as json_object from the start
    assert formats == ["json_schema", "json_object", "json_object"]
    assert server.requests[1].body["response_format"]["schema"] == SCHEMA
    assert first.text and second.text and third.text
    assert after == ["json_object", None]  # json_object refused too: asked without a format


def test_a_plain_server_error_on_a_structured_call_is_not_taken_for_a_refusal() -> None:
    from dialectic.core.errors import ProviderUnavailable as Unavailable
    from dialectic.testing.faults import Fault

    with FakeLLMServer() as server:
        server.inject(Fault("status", status=500, body='{"error": {"message": "out of memory"}}'))
        with pytest.raises(Unavailable):
            run(server, lambda p: p.complete(ask(json_schema=JsonSchema("answer", SCHEMA))))
    assert OpenAIProvider._formats.values() == []


def test_a_refusal_for_length_carries_the_window_and_the_prompt_size() -> None:
    with FakeLLMServer(strict=True, n_ctx=64) as server:
        with pytest.raises(ContextWindowExceeded) as raised:
            run(server, lambda p: p.complete(ask(" ".join(["long"] * 200))))
    assert raised.value.window == 64
    assert raised.value.prompt_tokens is not None and raised.value.prompt_tokens >= 64
    assert "context window" in raised.value.message


def test_the_window_is_learned_from_props_once_per_endpoint_and_model() -> None:
    with FakeLLMServer(strict=True, n_ctx=1536) as server:

        async def scenario(provider: OpenAIProvider) -> tuple[int | None, int | None]:
            return await provider.context_window("qwen-small"), await provider.context_window("qwen-small")

        first, second = run(server, scenario)
        asked = [p for p in server.paths() if p.endswith("/props")]
    assert first == second == 1536
    assert len(asked) == 1


def test_a_window_is_asked_again_after_a_while_so_a_restarted_server_is_met_as_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A long-lived process (``dialectic serve``) must not keep a window a server had before it was
    restarted on the same address with another ``-c``."""
    now = [0.0]
    monkeypatch.setattr(OpenAIProvider._windows, "clock", lambda: now[0])
    with FakeLLMServer(strict=True, n_ctx=1536) as server:

        async def scenario(provider: OpenAIProvider) -> list[int | None]:
            seen = [await provider.context_window("qwen-small")]
            server.n_ctx = 4096  # the same address, restarted with a larger window
            now[0] = MEMORY_TTL_S - 1
            seen.append(await provider.context_window("qwen-small"))
            now[0] = MEMORY_TTL_S
            seen.append(await provider.context_window("qwen-small"))
            return seen

        seen = run(server, scenario)
        asked = [p for p in server.paths() if p.endswith("/props")]
    assert seen == [1536, 1536, 4096]
    assert len(asked) == 2


@pytest.mark.parametrize("call", ["complete", "models"])
def test_an_endpoint_that_cannot_be_reached_is_forgotten(call: str) -> None:
    url = closed_port_url()

    async def main() -> None:
        provider = OpenAIProvider(api_key="k", base_url=url, timeout_s=5.0)
        endpoint = provider._endpoint
        OpenAIProvider._windows[(endpoint, "qwen-small")] = 1536
        OpenAIProvider._formats[endpoint] = "json_object"
        OpenAIProvider._windows[("http://elsewhere/v1/", "qwen-small")] = 2048
        try:
            await (provider.complete(ask()) if call == "complete" else provider.models())
        finally:
            await provider.aclose()

    with pytest.raises(ProviderUnavailable):
        asyncio.run(main())
    assert list(OpenAIProvider._windows.values()) == [2048]
    assert OpenAIProvider._formats.values() == []


def test_the_window_from_a_listing_or_the_known_table() -> None:
    listing = {"data": [{"id": "m", "max_model_len": 4096}, {"id": "n", "context_length": 8192}]}
    assert window_in_listing(listing, "m") == 4096
    assert window_in_listing(listing, "n") == 8192
    assert window_in_listing(listing, "other") is None
    assert window_in_listing({"data": [{"id": "only", "context_window": 2048}]}, "x") == 2048
    assert known_window("gpt-4o-mini") == 128_000 and known_window("openai/gpt-4.1") == 1_047_576
    assert known_window("claude-haiku-4-5") == 200_000 and known_window("llama3.1") is None


def test_models_lists_what_the_server_offers() -> None:
    with FakeLLMServer(strict=True) as server:
        listed = run(server, lambda p: p.models())
    assert listed == [ListedModel(id=MODEL_PATH)]


def test_models_of_a_server_that_is_down_is_a_one_line_unavailable_error() -> None:
    async def scenario(provider: OpenAIProvider) -> Any:
        return await provider.models()

    async def main() -> Any:
        provider = OpenAIProvider(api_key="k", base_url=closed_port_url(), timeout_s=5.0)
        try:
            return await scenario(provider)
        finally:
            await provider.aclose()

    with pytest.raises(ProviderUnavailable, match="cannot connect to http://127.0.0.1"):
        asyncio.run(main())
