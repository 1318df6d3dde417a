"""Anthropic's Messages API through the official ``anthropic`` SDK.

Structured output uses native tool use: one tool named after the schema, whose
``input_schema`` is the requested JSON schema (Anthropic requires it to describe an object),
forced with ``tool_choice``; the tool call's input is the structured value and its JSON dump
the text. The SDK's Messages API (2.x) has no ``temperature`` parameter, so
``CompletionRequest.temperature`` is not sent. The SDK client never retries
(``max_retries=0``): :mod:`dialectic.llm.retry` does, from the translated errors.

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
import re
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message as AnthropicMessage

from dialectic.core.domain import Usage
from dialectic.core.errors import (
    InvalidResponse,
    ProviderError,
)
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
from dialectic.llm.provider_errors import SdkErrors, StatusDetails, translate
from dialectic.llm.timeouts import http_timeout_parts
from dialectic.llm.wire_timing import EVENT_HOOKS, measure

DEFAULT_MAX_TOKENS = 1024
PROVIDER = "anthropic"
_STOPPED = frozenset({None, "end_turn", "stop_sequence", "tool_use"})
Blocks = list[dict[str, Any]]


def preload() -> None:
    """Import the API resources the SDK imports lazily on a client's first call (see the OpenAI adapter's)."""
    import importlib

    try:
        importlib.import_module("anthropic.resources.messages")
    except ImportError:  # another SDK version lays its modules out differently: the first call imports it
        pass


def tool_name(schema_name: str) -> str:
    """A tool name Anthropic accepts (``[a-zA-Z0-9_-]{1,64}``) for a schema name."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", schema_name)[:64] or "output"


def _finish(stop_reason: str | None) -> str:
    return (
        FINISH_LENGTH if stop_reason == "max_tokens" else FINISH_STOP if stop_reason in _STOPPED else str(stop_reason)
    )


def messages_param(conversation: tuple[Message, ...], *, with_tools: bool) -> list[dict[str, Any]]:
    """The conversation (no system messages) as Messages API messages.

    ``with_tools``: assistant calls become ``tool_use`` blocks and results ``tool_result`` blocks,
    consecutive results (and a user message right after them) sharing one user message, as the
    API wants every result of a turn in the message that follows it. Without tools, calls and
    results are written as text.
    """
    out: list[dict[str, Any]] = []
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


def _http_timeout(seconds: float | None) -> anthropic.Timeout:
    """An explicit httpx timeout: ``read`` applies to every read, so a stream times out on inactivity."""
    return anthropic.Timeout(**http_timeout_parts(seconds))


def _usage(
    input_tokens: int | None, output_tokens: int | None, cache_writes: int | None = None, cache_reads: int | None = None
) -> Usage:
    """Every input token counted as input (Anthropic reports cache writes and reads apart); reads as cached."""
    used_in = (input_tokens or 0) + (cache_writes or 0) + (cache_reads or 0)
    used_out = output_tokens or 0
    return Usage(
        input_tokens=used_in, output_tokens=used_out, total_tokens=used_in + used_out, cached_input_tokens=cache_reads
    )


def _status_details(error: Exception) -> StatusDetails:
    assert isinstance(error, anthropic.APIStatusError)
    message = error.api_message or (error.body if isinstance(error.body, str) else None)
    return StatusDetails(message, error.error_code or (str(error.type) if error.type else None))


SDK_ERRORS = SdkErrors(
    timeout=anthropic.APITimeoutError,
    connection=anthropic.APIConnectionError,
    response_validation=anthropic.APIResponseValidationError,
    status=anthropic.APIStatusError,
    stream=anthropic.APIError,
    status_details=_status_details,
    credentials=anthropic.CredentialsError,
)


def translate_error(
    error: Exception, *, model: str, provider: str = PROVIDER, timeout_s: float | None = None
) -> ProviderError:
    """The ``dialectic.core.errors`` exception for an ``anthropic`` SDK failure (or a body that is not JSON),
    by the one table of :mod:`dialectic.llm.provider_errors`; ``timeout_s`` is named in a timeout's message."""
    return translate(error, SDK_ERRORS, provider=provider, model=model, timeout_s=timeout_s)


def _tool_call(call_id: str, name: str, arguments: object) -> ToolCall:
    """A ``tool_use`` block as a call; an input that is not an object gives ``{}`` (its JSON kept as the text)."""
    text = json.dumps(arguments, ensure_ascii=False)
    return ToolCall(
        id=call_id, name=name, arguments=arguments if isinstance(arguments, dict) else {}, arguments_text=text
    )


CLAUDE_WINDOW = 200_000
"""Tokens one request to a Claude model holds (the standard window of every current Claude model)."""


class AnthropicProvider:
    """An :class:`~dialectic.llm.base.LLMProvider` for Anthropic's Messages API.

    ``timeout_s`` (default :data:`~dialectic.llm.timeouts.DEFAULT_CALL_TIMEOUT_S`) is an
    inactivity timeout: see :mod:`dialectic.llm.timeouts`. A request's own ``timeout_s`` wins.
    """

    supports_tools = True

    def __init__(self, *, api_key: str, base_url: str | None = None, timeout_s: float | None = None) -> None:
        self.name = PROVIDER
        self.timeout_s = timeout_s
        # An empty key would make the SDK send an empty credential header; servers reached through a
        # custom base URL (the only case without a key) accept any value.
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key or "not-needed",
            base_url=base_url,
            timeout=_http_timeout(timeout_s),
            max_retries=0,
            http_client=anthropic.DefaultAsyncHttpxClient(timeout=_http_timeout(timeout_s), event_hooks=EVENT_HOOKS),
        )

    def _translate(self, error: Exception, request: CompletionRequest) -> ProviderError:
        return translate_error(error, model=request.model, timeout_s=request.timeout_s or self.timeout_s)

    async def context_window(self, model: str) -> int | None:
        """The context window of a request to ``model``: :data:`CLAUDE_WINDOW` for a Claude model, else
        unknown (another model behind a compatible ``baseUrl``). See :mod:`dialectic.llm.windows`."""
        return CLAUDE_WINDOW if model.strip().lower().startswith("claude") else None

    def _options(self, request: CompletionRequest) -> dict[str, Any]:
        options: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens if request.max_tokens is not None else DEFAULT_MAX_TOKENS,
            "messages": messages_param(
                request.conversation, with_tools=bool(request.tools) and request.json_schema is None
            ),
        }
        if request.system:
            options["system"] = request.system
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
        if request.timeout_s is not None:
            options["timeout"] = _http_timeout(request.timeout_s)
        return options

    async def complete(self, request: CompletionRequest) -> Completion:
        create = self._client.messages.create
        try:
            with measure() as wire:
                message = await create(**self._options(request))
        except (anthropic.AnthropicError, ValueError) as error:
            raise self._translate(error, request) from error
        latency_ms = wire.latency_ms()
        if not isinstance(message, AnthropicMessage):
            raise self._invalid(request, "the Messages API did not answer with a message object")
        try:
            texts: list[str] = []
            structured: Any | None = None
            calls: list[ToolCall] = []
            for block in message.content:
                if block.type == "tool_use" and request.json_schema is not None:
                    if structured is None:
                        structured = block.input
                elif block.type == "tool_use" and request.tools:
                    calls.append(_tool_call(block.id, block.name, block.input))
                elif block.type == "text":
                    texts.append(block.text)
            finish = _finish(message.stop_reason)
            if calls and finish != FINISH_LENGTH:
                finish = FINISH_TOOL_CALLS
            usage = message.usage
            return Completion(
                text=json.dumps(structured) if structured is not None else "".join(texts),
                model=message.model or request.model,
                usage=_usage(
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cache_creation_input_tokens,
                    usage.cache_read_input_tokens,
                ),
                latency_ms=latency_ms,
                finish_reason=finish,
                structured=structured,
                tool_calls=tuple(calls),
            )
        except (AttributeError, TypeError) as error:
            raise self._invalid(request, "the message lacks expected fields") from error

    def _invalid(self, request: CompletionRequest, why: str) -> InvalidResponse:
        return InvalidResponse(f"{self.name}: unusable response from model {request.model}: {why}", provider=self.name)

    async def stream(self, request: CompletionRequest) -> AsyncIterator[Delta]:
        """Stream the reply's text (for a structured request, the tool input's JSON as it arrives).

        The final delta carries the finish reason, the usage and the model. The SDK lets network
        errors met while the stream is read (a read timeout, a dropped connection) through as
        httpx errors; they are translated like the others.
        """
        finish: str | None = None
        input_tokens = output_tokens = 0
        model = request.model
        try:
            events = await self._client.messages.create(**self._options(request), stream=True)
            async with events:
                async for event in events:
                    if event.type == "message_start":
                        model = event.message.model or model
                        u = event.message.usage
                        input_tokens = _usage(
                            u.input_tokens, 0, u.cache_creation_input_tokens, u.cache_read_input_tokens
                        ).input_tokens
                    elif event.type == "content_block_delta":
                        if event.delta.type == "text_delta" and event.delta.text:
                            yield Delta(text=event.delta.text)
                        elif event.delta.type == "input_json_delta" and event.delta.partial_json:
                            yield Delta(text=event.delta.partial_json)
                    elif event.type == "message_delta":
                        finish = _finish(event.delta.stop_reason)
                        output_tokens = event.usage.output_tokens or output_tokens
        except (anthropic.AnthropicError, httpx2.TransportError, ValueError) as error:
            raise self._translate(error, request) from error
        except (AttributeError, TypeError) as error:
            raise self._invalid(request, "a stream event lacks expected fields") from error
        yield Delta(finish_reason=finish, usage=_usage(input_tokens, output_tokens), model=model)

    async def aclose(self) -> None:
        await self._client.close()
