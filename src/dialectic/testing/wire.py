"""The wire formats the fake server speaks: requests read, and replies written, as the official SDKs expect.

* OpenAI Responses (``POST /v1/responses``): :func:`responses_body`;
* OpenAI Chat Completions (``POST /v1/chat/completions``): :func:`chat_body`, and SSE chunks
  (:func:`chat_chunks`) with a usage chunk when asked;
* Anthropic Messages (``POST /v1/messages``): :func:`anthropic_body`, and its stream events
  (:func:`anthropic_events`).

:func:`completion_request` turns any of those request bodies into a :class:`CompletionRequest`,
tools and tool turns included (Chat ``tools``/``tool_calls``/``tool`` messages, Responses
function tools and ``function_call``/``function_call_output`` items, Anthropic ``tools`` and
``tool_use``/``tool_result`` blocks); a completion's ``tool_calls`` are written back in each format.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any, Literal

from dialectic.llm.base import (
    FINISH_LENGTH,
    Completion,
    CompletionRequest,
    JsonSchema,
    Message,
    Role,
    ToolCall,
    ToolSpec,
)
from dialectic.llm.tool_arguments import arguments_json, parse_arguments

Api = Literal["responses", "chat", "anthropic"]
APIS: dict[str, Api] = {"/v1/responses": "responses", "/v1/chat/completions": "chat", "/v1/messages": "anthropic"}
"""Request path → the API it speaks."""
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def error_body(api: Api, status: int, message: str) -> str:
    """The JSON error body a server of ``api`` sends with ``status``."""
    error = {"message": message, "type": _ERROR_TYPES.get(status, "api_error")}
    payload = {"type": "error", "error": error} if api == "anthropic" else {"error": {**error, "code": None}}
    return json.dumps(payload)


def _text_of(content: Any) -> str:
    """Message content as text: a string, or the text parts of a list of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _role(value: Any) -> Role:
    return "system" if value in ("system", "developer") else "assistant" if value == "assistant" else "user"


def _messages(items: Any) -> list[Message]:
    return [Message(_role(m.get("role")), _text_of(m.get("content"))) for m in items or [] if isinstance(m, dict)]


def _call(call_id: Any, name: Any, arguments: Any) -> ToolCall:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id=str(call_id or ""), name=str(name or ""), arguments=parse_arguments(text), arguments_text=text)


def _chat_messages(items: Any) -> list[Message]:
    """Chat messages, with assistant ``tool_calls`` and ``tool`` results."""
    messages: list[Message] = []
    for m in items or []:
        if not isinstance(m, dict):
            continue
        if m.get("role") == "tool":
            messages.append(Message("tool", _text_of(m.get("content")), tool_call_id=str(m.get("tool_call_id") or "")))
            continue
        calls = tuple(
            _call(c.get("id"), (c.get("function") or {}).get("name"), (c.get("function") or {}).get("arguments"))
            for c in m.get("tool_calls") or []
            if isinstance(c, dict)
        )
        messages.append(Message(_role(m.get("role")), _text_of(m.get("content")), tool_calls=calls))
    return messages


def _responses_messages(items: Any) -> list[Message]:
    """Responses input items; a ``function_call`` joins the assistant turn it follows (or starts one)."""
    messages: list[Message] = []
    for item in items or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "function_call":
            call = _call(item.get("call_id"), item.get("name"), item.get("arguments"))
            if messages and messages[-1].role == "assistant":
                messages[-1] = replace(messages[-1], tool_calls=(*messages[-1].tool_calls, call))
            else:
                messages.append(Message("assistant", "", tool_calls=(call,)))
        elif kind == "function_call_output":
            output = item.get("output")
            text = output if isinstance(output, str) else _text_of(output)
            messages.append(Message("tool", text, tool_call_id=str(item.get("call_id") or "")))
        elif kind in (None, "message"):
            messages.append(Message(_role(item.get("role")), _text_of(item.get("content"))))
    return messages


def _anthropic_messages(items: Any) -> list[Message]:
    """Messages whose content may be blocks: ``tool_use`` on assistant turns, ``tool_result`` in user turns."""
    messages: list[Message] = []
    for m in items or []:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        role = _role(m.get("role"))
        if not isinstance(content, list):
            messages.append(Message(role, _text_of(content)))
            continue
        blocks = [b for b in content if isinstance(b, dict)]
        for block in blocks:
            if block.get("type") == "tool_result":
                result = block.get("content")
                text = result if isinstance(result, str) else _text_of(result)
                messages.append(Message("tool", text, tool_call_id=str(block.get("tool_use_id") or "")))
        text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        calls = tuple(_call(b.get("id"), b.get("name"), b.get("input")) for b in blocks if b.get("type") == "tool_use")
        if text or calls or not blocks:
            messages.append(Message(role, text, tool_calls=calls))
    return messages


def _tool_spec(name: Any, description: Any, parameters: Any) -> ToolSpec:
    return ToolSpec(str(name or ""), str(description or ""), parameters if isinstance(parameters, dict) else {})


def completion_request(api: Api, body: dict[str, Any]) -> CompletionRequest:
    """The :class:`CompletionRequest` an OpenAI Responses / Chat or Anthropic Messages body asks for."""
    schema: JsonSchema | None = None
    tools: list[ToolSpec] = []
    if api == "responses":
        items = body.get("input")
        messages = [Message("system", body["instructions"])] if body.get("instructions") else []
        messages += _responses_messages([{"role": "user", "content": items}] if isinstance(items, str) else items)
        tools = [
            _tool_spec(t.get("name"), t.get("description"), t.get("parameters"))
            for t in body.get("tools") or []
            if t.get("type") == "function"
        ]
        fmt = (body.get("text") or {}).get("format") or {}
        if fmt.get("type") == "json_schema":
            schema = JsonSchema(fmt.get("name", "output"), fmt.get("schema") or {})
        max_tokens = body.get("max_output_tokens")
    elif api == "chat":
        messages = _chat_messages(body.get("messages"))
        tools = [
            _tool_spec(f.get("name"), f.get("description"), f.get("parameters"))
            for f in (t.get("function") or {} for t in body.get("tools") or [] if t.get("type") == "function")
        ]
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            spec = fmt.get("json_schema") or {}
            schema = JsonSchema(spec.get("name", "output"), spec.get("schema") or {})
        max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
    else:
        system = _text_of(body.get("system"))
        messages = ([Message("system", system)] if system else []) + _anthropic_messages(body.get("messages"))
        chosen = (body.get("tool_choice") or {}).get("name")
        tool = next((t for t in body.get("tools") or [] if t.get("name") == chosen), None)
        if tool is not None:
            schema = JsonSchema(tool["name"], tool.get("input_schema") or {})
        else:
            tools = [
                _tool_spec(t.get("name"), t.get("description"), t.get("input_schema")) for t in body.get("tools") or []
            ]
        max_tokens = body.get("max_tokens")
    return CompletionRequest(
        messages=tuple(messages),
        model=str(body.get("model", "")),
        temperature=body.get("temperature"),
        max_tokens=max_tokens,
        json_schema=schema,
        tools=tuple(tools),
    )


def cut_off(completion: Completion) -> Completion:
    """``completion`` cut off by the token limit: half its words, finish reason ``length``."""
    words = completion.text.split(" ")
    return replace(
        completion, text=" ".join(words[: max(1, len(words) // 2)]), finish_reason=FINISH_LENGTH, structured=None
    )


def pieces(text: str) -> list[str]:
    """The text in streamed pieces: one word each, with its leading space."""
    words = text.split(" ")
    return [word if i == 0 else " " + word for i, word in enumerate(words)]


def _new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


def _call_id(call: ToolCall) -> str:
    return call.id or _new_id("call_")


def _arguments(call: ToolCall) -> str:
    """The arguments as the model sent them: ``arguments_text`` when set (so a test can send broken JSON)."""
    return arguments_json(call.arguments, call.arguments_text)


def responses_body(c: Completion, body: dict[str, Any]) -> dict[str, Any]:
    """A Responses reply: a message item (left out when there are calls and no text), then a ``function_call`` each."""
    cut = c.cut_off
    message = {
        "type": "message",
        "id": _new_id("msg_"),
        "role": "assistant",
        "status": "incomplete" if cut else "completed",
        "content": [{"type": "output_text", "text": c.text, "annotations": []}],
    }
    calls = [
        {
            "type": "function_call",
            "id": _new_id("fc_"),
            "call_id": _call_id(call),
            "name": call.name,
            "arguments": _arguments(call),
            "status": "completed",
        }
        for call in c.tool_calls
    ]
    return {
        "id": _new_id("resp_"),
        "object": "response",
        "created_at": int(time.time()),
        "model": c.model,
        "status": "incomplete" if cut else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "error": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "temperature": body.get("temperature"),
        "output": ([message] if c.text or not calls else []) + calls,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "text": body.get("text") or {"format": {"type": "text"}},
        "usage": {
            "input_tokens": c.usage.input_tokens,
            "output_tokens": c.usage.output_tokens,
            "total_tokens": c.usage.total_tokens,
            "input_tokens_details": {"cached_tokens": c.usage.cached_input_tokens or 0, "cache_write_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _chat_usage(c: Completion) -> dict[str, Any]:
    return {
        "prompt_tokens": c.usage.input_tokens,
        "completion_tokens": c.usage.output_tokens,
        "total_tokens": c.usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": c.usage.cached_input_tokens or 0},
    }


def _chat_finish(c: Completion) -> str:
    return "length" if c.cut_off else "tool_calls" if c.tool_calls else "stop"


def _chat_tool_calls(c: Completion) -> list[dict[str, Any]]:
    return [
        {"id": _call_id(call), "type": "function", "function": {"name": call.name, "arguments": _arguments(call)}}
        for call in c.tool_calls
    ]


def chat_body(c: Completion) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": c.text if c.text or not c.tool_calls else None}
    if c.tool_calls:
        message["tool_calls"] = _chat_tool_calls(c)
    return {
        "id": _new_id("chatcmpl-"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": c.model,
        "choices": [{"index": 0, "message": message, "finish_reason": _chat_finish(c), "logprobs": None}],
        "usage": _chat_usage(c),
    }


def chat_chunks(c: Completion, include_usage: bool) -> Iterator[dict[str, Any]]:
    base = {
        "id": _new_id("chatcmpl-"),
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": c.model,
    }
    for i, piece in enumerate(pieces(c.text) if c.text or not c.tool_calls else []):
        delta = {"role": "assistant", "content": piece} if i == 0 else {"content": piece}
        yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    for index, call in enumerate(_chat_tool_calls(c)):  # each call whole in one delta, as many servers send them
        call_delta = {"tool_calls": [{"index": index, **call}]}
        yield {**base, "choices": [{"index": 0, "delta": call_delta, "finish_reason": None}]}
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": _chat_finish(c)}]}
    if include_usage:
        yield {**base, "choices": [], "usage": _chat_usage(c)}


def anthropic_body(c: Completion, request: CompletionRequest) -> dict[str, Any]:
    """A Messages reply: a tool_use block for a structured request whose reply is a JSON object; the text
    and a tool_use block per call for a reply calling tools; else text."""
    if request.json_schema is not None and not c.cut_off and isinstance(c.structured, dict):
        content: list[dict[str, Any]] = [
            {"type": "tool_use", "id": _new_id("toolu_"), "name": request.json_schema.name, "input": c.structured}
        ]
        stop = "tool_use"
    elif c.tool_calls:
        content = [{"type": "text", "text": c.text}] if c.text else []
        content += [
            {"type": "tool_use", "id": call.id or _new_id("toolu_"), "name": call.name, "input": call.arguments}
            for call in c.tool_calls
        ]
        stop = "max_tokens" if c.cut_off else "tool_use"
    else:
        content = [{"type": "text", "text": c.text}]
        stop = "max_tokens" if c.cut_off else "end_turn"
    return {
        "id": _new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": c.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": c.usage.input_tokens, "output_tokens": c.usage.output_tokens},
    }


def anthropic_events(c: Completion, request: CompletionRequest) -> Iterator[tuple[str, dict[str, Any]]]:
    message = anthropic_body(c, request)
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": c.usage.input_tokens, "output_tokens": 0},
    }
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            opening = {**block, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
        else:
            opening = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in pieces(block["text"])]
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": opening}
        for delta in deltas:
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": c.usage.output_tokens},
        },
    )
    yield "message_stop", {"type": "message_stop"}
