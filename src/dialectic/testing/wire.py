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

What llama.cpp's ``llama-server`` says differently (the fake server's strict mode):
:func:`responses_input_error` (its checks of Responses input items), :func:`llama_error_body`,
:func:`prompt_tokens` (the fake's token count of a prompt), :func:`timings`, :func:`llama_models`
and :func:`llama_props`.
"""

from __future__ import annotations

import json
import math
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
MODEL_PATH = "models/qwen2.5-0.5b-instruct-q4_k_m.gguf"
"""The GGUF file a strict fake server pretends to have loaded: llama-server names its model by the
path it was given with ``-m``, and answers every request with that name, whatever model was asked."""
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


def responses_body(c: Completion, body: dict[str, Any], *, always_completed: bool = False) -> dict[str, Any]:
    """A Responses reply: a message item (left out when there are calls and no text), then a ``function_call`` each.

    A reply cut off by the token limit is ``incomplete`` (reason ``max_output_tokens``), unless
    ``always_completed``: llama-server says ``completed``, with no ``incomplete_details``, whatever stopped it.
    """
    cut = c.cut_off and not always_completed
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
    reply: dict[str, Any] = {
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
    if always_completed:
        del reply["incomplete_details"]
    return reply


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


FAKE_LOGPROB = -0.05
"""The log-probability the fake server gives every token when a request asks for them."""


def chat_logprobs(text: str) -> dict[str, Any]:
    """``choices[0].logprobs`` as llama-server writes it: the reply cut into 3-character tokens."""
    pieces = [text[i : i + 3] for i in range(0, len(text), 3)]
    return {"content": [{"token": piece, "logprob": FAKE_LOGPROB, "top_logprobs": []} for piece in pieces]}


def chat_body(c: Completion, *, logprobs: bool = False) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": c.text if c.text or not c.tool_calls else None}
    if c.tool_calls:
        message["tool_calls"] = _chat_tool_calls(c)
    scores = chat_logprobs(c.text) if logprobs and c.text else None
    return {
        "id": _new_id("chatcmpl-"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": c.model,
        "choices": [{"index": 0, "message": message, "finish_reason": _chat_finish(c), "logprobs": scores}],
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


# llama.cpp's llama-server (the llama.cpp tree of llama-cpp-python 0.3.36, tools/server)

_INPUT_ROLES = ("user", "system", "developer")
_CANNOT_CLASSIFY = "Cannot determine type of 'item'"


def llama_error_body(message: str, kind: str = "invalid_request_error", **extra: Any) -> str:
    """llama-server's JSON error body; its status is 400 for both kinds used here (``invalid_request_error``
    and ``exceed_context_size_error``, which adds ``n_prompt_tokens`` and ``n_ctx``)."""
    return json.dumps({"error": {"code": 400, "message": message, "type": kind, **extra}})


def responses_input_error(body: dict[str, Any]) -> str | None:
    """Why llama-server refuses this Responses body's ``input`` (its 400 message), or None when it takes it.

    llama-server turns Responses input into chat messages item by item and refuses an item it
    cannot classify. An item needs no ``type`` only when it is an input message (role ``user``,
    ``system`` or ``developer``); an untyped ``assistant`` item, for one, is refused with
    "Cannot determine type of 'item'". This mirrors ``server_chat_convert_responses_to_chatcmpl``;
    images and reasoning items are let through without their finer checks.
    """
    if body.get("previous_response_id"):
        return "llama.cpp does not support 'previous_response_id'."
    if "input" not in body:
        return "'input' is required"
    items = body["input"]
    if isinstance(items, str):
        return None
    if not isinstance(items, list):
        return "'input' must be a string or array of objects"
    return next((error for item in items if (error := _item_error(item)) is not None), None)


def _item_error(item: Any) -> str | None:
    if not isinstance(item, dict):
        return _CANNOT_CLASSIFY
    content, role, kind = item.get("content"), item.get("role"), item.get("type")
    if isinstance(content, str):
        content = [{"type": "input_text", "text": content}]
    if isinstance(content, list) and role in _INPUT_ROLES:
        for part in content:
            part_type = part.get("type") if isinstance(part, dict) else None
            if part_type == "input_text" and "text" not in part:
                return "'Input text' requires 'text'"
            if part_type == "input_file":
                return "'input_file' is not supported by llamacpp at this moment"
            if part_type not in ("input_text", "input_image"):
                return "'type' must be one of 'input_text', 'input_image', or 'input_file'"
        return None
    if role == "assistant" and kind == "message":
        for part in content if isinstance(content, list) else []:
            part_type = part.get("type") if isinstance(part, dict) else None
            if part_type in ("output_text", "input_text") and not isinstance(part.get("text"), str):
                return "'Output text' requires 'text'"
            if part_type not in ("output_text", "input_text", "refusal"):
                return "'type' must be one of 'output_text' or 'refusal'"
        return None
    if kind == "function_call" and all(isinstance(item.get(key), str) for key in ("arguments", "call_id", "name")):
        return None
    output = item.get("output")
    if kind == "function_call_output" and isinstance(item.get("call_id"), str) and isinstance(output, (str, list)):
        return None
    if kind == "reasoning" and isinstance(item.get("summary"), list):
        return None
    return _CANNOT_CLASSIFY


def prompt_tokens(request: CompletionRequest) -> int:
    """The fake's count of a prompt's tokens: ceil(characters / 4).

    The characters are those of every message (the system prompt or Responses ``instructions``
    included), of the calls made in it (names and arguments) and of every tool offered (name,
    description and parameter schema as JSON). A real tokenizer gives about four characters of
    English a token; what matters here is that the count grows with the prompt and is the same
    whichever API carried it (it is taken from the parsed request, not from the body's JSON).
    """
    chars = sum(
        len(m.content) + sum(len(call.name) + len(_arguments(call)) for call in m.tool_calls) for m in request.messages
    )
    chars += sum(len(t.name) + len(t.description) + len(json.dumps(t.parameters)) for t in request.tools)
    return math.ceil(chars / 4)


_PROMPT_MS_PER_TOKEN = 0.5
_PREDICTED_MS_PER_TOKEN = 20.0


def timings(c: Completion) -> dict[str, Any]:
    """llama-server's ``timings`` of a reply, at made-up steady speeds (2000 prompt tokens/s, 50 generated/s)."""
    prompt_n, predicted_n = c.usage.input_tokens, c.usage.output_tokens
    prompt_ms, predicted_ms = prompt_n * _PROMPT_MS_PER_TOKEN, predicted_n * _PREDICTED_MS_PER_TOKEN
    return {
        "cache_n": 0,
        "prompt_n": prompt_n,
        "prompt_ms": prompt_ms,
        "prompt_per_token_ms": _PROMPT_MS_PER_TOKEN,
        "prompt_per_second": 1000 / _PROMPT_MS_PER_TOKEN,
        "predicted_n": predicted_n,
        "predicted_ms": predicted_ms,
        "predicted_per_token_ms": _PREDICTED_MS_PER_TOKEN,
        "predicted_per_second": 1000 / _PREDICTED_MS_PER_TOKEN,
    }


def llama_models(n_ctx: int) -> dict[str, Any]:
    """``GET /v1/models``: the one model loaded, named by its path, with the figures of a Qwen2.5 0.5B Q4_K_M GGUF."""
    meta = {
        "vocab_type": 2,
        "n_vocab": 151936,
        "n_ctx": n_ctx,
        "n_ctx_train": 32768,
        "n_embd": 896,
        "n_params": 494032768,
        "size": 491400032,
    }
    model = {"id": MODEL_PATH, "aliases": [], "tags": [], "object": "model", "created": int(time.time())}
    return {"object": "list", "data": [{**model, "owned_by": "llamacpp", "meta": meta}]}


def llama_props(n_ctx: int, slots: int) -> dict[str, Any]:
    """``GET /props``: ``default_generation_settings.n_ctx`` is one slot's context, ``total_slots`` their number."""
    params = {"n_predict": -1, "temperature": 0.8, "top_k": 40, "top_p": 0.95, "min_p": 0.05, "seed": -1}
    return {
        "default_generation_settings": {"n_ctx": n_ctx, "params": params},
        "total_slots": slots,
        "model_alias": MODEL_PATH,
        "model_path": MODEL_PATH,
        "modalities": {"vision": False, "video": False, "audio": False},
        "build_info": "fake",
    }
