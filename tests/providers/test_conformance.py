"""Conformance of the wire against code no one here wrote: the ``openai`` and ``anthropic`` SDKs' own types.

Every request body the adapters build (plain, streamed, with tools, with a JSON schema, with the prompt
cache's fields) is read back from the fake server and checked strictly against the SDK's request
TypedDict for its endpoint (:mod:`.sdk_types`). Every reply shape the SDKs document is built as the
SDK's own model object, dumped to JSON as a server sends it, and parsed by the adapter.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx2
import pytest
from anthropic.types import Message as AnthropicMessage
from anthropic.types import RawMessageStreamEvent
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming, MessageCreateParamsStreaming
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.chat.completion_create_params import (
    CompletionCreateParamsNonStreaming,
    CompletionCreateParamsStreaming,
)
from openai.types.responses import Response
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import TypeAdapter

from dialectic.llm.anthropic_provider import AnthropicProvider
from dialectic.llm.base import Completion, CompletionRequest, Delta, JsonSchema, Message, ToolCall, ToolSpec
from dialectic.llm.openai_provider import OpenAIProvider
from dialectic.testing.fake_server import FakeLLMServer

from .sdk_types import Mismatch, conforms

LLAMA_EXTENSIONS = {"cache_prompt", "id_slot"}
"""llama-server's own request fields (its prompt cache), sent only to a server whose ``/props`` has slots:
not in OpenAI's types, checked here apart."""

SCHEMA = JsonSchema("verdict", {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})
TOOLS = (ToolSpec("file_read", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}),)
HISTORY = (
    Message("system", "You are an architect."),
    Message("user", "Design a cache."),
    Message("assistant", "Reading.", tool_calls=(ToolCall("call_1", "file_read", {"path": "a.py"}),)),
    Message("tool", "print('a')", tool_call_id="call_1"),
    Message("assistant", "An LRU in front of the API."),
    Message("user", "Refine it."),
)


def ask(**changes: Any) -> CompletionRequest:
    request = CompletionRequest(
        messages=HISTORY, model="m", temperature=0.2, max_tokens=100, prompt_cache_key="dialectic-run-agent"
    )
    return request.with_changes(**changes)


FEATURES: dict[str, dict[str, Any]] = {
    "plain": {},
    "tools": {"tools": TOOLS},
    "schema": {"json_schema": SCHEMA},
    "logprobs": {"logprobs": True},
    "no history": {"messages": HISTORY[:2], "prompt_cache_key": ""},
}


def bodies(server: FakeLLMServer) -> list[dict[str, Any]]:
    return [r.body for r in server.requests if r.body]


def drive(make: Callable[[], Any], stream: bool, requests: list[CompletionRequest]) -> None:
    async def scenario() -> None:
        provider = make()
        try:
            for request in requests:
                if stream:
                    async for _ in provider.stream(request):
                        pass
                else:
                    await provider.complete(request)
        finally:
            await provider.aclose()

    asyncio.run(scenario())


def checked(body: dict[str, Any], kind: Any) -> None:
    try:
        conforms(body, kind)
    except Mismatch as error:
        pytest.fail(f"{json.dumps(body)[:400]}\n{error}")


@pytest.mark.parametrize("official", [True, False], ids=["openai", "compatible"])
@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
def test_chat_completions_requests_have_the_sdks_types(
    official: bool, stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dialectic.llm import openai_provider

    if official:
        monkeypatch.setattr(openai_provider, "OPENAI_HOSTS", (*openai_provider.OPENAI_HOSTS, "127.0.0.1"))
    with FakeLLMServer(strict=not official, n_ctx=None if official else 8192, slots=2) as server:
        url = server.openai_base_url
        drive(
            lambda: OpenAIProvider(api_key="k", base_url=url, api="chat"),
            stream,
            [ask(**changes) for changes in FEATURES.values()],
        )
        sent = bodies(server)
    assert len(sent) == len(FEATURES)
    kind = CompletionCreateParamsStreaming if stream else CompletionCreateParamsNonStreaming
    for body in sent:
        extensions = {key: body.pop(key) for key in LLAMA_EXTENSIONS & set(body)}
        checked(body, kind)
        if official:
            assert not extensions and "max_completion_tokens" in body
        elif body.get("messages") != [{"role": "system", "content": "You are an architect."}]:
            assert "prompt_cache_key" not in body
    if official:
        assert sum("prompt_cache_key" in b for b in sent) == len(FEATURES) - 1  # all but the call without a key
    else:
        with_key = [b for b, changes in zip(sent, FEATURES.values(), strict=True) if "prompt_cache_key" not in changes]
        assert with_key and all("max_tokens" in b for b in sent)


def test_responses_requests_have_the_sdks_types(official_endpoint: None) -> None:
    with FakeLLMServer() as server:
        url = server.openai_base_url
        drive(
            lambda: OpenAIProvider(api_key="k", base_url=url, api="responses"),
            False,
            [ask(**changes) for changes in FEATURES.values()],
        )
        sent = bodies(server)
    assert len(sent) == len(FEATURES)
    for body in sent:
        checked(body, ResponseCreateParamsNonStreaming)
    assert sent[0]["prompt_cache_key"] == "dialectic-run-agent"


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
def test_messages_requests_have_the_sdks_types(stream: bool) -> None:
    with FakeLLMServer() as server:
        url = server.anthropic_base_url
        drive(lambda: AnthropicProvider(api_key="k", base_url=url), stream, [ask(**c) for c in FEATURES.values()])
        sent = bodies(server)
    assert len(sent) == len(FEATURES)
    kind = MessageCreateParamsStreaming if stream else MessageCreateParamsNonStreaming
    for body in sent:
        checked(body, kind)
    assert "cache_control" in json.dumps(sent[0]) and "cache_control" not in json.dumps(sent[-1])


def test_the_checker_refuses_what_the_types_do_not_declare() -> None:
    good = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    conforms(good, CompletionCreateParamsNonStreaming)
    for bad in (
        {**good, "max_token": 5},  # a misspelt field
        {"model": "m", "messages": [{"role": "robot", "content": "hi"}]},  # no such role
        {"messages": good["messages"]},  # the model is required
        {**good, "temperature": "warm"},
    ):
        with pytest.raises(Mismatch):
            conforms(bad, CompletionCreateParamsNonStreaming)


# --- replies: the SDKs' own model objects, dumped as a server sends them, parsed by the adapters ---

CHAT_REPLY = ChatCompletion.model_validate(
    {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "Reading.",
                    "tool_calls": [
                        {
                            "id": "call_9",
                            "type": "function",
                            "function": {"name": "file_read", "arguments": '{"path": "b.py"}'},
                        }
                    ],
                },
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": 1000,
            "completion_tokens": 20,
            "total_tokens": 1020,
            "prompt_tokens_details": {"cached_tokens": 896},
        },
    }
)
CHAT_CHUNKS = [
    ChatCompletionChunk.model_validate(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece}, "finish_reason": None}],
        }
    )
    for piece in ("An ", "LRU.")
] + [
    ChatCompletionChunk.model_validate(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        }
    ),
    ChatCompletionChunk.model_validate(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [],
            "usage": {
                "prompt_tokens": 500,
                "completion_tokens": 4,
                "total_tokens": 504,
                "prompt_tokens_details": {"cached_tokens": 384},
            },
        }
    ),
]
RESPONSES_REPLY = Response.model_validate(
    {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "m",
        "status": "completed",
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "An LRU.", "annotations": []}],
            },
            {"type": "function_call", "call_id": "call_2", "name": "file_read", "arguments": '{"path": "c.py"}'},
        ],
        "usage": {
            "input_tokens": 800,
            "output_tokens": 10,
            "total_tokens": 810,
            "input_tokens_details": {"cached_tokens": 640, "cache_write_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
)
ANTHROPIC_REPLY = AnthropicMessage.model_validate(
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "content": [
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "toolu_1", "name": "file_read", "input": {"path": "d.py"}},
        ],
        "usage": {
            "input_tokens": 50,
            "output_tokens": 12,
            "cache_creation_input_tokens": 100,
            "cache_read_input_tokens": 900,
        },
    }
)
ANTHROPIC_EVENTS: list[Any] = [
    TypeAdapter(RawMessageStreamEvent).validate_python(event)
    for event in (
        {
            "type": "message_start",
            "message": {
                "id": "msg_2",
                "type": "message",
                "role": "assistant",
                "model": "claude-test",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 40, "output_tokens": 1, "cache_read_input_tokens": 700},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "An "}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "LRU."}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 6},
        },
        {"type": "message_stop"},
    )
]


def dumped(model: Any) -> str:
    return model.model_dump_json()


def answered_by(provider: Any, reply: httpx2.Response) -> None:
    """Point ``provider``'s wire at a transport that gives ``reply`` to every request."""
    wire = provider._client
    wire._client = httpx2.AsyncClient(
        base_url=wire.base_url, transport=httpx2.MockTransport(lambda request: reply), timeout=wire.timeout
    )


def parsed(make: Callable[[], Any], reply: httpx2.Response, request: CompletionRequest, stream: bool) -> Any:
    async def scenario() -> Any:
        provider = make()
        answered_by(provider, reply)
        try:
            if stream:
                return [delta async for delta in provider.stream(request)]
            return await provider.complete(request)
        finally:
            await provider.aclose()

    return asyncio.run(scenario())


def sse(events: list[tuple[str | None, str]]) -> httpx2.Response:
    text = "".join((f"event: {name}\n" if name else "") + f"data: {data}\n\n" for name, data in events)
    return httpx2.Response(200, content=text.encode(), headers={"content-type": "text/event-stream"})


def openai(api: str) -> Callable[[], OpenAIProvider]:
    return lambda: OpenAIProvider(api_key="k", base_url="http://127.0.0.1:9/v1", api=api)


def test_a_chat_completion_as_the_sdk_documents_it_parses() -> None:
    reply = httpx2.Response(200, content=dumped(CHAT_REPLY).encode())
    completion: Completion = parsed(openai("chat"), reply, ask(tools=TOOLS, prompt_cache_key=""), False)
    assert completion.text == "Reading." and completion.finish_reason == "tool_calls"
    assert [(c.id, c.name, c.arguments) for c in completion.tool_calls] == [("call_9", "file_read", {"path": "b.py"})]
    assert (completion.usage.input_tokens, completion.usage.cached_input_tokens) == (1000, 896)


def test_chat_completion_chunks_as_the_sdk_documents_them_parse() -> None:
    reply = sse([(None, dumped(chunk)) for chunk in CHAT_CHUNKS] + [(None, "[DONE]")])
    deltas: list[Delta] = parsed(openai("chat"), reply, ask(prompt_cache_key=""), True)
    assert "".join(d.text for d in deltas) == "An LRU."
    final = deltas[-1]
    assert final.finish_reason == "stop" and final.usage is not None and final.usage.cached_input_tokens == 384


def test_a_response_as_the_sdk_documents_it_parses() -> None:
    reply = httpx2.Response(200, content=dumped(RESPONSES_REPLY).encode())
    completion: Completion = parsed(openai("responses"), reply, ask(tools=TOOLS, prompt_cache_key=""), False)
    assert completion.text == "An LRU." and completion.finish_reason == "tool_calls"
    assert completion.tool_calls[0].arguments == {"path": "c.py"}
    assert (completion.usage.input_tokens, completion.usage.cached_input_tokens) == (800, 640)


def test_a_message_as_the_sdk_documents_it_parses() -> None:
    reply = httpx2.Response(200, content=dumped(ANTHROPIC_REPLY).encode())
    make = lambda: AnthropicProvider(api_key="k", base_url="http://127.0.0.1:9")  # noqa: E731
    completion: Completion = parsed(make, reply, ask(tools=TOOLS), False)
    assert completion.text == "Reading." and completion.finish_reason == "tool_calls"
    assert completion.tool_calls[0].arguments == {"path": "d.py"}
    assert (completion.usage.input_tokens, completion.usage.cached_input_tokens) == (1050, 900)


def test_message_stream_events_as_the_sdk_documents_them_parse() -> None:
    reply = sse([(event.type, dumped(event)) for event in ANTHROPIC_EVENTS])
    make = lambda: AnthropicProvider(api_key="k", base_url="http://127.0.0.1:9")  # noqa: E731
    deltas: list[Delta] = parsed(make, reply, ask(), True)
    assert "".join(d.text for d in deltas) == "An LRU."
    final = deltas[-1]
    assert final.finish_reason == "stop" and final.model == "claude-test" and final.usage is not None
    assert (final.usage.input_tokens, final.usage.output_tokens, final.usage.cached_input_tokens) == (740, 6, 700)
