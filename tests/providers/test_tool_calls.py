"""Native tool calling through the real SDKs against the fake server: OpenAI Responses, Chat, Anthropic.

Each round trip: a request offering tools → the scripted model asks for calls → the next request
carries the results (the fake server's responder sees them as ``tool`` messages) → a final text.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import anthropic
import openai
import pytest

from dialectic.core.errors import BadRequest, ToolsUnsupported
from dialectic.llm.anthropic_provider import AnthropicProvider
from dialectic.llm.base import (
    FINISH_STOP,
    FINISH_TOOL_CALLS,
    Completion,
    CompletionRequest,
    LLMProvider,
    Message,
    ToolCall,
    ToolSpec,
    supports_tools,
)
from dialectic.llm.openai_provider import OpenAIProvider
from dialectic.llm.scripted import Script, ScriptedReply
from dialectic.testing.fake_server import FakeLLMServer, Fault
from dialectic.testing.wire import error_body

FILE_READ = ToolSpec(
    "file_read",
    "Read a file of the context directory.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
LIST_FILES = ToolSpec("list_files", "List the files.", {"type": "object", "properties": {"path": {"type": "string"}}})
TOOLS = (FILE_READ, LIST_FILES)
API_NAMES = ("responses", "chat", "anthropic")


class ToolModel:
    """A responder that asks for ``calls`` until it sees results, then answers with the results it saw."""

    def __init__(self, *calls: ToolCall, text: str = "") -> None:
        self.calls = calls
        self.text = text
        self.requests: list[CompletionRequest] = []

    def __call__(self, request: CompletionRequest) -> Script:
        self.requests.append(request)
        results = [m for m in request.messages if m.role == "tool"]
        if not results:
            return ScriptedReply(text=self.text, tool_calls=self.calls)
        return "Answer from " + "; ".join(f"{m.tool_call_id}={m.content}" for m in results)


def ask(**changes: Any) -> CompletionRequest:
    request = CompletionRequest(
        messages=(Message("system", "You are an architect."), Message("user", "Which port?")),
        model="model-test",
        max_tokens=200,
        tools=TOOLS,
    )
    return request.with_changes(**changes)


def follow_up(request: CompletionRequest, reply: Completion, results: dict[str, str]) -> CompletionRequest:
    """The next step of a tool loop: the assistant's calls, then one ``tool`` message per call."""
    turn = Message("assistant", reply.text, tool_calls=reply.tool_calls)
    answers = tuple(Message("tool", results[call.id], tool_call_id=call.id) for call in reply.tool_calls)
    return request.with_changes(messages=(*request.messages, turn, *answers))


def make_provider(api: str, server: FakeLLMServer) -> LLMProvider:
    if api == "anthropic":
        return AnthropicProvider(api_key="k", base_url=server.anthropic_base_url, timeout_s=5.0)
    return OpenAIProvider(api_key="k", base_url=server.openai_base_url, timeout_s=5.0, api=api)


def serve(api: str, responder: Callable[[CompletionRequest], Script]) -> FakeLLMServer:
    return FakeLLMServer(responder, responses_api=api != "chat")


def run(api: str, server: FakeLLMServer, scenario: Callable[[LLMProvider], Any]) -> Any:
    async def main() -> Any:
        provider = make_provider(api, server)
        try:
            return await scenario(provider)
        finally:
            await provider.aclose()

    return asyncio.run(main())


def wire_path(api: str) -> str:
    return {"responses": "/v1/responses", "chat": "/v1/chat/completions", "anthropic": "/v1/messages"}[api]


def test_the_sdk_providers_say_they_do_tools() -> None:
    assert supports_tools(OpenAIProvider(api_key="k", base_url="http://127.0.0.1:9/v1"))
    assert supports_tools(AnthropicProvider(api_key="k", base_url="http://127.0.0.1:9"))


@pytest.mark.parametrize("api", API_NAMES)
def test_round_trip_call_result_answer(api: str) -> None:
    model = ToolModel(ToolCall("call_a1", "file_read", {"path": "config.py"}))

    async def scenario(provider: LLMProvider) -> tuple[Completion, Completion]:
        first = await provider.complete(ask())
        second = await provider.complete(follow_up(ask(), first, {first.tool_calls[0].id: "PORT = 8731"}))
        return first, second

    with serve(api, model) as server:
        first, second = run(api, server, scenario)
        paths = server.paths()
    assert paths == [wire_path(api)] * 2  # the agent's api setting decides, no probing
    assert first.finish_reason == FINISH_TOOL_CALLS and first.text == ""
    assert len(first.tool_calls) == 1
    call = first.tool_calls[0]
    assert (call.id, call.name, call.arguments) == ("call_a1", "file_read", {"path": "config.py"})
    assert json.loads(call.arguments_text) == {"path": "config.py"}
    # the server saw the tools offered, and then the call and its result
    offered = model.requests[0].tools
    assert [t.name for t in offered] == ["file_read", "list_files"]
    assert offered[0].parameters == FILE_READ.parameters and offered[0].description == FILE_READ.description
    seen = model.requests[1].messages
    assert [m.role for m in seen] == ["system", "user", "assistant", "tool"]
    assert seen[2].tool_calls[0].name == "file_read" and seen[2].tool_calls[0].arguments == {"path": "config.py"}
    assert seen[2].tool_calls[0].id == "call_a1"
    assert seen[3].tool_call_id == "call_a1" and seen[3].content == "PORT = 8731"
    assert second.finish_reason == FINISH_STOP and second.tool_calls == ()
    assert second.text == "Answer from call_a1=PORT = 8731"


@pytest.mark.parametrize("api", API_NAMES)
def test_several_calls_in_one_reply_with_text(api: str) -> None:
    model = ToolModel(
        ToolCall("call_1", "list_files", {}),
        ToolCall("call_2", "file_read", {"path": "a.py"}),
        text="Let me look.",
    )

    async def scenario(provider: LLMProvider) -> tuple[Completion, Completion]:
        first = await provider.complete(ask())
        results = {first.tool_calls[0].id: "a.py", first.tool_calls[1].id: "x = 1"}
        return first, await provider.complete(follow_up(ask(), first, results))

    with serve(api, model) as server:
        first, second = run(api, server, scenario)
        last_body = server.requests[-1].body
    assert first.text == "Let me look." and first.finish_reason == FINISH_TOOL_CALLS
    assert [(c.id, c.name, c.arguments) for c in first.tool_calls] == [
        ("call_1", "list_files", {}),
        ("call_2", "file_read", {"path": "a.py"}),
    ]
    seen = model.requests[1].messages
    assert [m.role for m in seen] == ["system", "user", "assistant", "tool", "tool"]
    assert seen[2].content == "Let me look." and len(seen[2].tool_calls) == 2
    assert [m.tool_call_id for m in seen[3:]] == ["call_1", "call_2"]
    assert second.text == "Answer from call_1=a.py; call_2=x = 1"
    if api == "anthropic":  # both results in ONE user message, after the assistant's text and tool_use blocks
        assistant, results = last_body["messages"][1], last_body["messages"][2]
        assert [b["type"] for b in assistant["content"]] == ["text", "tool_use", "tool_use"]
        assert results["role"] == "user" and len(last_body["messages"]) == 3
        assert [(b["type"], b["tool_use_id"]) for b in results["content"]] == [
            ("tool_result", "call_1"),
            ("tool_result", "call_2"),
        ]


@pytest.mark.parametrize("api", ["responses", "chat"])
@pytest.mark.parametrize("raw", ['{"path": "a.py"', "[1, 2]", "not json"])
def test_arguments_that_are_not_a_json_object_give_empty_arguments(api: str, raw: str) -> None:
    model = ToolModel(ToolCall("call_x", "file_read", {}, arguments_text=raw))

    async def scenario(provider: LLMProvider) -> Completion:
        return await provider.complete(ask())

    with serve(api, model) as server:
        reply = run(api, server, scenario)
    call = reply.tool_calls[0]
    assert call.arguments == {} and call.arguments_text == raw and call.name == "file_read"


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_the_models_own_argument_text_goes_back_unchanged(api: str) -> None:
    model = ToolModel(ToolCall("call_x", "file_read", {}, arguments_text='{"path": '))

    async def scenario(provider: LLMProvider) -> Completion:
        first = await provider.complete(ask())
        return await provider.complete(follow_up(ask(), first, {"call_x": "error: arguments are not JSON"}))

    with serve(api, model) as server:
        run(api, server, scenario)
        body = server.requests[-1].body
    if api == "chat":
        sent = body["messages"][2]
        assert sent["role"] == "assistant" and sent["content"] is None
        assert sent["tool_calls"] == [
            {"id": "call_x", "type": "function", "function": {"name": "file_read", "arguments": '{"path": '}}
        ]
        assert body["messages"][3] == {
            "role": "tool",
            "tool_call_id": "call_x",
            "content": "error: arguments are not JSON",
        }
        assert body["tools"][0] == {
            "type": "function",
            "function": {"name": "file_read", "description": FILE_READ.description, "parameters": FILE_READ.parameters},
        }
    else:
        assert body["input"][1:] == [
            {"type": "function_call", "call_id": "call_x", "name": "file_read", "arguments": '{"path": '},
            {"type": "function_call_output", "call_id": "call_x", "output": "error: arguments are not JSON"},
        ]
        assert body["tools"][0] == {
            "type": "function",
            "name": "file_read",
            "description": FILE_READ.description,
            "parameters": FILE_READ.parameters,
            "strict": False,
        }


def test_anthropic_sends_tools_with_input_schema_and_no_forced_choice() -> None:
    model = ToolModel(ToolCall("toolu_1", "file_read", {"path": "a.py"}))

    async def scenario(provider: LLMProvider) -> Completion:
        return await provider.complete(ask())

    with serve("anthropic", model) as server:
        run("anthropic", server, scenario)
        body = server.requests[0].body
    assert body["tools"] == [
        {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in TOOLS
    ]
    assert "tool_choice" not in body


def test_anthropic_history_with_tool_turns_but_no_tools_is_written_as_text() -> None:
    """A loop's last step may offer no tools; Anthropic refuses tool blocks then, so they go as text."""
    model = ToolModel(ToolCall("toolu_1", "file_read", {"path": "a.py"}))

    async def scenario(provider: LLMProvider) -> Completion:
        first = await provider.complete(ask())
        return await provider.complete(follow_up(ask(), first, {"toolu_1": "x = 1"}).with_changes(tools=()))

    with serve("anthropic", model) as server:
        final = run("anthropic", server, scenario)
        body = server.requests[-1].body
    assert "tools" not in body
    assert body["messages"][1] == {"role": "assistant", "content": '[called file_read {"path": "a.py"} as toolu_1]'}
    assert body["messages"][2] == {"role": "user", "content": "Result of tool call toolu_1:\nx = 1"}
    assert final.tool_calls == () and final.finish_reason == FINISH_STOP


def test_a_tool_result_followed_by_user_text_shares_the_user_message() -> None:
    from dialectic.llm.anthropic_provider import messages_param

    conversation = (
        Message("user", "Which port?"),
        Message("assistant", "", tool_calls=(ToolCall("t1", "file_read", {"path": "a"}),)),
        Message("tool", "PORT = 1", tool_call_id="t1"),
        Message("user", "Now answer."),
    )
    messages = messages_param(conversation, with_tools=True)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [{"type": "tool_use", "id": "t1", "name": "file_read", "input": {"path": "a"}}]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "PORT = 1"},
        {"type": "text", "text": "Now answer."},
    ]


def test_calls_are_only_returned_to_a_request_offering_tools() -> None:
    model = ToolModel(ToolCall("call_1", "file_read", {"path": "a.py"}), text="plain")

    async def scenario(provider: LLMProvider) -> Completion:
        return await provider.complete(ask(tools=()))

    with serve("chat", model) as server:
        reply = run("chat", server, scenario)
        body = server.requests[0].body
    assert "tools" not in body and reply.tool_calls == () and reply.text == "plain"


@pytest.mark.parametrize("api", ["responses", "chat"])
@pytest.mark.parametrize(
    "message", ["tools are not supported by this server", "'tool_choice' is unknown", "function calling is disabled"]
)
def test_an_endpoint_rejecting_tools_raises_tools_unsupported(api: str, message: str) -> None:
    async def scenario(provider: LLMProvider) -> Completion:
        return await provider.complete(ask())

    with serve(api, ToolModel()) as server:
        server.inject(Fault("status", status=400, body=error_body(api, 400, message)))
        with pytest.raises(ToolsUnsupported) as caught:
            run(api, server, scenario)
        endpoint = server.openai_base_url
    error = caught.value
    assert isinstance(error, BadRequest) and not error.retryable and error.status_code == 400
    assert endpoint in error.message and error.endpoint.rstrip("/") == endpoint
    assert "does not accept tools" in error.message and error.detail == message


@pytest.mark.parametrize(
    ("tools", "message"),
    [(TOOLS, "temperature must be at most 2"), ((), "tools are not supported by this server")],
    ids=["not-about-tools", "no-tools-offered"],
)
def test_other_bad_requests_stay_bad_requests(tools: tuple[ToolSpec, ...], message: str) -> None:
    async def scenario(provider: LLMProvider) -> Completion:
        return await provider.complete(ask(tools=tools))

    with serve("chat", ToolModel()) as server:
        server.inject(Fault("status", status=400, body=error_body("chat", 400, message)))
        with pytest.raises(BadRequest) as caught:
            run("chat", server, scenario)
    assert not isinstance(caught.value, ToolsUnsupported)


def test_streamed_chat_chunks_carry_the_calls_as_the_sdk_reads_them() -> None:
    model = ToolModel(ToolCall("call_1", "list_files", {}), ToolCall("call_2", "file_read", {"path": "a.py"}))

    async def scenario() -> tuple[list[Any], str | None]:
        client = openai.AsyncOpenAI(api_key="k", base_url=server.openai_base_url, max_retries=0)
        calls: dict[int, Any] = {}
        finish = None
        try:
            stream = await client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "hi"}],
                tools=[{"type": "function", "function": {"name": "list_files", "parameters": {"type": "object"}}}],
                stream=True,
            )
            async for chunk in stream:
                for choice in chunk.choices:
                    for delta in choice.delta.tool_calls or []:
                        calls[delta.index] = delta
                    finish = choice.finish_reason or finish
        finally:
            await client.close()
        return [calls[i] for i in sorted(calls)], finish

    with serve("chat", model) as server:
        calls, finish = asyncio.run(scenario())
    assert finish == "tool_calls"
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("call_1", "list_files", {}),
        ("call_2", "file_read", {"path": "a.py"}),
    ]


def test_streamed_anthropic_events_carry_the_calls_as_the_sdk_reads_them() -> None:
    model = ToolModel(ToolCall("toolu_1", "file_read", {"path": "a.py"}), text="Reading.")

    async def scenario() -> Any:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=server.anthropic_base_url, max_retries=0)
        try:
            async with client.messages.stream(
                model="m",
                max_tokens=100,
                messages=[{"role": "user", "content": "hi"}],
                tools=[{"name": "file_read", "input_schema": {"type": "object"}}],
            ) as stream:
                return await stream.get_final_message()
        finally:
            await client.close()

    with serve("anthropic", model) as server:
        message = asyncio.run(scenario())
    assert message.stop_reason == "tool_use"
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.content[0].text == "Reading."
    assert (message.content[1].id, message.content[1].name, message.content[1].input) == (
        "toolu_1",
        "file_read",
        {"path": "a.py"},
    )


def test_only_the_servers_words_decide_that_tools_were_rejected() -> None:
    from dialectic.core.errors import ContextWindowExceeded
    from dialectic.llm.openai_provider import rejects_tools

    named_model = BadRequest("openai: bad request (400) on model functionary-small", detail="temperature too high")
    assert not rejects_tools(named_model)
    assert rejects_tools(BadRequest("openai: bad request (400)", detail="Tools are not supported"))
    assert not rejects_tools(ContextWindowExceeded("too long", detail="function context exceeded"))


@pytest.mark.parametrize("api", API_NAMES)
def test_the_client_takes_a_tool_step_unstreamed_and_keeps_the_calls(api: str) -> None:
    """Through ``LLMClient`` (retries and all), as the agents' tool loop calls it."""
    from dialectic.llm.client import LLMClient
    from dialectic.llm.retry import RetryPolicy

    model = ToolModel(ToolCall("call_1", "file_read", {"path": "a.py"}))

    async def scenario(provider: LLMProvider) -> Completion:
        return await LLMClient(provider, retry=RetryPolicy(max_attempts=3)).complete(ask())

    with serve(api, model) as server:
        reply = run(api, server, scenario)
        bodies = [r.body for r in server.requests if r.path == wire_path(api)]
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [("call_1", "file_read", {"path": "a.py"})]
    assert reply.finish_reason == FINISH_TOOL_CALLS and not reply.truncated
    assert len(bodies) == 1 and not bodies[0].get("stream")


def test_the_client_does_not_retry_an_endpoint_that_rejects_tools() -> None:
    from dialectic.llm.client import LLMClient
    from dialectic.llm.retry import RetryPolicy

    async def scenario(provider: LLMProvider) -> Completion:
        return await LLMClient(provider, retry=RetryPolicy(max_attempts=3)).complete(ask())

    with serve("chat", ToolModel()) as server:
        server.inject(Fault("status", status=400, body=error_body("chat", 400, "tool use is not enabled")), times=3)
        with pytest.raises(ToolsUnsupported):
            run("chat", server, scenario)
        assert server.paths() == ["/v1/chat/completions"]
