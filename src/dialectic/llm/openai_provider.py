"""OpenAI and OpenAI-compatible servers (OpenRouter, Ollama, vLLM, llama.cpp) through the ``openai`` SDK.

Completions use the Responses API first and fall back to Chat Completions when an endpoint
does not have it; the answer is remembered per endpoint for the life of the process.
Streaming always uses Chat Completions, which every compatible server speaks. Requests go through
the SDK's client; replies and streamed events are read as JSON rather than as the SDK's typed
models, which cost more CPU than the rest of a call (see ``OpenAIProvider._post``). The SDK client
never retries (``max_retries=0``): :mod:`dialectic.llm.retry` does, from the translated errors.

Tools (native function calling) go out in each API's shape: Chat Completions' ``tools`` of
``{"type": "function", "function": {…}}`` with ``tool_calls`` on assistant messages and ``tool``
messages answering them; the Responses API's function tools, with ``function_call`` and
``function_call_output`` input items. An endpoint that answers a request with tools by a 400
speaking of tools or functions raises :class:`~dialectic.errors.ToolsUnsupported`, so the
caller can fall back to pasting the context.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import httpx2
import openai

from dialectic.domain import Usage
from dialectic.errors import (
    BadRequest,
    ContextWindowExceeded,
    InvalidResponse,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
    ToolsUnsupported,
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
from dialectic.llm.json_text import parse_json_text
from dialectic.llm.retry import error_for_status, is_about_model
from dialectic.llm.sse import server_events
from dialectic.llm.timeouts import http_timeout_parts, silence_message
from dialectic.llm.tool_arguments import arguments_json, parse_arguments
from dialectic.llm.wire_timing import EVENT_HOOKS, measure


def preload() -> None:
    """Import the API resources the SDK imports lazily on a client's first call (``dialectic serve``
    does it before it listens, so the first debates do not wait on imports)."""
    import importlib

    for module in ("openai.resources.chat.completions.completions", "openai.resources.responses.responses"):
        try:
            importlib.import_module(module)
        except ImportError:  # another SDK version lays its modules out differently: the first call imports them
            pass


def _server_message(body: object) -> tuple[str | None, str | None]:
    """The server's error message and code from an SDK error body (a dict or the raw text)."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            message, code = error.get("message"), error.get("code")
            return (str(message) if message else None), (str(code) if code else None)
    if isinstance(body, str) and body.strip():
        return body.strip(), None
    return None, None


def responses_endpoint_missing(error: openai.APIStatusError, model: str) -> bool:
    """Whether a failed Responses call means the endpoint lacks the Responses API.

    True for 405 and 501, and for a 404 that is not about the model: a 404 whose error code is
    ``model_not_found`` or whose message names the model or says "model" is a missing model
    (``ModelNotFound``), never a reason to fall back (see :func:`retry.is_about_model`).
    """
    if error.status_code in (405, 501):
        return True
    message, code = _server_message(error.body)
    return error.status_code == 404 and not is_about_model(message, code, model)


def translate_error(error: Exception, *, provider: str, model: str, timeout_s: float | None = None) -> ProviderError:
    """The ``dialectic.errors`` exception for an ``openai`` SDK failure (or a body that is not JSON).

    ``timeout_s`` is the per-call timeout that was in force, named in a timeout's message."""
    if isinstance(error, ProviderError):
        return error
    if isinstance(error, openai.APITimeoutError):
        return ProviderTimeout(silence_message(provider, model, timeout_s), provider=provider)
    if isinstance(error, openai.APIConnectionError):
        url = error.request.url
        where = f"{url.scheme}://{url.host}" + (f":{url.port}" if url.port else "")
        return ProviderUnavailable(f"{provider}: cannot connect to {where}", provider=provider)
    if isinstance(error, openai.APIResponseValidationError):
        return InvalidResponse(
            f"{provider}: unexpected response shape ({error.status_code}) from model {model}",
            provider=provider,
            status_code=error.status_code,
        )
    if isinstance(error, openai.APIStatusError):
        message, code = _server_message(error.body)
        return error_for_status(
            provider, error.status_code, model=model, message=message, code=code, headers=error.response.headers
        )
    if isinstance(error, openai.APIError):
        return ProviderUnavailable(
            f"{provider}: the stream reported an error on model {model}", provider=provider, detail=error.message
        )
    if isinstance(error, ValueError):
        return InvalidResponse(f"{provider}: malformed response from model {model} (not valid JSON)", provider=provider)
    return ProviderError(f"{provider}: {error}", provider=provider)


def _usage(input_tokens: int | None, output_tokens: int | None, total_tokens: int | None, details: Any = None) -> Usage:
    """The usage, with the cached input tokens when the server reports them (``*_tokens_details.cached_tokens``)."""
    used_in, used_out = input_tokens or 0, output_tokens or 0
    cached = details.get("cached_tokens") if isinstance(details, dict) else getattr(details, "cached_tokens", None)
    return Usage(
        input_tokens=used_in,
        output_tokens=used_out,
        total_tokens=total_tokens or used_in + used_out,
        cached_input_tokens=cached if isinstance(cached, int) else None,
    )


def _usage_json(usage: Any, input_key: str, output_key: str) -> Usage:
    """The usage in a reply's JSON: Chat Completions name its parts ``prompt_tokens``/``completion_tokens``,
    the Responses API ``input_tokens``/``output_tokens``; no usage object gives zeros."""
    if not isinstance(usage, dict):
        return Usage()
    details = usage.get(input_key.replace("_tokens", "_tokens_details"))
    return _usage(usage.get(input_key), usage.get(output_key), usage.get("total_tokens"), details)


def _http_timeout(seconds: float | None) -> openai.Timeout:
    """An explicit httpx timeout: ``read`` applies to every read, so a stream times out on inactivity."""
    return openai.Timeout(**http_timeout_parts(seconds))


def _chat_finish(reason: str | None) -> str:
    if reason == "length":
        return FINISH_LENGTH
    if reason in ("tool_calls", "function_call"):
        return FINISH_TOOL_CALLS
    return FINISH_STOP if reason in (None, "stop") else reason


_TOOL_WORDS = re.compile(r"tool|function", re.IGNORECASE)


def rejects_tools(error: ProviderError) -> bool:
    """Whether a failure of a request that offered tools means the endpoint does not take tools.

    A plain 400/422 (not a context-window overflow) whose server message (its ``detail``, not our
    message, which names the model) speaks of tools or functions, as compatible servers without
    function calling answer.
    """
    if not isinstance(error, BadRequest) or isinstance(error, (ContextWindowExceeded, ToolsUnsupported)):
        return False
    return bool(_TOOL_WORDS.search(error.detail or ""))


def chat_message(message: Message) -> dict[str, Any]:
    """One message in Chat Completions' shape (tool calls on an assistant message, tool results as ``tool``)."""
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": arguments_json(call.arguments, call.arguments_text)},
                }
                for call in message.tool_calls
            ],
        }
    return {"role": message.role, "content": message.content}


def responses_input(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """The conversation as Responses API input items (``function_call`` and ``function_call_output`` for tools)."""
    items: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            items.append(
                {"type": "function_call_output", "call_id": message.tool_call_id or "", "output": message.content}
            )
            continue
        if message.content or not message.tool_calls:
            items.append({"role": message.role, "content": message.content})
        items.extend(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": arguments_json(call.arguments, call.arguments_text),
            }
            for call in message.tool_calls
        )
    return items


def tool_call(call_id: str, name: str, arguments: str | None) -> ToolCall:
    """A call as the API reported it; arguments that are not a JSON object give ``{}`` (raw text kept)."""
    text = arguments or ""
    return ToolCall(id=call_id, name=name, arguments=parse_arguments(text), arguments_text=text)


def _chat_tool_calls(message: dict[str, Any]) -> tuple[ToolCall, ...]:
    """The calls of a Chat Completions message (its JSON)."""
    calls: list[ToolCall] = []
    for call in message.get("tool_calls") or ():
        function = call.get("function")
        if function is not None:
            calls.append(tool_call(call["id"], function["name"], function.get("arguments")))
    return tuple(calls)


def _with_calls(finish: str, calls: tuple[ToolCall, ...]) -> str:
    """A reply that calls tools finishes ``tool_calls`` unless it was cut off (some servers say ``stop``)."""
    return FINISH_TOOL_CALLS if calls and finish != FINISH_LENGTH else finish


class OpenAIProvider:
    """An :class:`~dialectic.llm.base.LLMProvider` for any OpenAI-compatible endpoint.

    ``timeout_s`` (default :data:`~dialectic.llm.timeouts.DEFAULT_CALL_TIMEOUT_S`) is an
    inactivity timeout: see :mod:`dialectic.llm.timeouts`. A request's own ``timeout_s`` wins.
    """

    supports_tools = True

    _responses_api: ClassVar[dict[str, bool]] = {}
    """Per endpoint (base URL): True once its Responses API answered, False once it was found missing."""

    def __init__(
        self, *, api_key: str, base_url: str | None = None, timeout_s: float | None = None, name: str = "openai"
    ) -> None:
        self.name = name
        self.timeout_s = timeout_s
        self._client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=_http_timeout(timeout_s),
            max_retries=0,
            http_client=openai.DefaultAsyncHttpxClient(timeout=_http_timeout(timeout_s), event_hooks=EVENT_HOOKS),
        )
        self._endpoint = str(self._client.base_url)

    @property
    def uses_responses_api(self) -> bool:
        return self._responses_api.get(self._endpoint, True)

    async def complete(self, request: CompletionRequest) -> Completion:
        try:
            if self.uses_responses_api:
                try:
                    return await self._complete_responses(request)
                except openai.APIStatusError as error:
                    if not responses_endpoint_missing(error, request.model):
                        raise
                    self._responses_api[self._endpoint] = False
            return await self._complete_chat(request)
        except (openai.OpenAIError, ValueError) as error:
            raise self._translate(error, request) from error

    def _translate(self, error: Exception, request: CompletionRequest) -> ProviderError:
        translated = translate_error(
            error, provider=self.name, model=request.model, timeout_s=request.timeout_s or self.timeout_s
        )
        if request.tools and rejects_tools(translated):
            return ToolsUnsupported(
                f"{self.name}: the endpoint {self._endpoint} does not accept tools ({translated.status_code}); "
                "its context is pasted into the prompt instead",
                endpoint=self._endpoint,
                provider=self.name,
                status_code=translated.status_code,
                detail=translated.detail,
            )
        return translated

    async def _post(self, path: str, body: dict[str, Any], *, stream: bool = False) -> httpx2.Response:
        """POST through the SDK's client (endpoint, key, headers, errors by status) and take the raw response.

        The replies are read as JSON here rather than as the SDK's typed models: building those costs
        more CPU than the rest of a call (about 1 ms of 2.4 for a reply, 7.5 ms of 9.8 for a streamed
        one, measured against the fake server), and a busy server makes many calls at once."""
        options: openai.RequestOptions = {}
        if "timeout" in body:
            options["timeout"] = body.pop("timeout")
        return await self._client.post(path, cast_to=httpx2.Response, body=body, options=options, stream=stream)

    def _options(self, request: CompletionRequest) -> dict[str, Any]:
        options: dict[str, Any] = {"model": request.model}
        if request.temperature is not None:
            options["temperature"] = request.temperature
        if request.timeout_s is not None:
            options["timeout"] = _http_timeout(request.timeout_s)
        return options

    async def _complete_responses(self, request: CompletionRequest) -> Completion:
        options = self._options(request)
        options["input"] = responses_input(request.conversation)
        if request.tools:
            options["tools"] = [
                {
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                    "strict": False,
                }
                for tool in request.tools
            ]
        if request.system:
            options["instructions"] = request.system
        if request.max_tokens is not None:
            options["max_output_tokens"] = request.max_tokens
        if request.json_schema is not None:
            schema = request.json_schema
            options["text"] = {
                "format": {"type": "json_schema", "name": schema.name, "schema": schema.schema, "strict": False}
            }
        with measure() as wire:
            response = await self._post("/responses", options)
        latency_ms = wire.latency_ms()
        data = response.json()
        if not isinstance(data, dict) or not isinstance(data.get("output"), list):
            raise self._invalid(request, "the Responses API did not answer with a response object")
        try:
            if data.get("status") == "failed":
                error = data.get("error") or {}
                failure = error.get("message") or "no reason given"
                raise ProviderUnavailable(
                    f"{self.name}: the response failed on model {request.model}", provider=self.name, detail=failure
                )
            finish = FINISH_STOP
            if data.get("status") == "incomplete":
                reason = (data.get("incomplete_details") or {}).get("reason")
                finish = FINISH_LENGTH if reason in (None, "max_output_tokens") else str(reason)
            output: list[dict[str, Any]] = data["output"]
            text = "".join(
                part.get("text") or ""
                for item in output
                if item.get("type") == "message"
                for part in item.get("content") or ()
                if part.get("type") == "output_text"
            )
            calls = tuple(
                tool_call(item["call_id"], item["name"], item.get("arguments"))
                for item in output
                if item.get("type") == "function_call"
            )
            return self._completion(
                request,
                text=text,
                model=data.get("model") or request.model,
                usage=_usage_json(data.get("usage"), "input_tokens", "output_tokens"),
                latency_ms=latency_ms,
                finish=_with_calls(finish, calls),
                tool_calls=calls,
            )
        except (AttributeError, TypeError, KeyError) as error:
            raise self._invalid(request, "the response lacks expected fields") from error

    async def _complete_chat(self, request: CompletionRequest) -> Completion:
        options = self._chat_options(request)
        if request.json_schema is not None:
            schema = request.json_schema
            options["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema.name, "schema": schema.schema},
            }
        with measure() as wire:
            response = await self._post("/chat/completions", options)
        latency_ms = wire.latency_ms()
        data = response.json()
        if not isinstance(data, dict) or "choices" not in data:
            raise self._invalid(request, "Chat Completions did not answer with a completion object")
        try:
            if not data["choices"]:
                raise self._invalid(request, "the completion has no choices")
            choice = data["choices"][0]
            message = choice.get("message") or {}
            calls = _chat_tool_calls(message)
            return self._completion(
                request,
                text=message.get("content") or "",
                model=data.get("model") or request.model,
                usage=_usage_json(data.get("usage"), "prompt_tokens", "completion_tokens"),
                latency_ms=latency_ms,
                finish=_with_calls(_chat_finish(choice.get("finish_reason")), calls),
                tool_calls=calls,
            )
        except (AttributeError, TypeError, KeyError) as error:
            raise self._invalid(request, "the completion lacks expected fields") from error

    def _chat_options(self, request: CompletionRequest) -> dict[str, Any]:
        options = self._options(request)
        options["messages"] = [chat_message(m) for m in request.messages]
        if request.tools:
            options["tools"] = [
                {
                    "type": "function",
                    "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
                }
                for tool in request.tools
            ]
        if request.max_tokens is not None:
            options["max_tokens"] = request.max_tokens
        return options

    def _completion(
        self,
        request: CompletionRequest,
        *,
        text: str,
        model: str,
        usage: Usage,
        latency_ms: int,
        finish: str,
        tool_calls: tuple[ToolCall, ...] = (),
    ) -> Completion:
        structured = parse_json_text(text) if request.json_schema is not None else None
        return Completion(
            text=text,
            model=model,
            usage=usage,
            latency_ms=latency_ms,
            finish_reason=finish,
            structured=structured,
            tool_calls=tool_calls,
        )

    def _invalid(self, request: CompletionRequest, why: str) -> InvalidResponse:
        return InvalidResponse(f"{self.name}: unusable response from model {request.model}: {why}", provider=self.name)

    async def stream(self, request: CompletionRequest) -> AsyncIterator[Delta]:
        """Stream through Chat Completions; the final delta carries finish reason, usage and model.

        The request goes through the SDK's client (endpoint, key, headers, status errors); the
        streamed events are read as JSON here (see :mod:`dialectic.llm.sse` for why). The finish
        reason is None when the server ended the stream without giving one.
        """
        finish: str | None = None
        usage = Usage()
        model = request.model
        body = {**self._chat_options(request), "stream": True, "stream_options": {"include_usage": True}}
        try:
            response = await self._post("/chat/completions", body, stream=True)
            try:
                async for event in server_events(response.aiter_lines()):
                    if event.data.startswith("[DONE]"):
                        break
                    chunk = json.loads(event.data)
                    if not isinstance(chunk, dict):
                        raise self._invalid(request, "a stream chunk is not a JSON object")
                    if event.event == "error" or chunk.get("error"):
                        error = chunk.get("error", chunk)
                        message = error.get("message") if isinstance(error, dict) else None
                        raise openai.APIError(str(message or "error"), response.request, body=error)
                    model = chunk.get("model") or model
                    if chunk.get("usage"):
                        usage = _usage_json(chunk["usage"], "prompt_tokens", "completion_tokens")
                    for choice in chunk.get("choices") or ():
                        content = (choice.get("delta") or {}).get("content")
                        if content:
                            yield Delta(text=content)
                        if choice.get("finish_reason") is not None:
                            finish = _chat_finish(choice["finish_reason"])
            finally:
                await response.aclose()
        except (openai.OpenAIError, ValueError) as error:
            raise self._translate(error, request) from error
        except httpx2.TimeoutException as error:
            raise ProviderTimeout(
                silence_message(self.name, request.model, request.timeout_s or self.timeout_s), provider=self.name
            ) from error
        except httpx2.TransportError as error:
            raise ProviderUnavailable(
                f"{self.name}: the connection broke while model {request.model} was replying", provider=self.name
            ) from error
        except (AttributeError, TypeError) as error:
            raise self._invalid(request, "a stream chunk lacks expected fields") from error
        yield Delta(finish_reason=finish, usage=usage, model=model)

    async def aclose(self) -> None:
        await self._client.close()
