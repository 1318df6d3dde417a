"""Anthropic's Messages API over our own HTTP wire (:mod:`dialectic.llm.http_wire`).

Structured output uses native tool use: one tool named after the schema, whose
``input_schema`` is the requested JSON schema (Anthropic requires it to describe an object),
forced with ``tool_choice``; the tool call's input is the structured value and its JSON dump
the text. The Messages API's request type (``anthropic`` 2.x, the tests' oracle of the shapes) has
no ``temperature`` parameter, so ``CompletionRequest.temperature`` is not sent. Replies and streamed
events are read as JSON; no SDK is imported. The wire never retries: :mod:`dialectic.llm.retry` does,
from the translated errors.

Native tool calling (``CompletionRequest.tools``) sends each tool as ``{name, description,
input_schema}``; the reply's ``tool_use`` blocks are the calls. The conversation goes back in
Anthropic's shape: an assistant turn with calls as text and ``tool_use`` blocks, and the results
as ``tool_result`` blocks in one user message per run of results (followed by the user's own
text when it comes next). A request without tools whose history holds tool turns (a loop's last
step, told to answer) writes those turns as text: Anthropic refuses ``tool_use`` blocks in a
request that defines no tools.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator

import httpx2

from dialectic.core.domain import Usage
from dialectic.core.errors import (
    InvalidResponse,
    ProviderError,
)
from dialectic.core.json_values import JsonObject, JsonValue
from dialectic.llm.base import (
    FINISH_LENGTH,
    FINISH_STOP,
    FINISH_TOOL_CALLS,
    Completion,
    CompletionRequest,
    Delta,
    Message,
    ToolCall,
)
from dialectic.llm.http_wire import (
    JsonWire,
    WireConnectionError,
    WireError,
    WireShapeError,
    WireStatusError,
    WireTimeout,
)
from dialectic.llm.provider_errors import SdkErrors, StatusDetails, translate
from dialectic.llm.sse import server_events
from dialectic.llm.wire_timing import measure

DEFAULT_MAX_TOKENS = 1024
DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
"""The ``anthropic-version`` header every request carries."""
PROVIDER = "anthropic"
_STOPPED = frozenset({None, "end_turn", "stop_sequence", "tool_use"})
Blocks = list[JsonObject]


def tool_name(schema_name: str) -> str:
    """A tool name Anthropic accepts (``[a-zA-Z0-9_-]{1,64}``) for a schema name."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", schema_name)[:64] or "output"


def _finish(stop_reason: str | None) -> str:
    return (
        FINISH_LENGTH if stop_reason == "max_tokens" else FINISH_STOP if stop_reason in _STOPPED else str(stop_reason)
    )


def messages_param(conversation: tuple[Message, ...], *, with_tools: bool) -> list[JsonObject]:
    """The conversation (no system messages) as Messages API messages.

    ``with_tools``: assistant calls become ``tool_use`` blocks and results ``tool_result`` blocks,
    consecutive results (and a user message right after them) sharing one user message, as the
    API wants every result of a turn in the message that follows it. Without tools, calls and
    results are written as text.
    """
    out: list[JsonObject] = []
    for message in conversation:
        role, content = _content(message, with_tools)
        if out and out[-1]["role"] == role == "user" and isinstance(out[-1]["content"], list):
            out[-1]["content"].extend(content if isinstance(content, list) else [{"type": "text", "text": content}])
        else:
            out.append({"role": role, "content": content})
    return out


def _content(message: Message, with_tools: bool) -> tuple[str, str | Blocks]:
    if message.role == "tool":
        if not with_tools:
            return "user", f"Result of tool call {message.tool_call_id}:\n{message.content}"
        return "user", [{"type": "tool_result", "tool_use_id": message.tool_call_id or "", "content": message.content}]
    if message.role == "assistant" and message.tool_calls:
        if not with_tools:
            calls = "\n".join(f"[called {c.name} {json.dumps(c.arguments)} as {c.id}]" for c in message.tool_calls)
            return "assistant", f"{message.content}\n{calls}" if message.content else calls
        blocks: Blocks = [{"type": "text", "text": message.content}] if message.content else []
        blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in message.tool_calls]
        return "assistant", blocks
    return ("assistant" if message.role == "assistant" else "user"), message.content


def _usage(
    input_tokens: int | None, output_tokens: int | None, cache_writes: int | None = None, cache_reads: int | None = None
) -> Usage:
    """Every input token counted as input (Anthropic reports cache writes and reads apart); reads as cached,
    writes as written (priced apart)."""
    used_in = (input_tokens or 0) + (cache_writes or 0) + (cache_reads or 0)
    used_out = output_tokens or 0
    return Usage(
        input_tokens=used_in,
        output_tokens=used_out,
        total_tokens=used_in + used_out,
        cached_input_tokens=cache_reads,
        cache_write_tokens=cache_writes,
    )


def _status_details(error: Exception) -> StatusDetails:
    """The message and code of an error body (``{"type": "error", "error": {"type", "message"}}``): the code is
    ``error.details.error_code`` when given, else the error's ``type``."""
    body = getattr(error, "body", None)
    inner = body.get("error") if isinstance(body, dict) else None
    if not isinstance(inner, dict):
        return StatusDetails(body.strip() or None if isinstance(body, str) else None)
    message = inner.get("message")
    details = inner.get("details")
    code = details.get("error_code") if isinstance(details, dict) else None
    kind = inner.get("type")
    return StatusDetails(
        message if isinstance(message, str) and message else None,
        code if isinstance(code, str) else (str(kind) if kind else None),
    )


SDK_ERRORS = SdkErrors(
    timeout=WireTimeout,
    connection=WireConnectionError,
    response_validation=WireShapeError,
    status=WireStatusError,
    stream=WireError,
    status_details=_status_details,
)


def translate_error(
    error: Exception, *, model: str, provider: str = PROVIDER, timeout_s: float | None = None
) -> ProviderError:
    """The ``dialectic.core.errors`` exception for a wire failure (or a body that is not JSON),
    by the one table of :mod:`dialectic.llm.provider_errors`; ``timeout_s`` is named in a timeout's message."""
    return translate(error, SDK_ERRORS, provider=provider, model=model, timeout_s=timeout_s)


def _tool_call(call_id: str, name: str, arguments: object) -> ToolCall:
    """A ``tool_use`` block as a call; an input that is not an object gives ``{}`` (its JSON kept as the text)."""
    text = json.dumps(arguments, ensure_ascii=False)
    return ToolCall(
        id=call_id, name=name, arguments=arguments if isinstance(arguments, dict) else {}, arguments_text=text
    )


def _usage_json(usage: object) -> Usage:
    """A reply's ``usage`` object as :class:`Usage` (none gives zeros)."""
    if not isinstance(usage, dict):
        return Usage()
    return _usage(
        usage.get("input_tokens"),
        usage.get("output_tokens"),
        usage.get("cache_creation_input_tokens"),
        usage.get("cache_read_input_tokens"),
    )


EPHEMERAL: JsonObject = {"type": "ephemeral"}


def with_breakpoints(options: JsonObject) -> None:
    """Mark ``options``' cache breakpoints in place: the system prompt (the participant's stable prefix)
    and the last turn of the conversation, so the next call, which repeats that history and adds to it,
    reads all of it from Anthropic's cache (reads cost a tenth of the input price). Two of the four
    breakpoints a request may carry."""
    system = options.get("system")
    if isinstance(system, str) and system:
        options["system"] = [{"type": "text", "text": system, "cache_control": EPHEMERAL}]
    messages = options.get("messages")
    if not messages:
        return
    last = messages[-1]
    content = last["content"]
    blocks: Blocks = [{"type": "text", "text": content}] if isinstance(content, str) else [dict(b) for b in content]
    if blocks and (blocks[-1].get("type") != "text" or blocks[-1].get("text")):
        blocks[-1]["cache_control"] = EPHEMERAL
        messages[-1] = {**last, "content": blocks}


CLAUDE_WINDOW = 200_000
"""Tokens one request to a Claude model holds (the standard window of every current Claude model)."""


class AnthropicProvider:
    """An :class:`~dialectic.llm.base.LLMProvider` for Anthropic's Messages API.

    ``timeout_s`` (default :data:`~dialectic.llm.timeouts.DEFAULT_CALL_TIMEOUT_S`) is an
    inactivity timeout: see :mod:`dialectic.llm.timeouts`. A request's own ``timeout_s`` wins.
    """

    supports_tools = True

    def __init__(
        self, *, api_key: str, base_url: str | None = None, timeout_s: float | None = None, prompt_cache: bool = True
    ) -> None:
        self.name = PROVIDER
        self.timeout_s = timeout_s
        self.prompt_cache = prompt_cache
        """Mark cache breakpoints on a participant's requests (see :func:`with_breakpoints`)."""
        # An empty key would send an empty credential header; servers reached through a custom base URL
        # (the only case without a key) accept any value.
        url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
        # The key goes as a bearer token, as the ``anthropic`` SDK 2.x sends it.
        headers = {"Authorization": f"Bearer {api_key or 'not-needed'}", "anthropic-version": API_VERSION}
        self._client = JsonWire(url, headers, timeout_s)

    def _translate(self, error: Exception, request: CompletionRequest) -> ProviderError:
        return translate_error(error, model=request.model, timeout_s=request.timeout_s or self.timeout_s)

    async def context_window(self, model: str) -> int | None:
        """The context window of a request to ``model``: :data:`CLAUDE_WINDOW` for a Claude model, else
        unknown (another model behind a compatible ``baseUrl``). See :mod:`dialectic.llm.windows`."""
        return CLAUDE_WINDOW if model.strip().lower().startswith("claude") else None

    def _options(self, request: CompletionRequest) -> JsonObject:
        options: JsonObject = {
            "model": request.model,
            "max_tokens": request.max_tokens if request.max_tokens is not None else DEFAULT_MAX_TOKENS,
            "messages": messages_param(
                request.conversation, with_tools=bool(request.tools) and request.json_schema is None
            ),
        }
        if request.system:
            options["system"] = request.system
        if self.prompt_cache and request.prompt_cache_key:
            with_breakpoints(options)
        if request.json_schema is not None:
            name = tool_name(request.json_schema.name)
            options["tools"] = [
                {
                    "name": name,
                    "description": f"Record the answer as a {request.json_schema.name} value.",
                    "input_schema": request.json_schema.schema,
                }
            ]
            options["tool_choice"] = {"type": "tool", "name": name}
        elif request.tools:
            options["tools"] = [
                {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}
                for tool in request.tools
            ]
        return options

    async def complete(self, request: CompletionRequest) -> Completion:
        try:
            with measure() as wire:
                response = await self._client.post("v1/messages", self._options(request), timeout_s=request.timeout_s)
            message = response.json()
        except (WireError, ValueError) as error:
            raise self._translate(error, request) from error
        latency_ms = wire.latency_ms()
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            raise self._invalid(request, "the Messages API did not answer with a message object")
        try:
            texts: list[str] = []
            structured: JsonValue | None = None
            calls: list[ToolCall] = []
            for block in message["content"]:
                kind = block.get("type")
                if kind == "tool_use" and request.json_schema is not None:
                    if structured is None:
                        structured = block["input"]
                elif kind == "tool_use" and request.tools:
                    calls.append(_tool_call(block["id"], block["name"], block.get("input")))
                elif kind == "text":
                    texts.append(block["text"])
            finish = _finish(message.get("stop_reason"))
            if calls and finish != FINISH_LENGTH:
                finish = FINISH_TOOL_CALLS
            return Completion(
                text=json.dumps(structured) if structured is not None else "".join(texts),
                model=message.get("model") or request.model,
                usage=_usage_json(message.get("usage")),
                latency_ms=latency_ms,
                finish_reason=finish,
                structured=structured,
                tool_calls=tuple(calls),
            )
        except (AttributeError, TypeError, KeyError) as error:
            raise self._invalid(request, "the message lacks expected fields") from error

    def _invalid(self, request: CompletionRequest, why: str) -> InvalidResponse:
        return InvalidResponse(f"{self.name}: unusable response from model {request.model}: {why}", provider=self.name)

    async def stream(self, request: CompletionRequest) -> AsyncIterator[Delta]:
        """Stream the reply's text (for a structured request, the tool input's JSON as it arrives).

        The final delta carries the finish reason, the usage and the model. Network errors met while
        the stream is read (a read timeout, a dropped connection) come through as httpx errors and
        are translated like the others; an ``error`` event is a stream error.
        """
        finish: str | None = None
        input_tokens = output_tokens = 0
        cached: int | None = None
        written: int | None = None
        model = request.model
        body = {**self._options(request), "stream": True}
        try:
            response = await self._client.post("v1/messages", body, timeout_s=request.timeout_s, stream=True)
            try:
                async for event in server_events(response.aiter_lines()):
                    data = json.loads(event.data)
                    if not isinstance(data, dict):
                        raise self._invalid(request, "a stream event is not a JSON object")
                    kind = data.get("type") or event.event
                    if kind == "error":
                        error = data.get("error") or {}
                        text = error.get("message") if isinstance(error, dict) else None
                        raise WireError(str(text or "error"), response.request, body=data)
                    if kind == "message_start":
                        started = data["message"]
                        model = started.get("model") or model
                        usage = _usage_json(started.get("usage"))
                        input_tokens, cached = usage.input_tokens, usage.cached_input_tokens
                        written = usage.cache_write_tokens
                    elif kind == "content_block_delta":
                        delta = data["delta"]
                        if delta.get("type") == "text_delta" and delta.get("text"):
                            yield Delta(text=delta["text"])
                        elif delta.get("type") == "input_json_delta" and delta.get("partial_json"):
                            yield Delta(text=delta["partial_json"])
                    elif kind == "message_delta":
                        finish = _finish((data.get("delta") or {}).get("stop_reason"))
                        output_tokens = (data.get("usage") or {}).get("output_tokens") or output_tokens
            finally:
                await response.aclose()
        except (WireError, httpx2.TransportError, ValueError) as error:
            raise self._translate(error, request) from error
        except (AttributeError, TypeError, KeyError) as error:
            raise self._invalid(request, "a stream event lacks expected fields") from error
        usage = Usage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens,
            cached_input_tokens=cached,
            cache_write_tokens=written,
        )
        yield Delta(finish_reason=finish, usage=usage, model=model)

    async def aclose(self) -> None:
        await self._client.aclose()
