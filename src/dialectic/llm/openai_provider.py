"""OpenAI and OpenAI-compatible servers (OpenRouter, Ollama, vLLM, llama.cpp) over our own HTTP wire.

Which API a completion uses is the agent's ``api`` setting: ``chat`` (Chat Completions only),
``responses`` (the Responses API only) or ``auto`` (the default): the Responses API on OpenAI's own
endpoint, Chat Completions on every other base URL, the lingua franca of compatible servers
(llama.cpp's ``llama-server``, Ollama, vLLM, LM Studio). Predictable, no probing: under ``auto``
OpenAI's endpoint falls back to Chat Completions only if its Responses API is missing (404, 405,
501), remembered per endpoint (for ten minutes, or until the endpoint cannot be reached: see
:mod:`dialectic.llm.endpoint_memory`).
Streaming always uses Chat Completions, which every compatible server speaks.

What a real server says is not taken on trust where it can hide a failure: a reply whose output
tokens reach the limit asked for is cut off whatever the status says (llama-server's Responses API
reports ``completed``); a reply without usage gets an estimate, marked ``estimated``; the model
name stored is the one configured (a server may report a file path), with the server's name beside
it; a server that refuses ``response_format`` gets the request again without it (remembered per
endpoint), and the caller's structured-output repair takes over. Requests go through
:mod:`dialectic.llm.http_wire` (no SDK is imported: the ``openai`` package serves only as the
tests' oracle of the request and reply shapes); replies and streamed events are read as JSON. The
wire never retries: :mod:`dialectic.llm.retry` does, from the translated errors.

Tools (native function calling) go out in each API's shape: Chat Completions' ``tools`` of
``{"type": "function", "function": {…}}`` with ``tool_calls`` on assistant messages and ``tool``
messages answering them; the Responses API's function tools, with ``function_call`` and
``function_call_output`` input items. An endpoint that answers a request with tools by a 400
speaking of tools or functions raises :class:`~dialectic.core.errors.ToolsUnsupported`, so the
caller can fall back to pasting the context.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import ClassVar

import httpx2

from dialectic.core.domain import Usage
from dialectic.core.errors import (
    BadRequest,
    ContextWindowExceeded,
    InvalidResponse,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
    ToolsUnsupported,
)
from dialectic.core.json_values import JsonObject, JsonValue
from dialectic.llm.base import (
    FINISH_LENGTH,
    FINISH_STOP,
    FINISH_TOOL_CALLS,
    Completion,
    CompletionRequest,
    Delta,
    JsonSchema,
    Message,
    TokenLogprob,
    ToolCall,
)
from dialectic.llm.endpoint_memory import EndpointMemory
from dialectic.llm.http_wire import (
    JsonWire,
    WireConnectionError,
    WireError,
    WireShapeError,
    WireStatusError,
    WireTimeout,
)
from dialectic.llm.json_text import parse_json_text
from dialectic.llm.provider_errors import SdkErrors, StatusDetails, translate
from dialectic.llm.retry import is_about_model
from dialectic.llm.sse import server_events
from dialectic.llm.timeouts import silence_message
from dialectic.llm.tool_arguments import arguments_json, parse_arguments
from dialectic.llm.wire_timing import measure


def _server_message(body: object) -> tuple[str | None, str | None]:
    """The server's error message and code from an error body (its JSON, or the raw text)."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            message, code = error.get("message"), error.get("code")
            return (str(message) if message else None), (str(code) if code else None)
    if isinstance(body, str) and body.strip():
        return body.strip(), None
    return None, None


def _error_object(body: object) -> JsonObject:
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return error
    return {}


def _error_type(body: object) -> str | None:
    """The error's ``type`` when it names a context overflow (llama-server: ``exceed_context_size_error``)."""
    kind = _error_object(body).get("type")
    return str(kind) if isinstance(kind, str) and "context" in kind else None


def _window_sizes(body: object) -> tuple[int | None, int | None]:
    """The context window and the prompt's tokens a refusal names (llama-server's ``n_ctx``, ``n_prompt_tokens``)."""
    error = _error_object(body)
    window, prompt = error.get("n_ctx"), error.get("n_prompt_tokens")
    return (
        window if isinstance(window, int) and window > 0 else None,
        prompt if isinstance(prompt, int) and prompt > 0 else None,
    )


def responses_endpoint_missing(error: WireStatusError, model: str) -> bool:
    """Whether a failed Responses call means the endpoint lacks the Responses API.

    True for 405 and 501, and for a 404 that is not about the model: a 404 whose error code is
    ``model_not_found`` or whose message names the model or says "model" is a missing model
    (``ModelNotFound``), never a reason to fall back (see :func:`retry.is_about_model`).
    """
    if error.status_code in (405, 501):
        return True
    message, code = _server_message(error.body)
    return error.status_code == 404 and not is_about_model(message, code, model)


def _status_details(error: Exception) -> StatusDetails:
    body = getattr(error, "body", None)
    message, code = _server_message(body)
    window, prompt_tokens = _window_sizes(body)
    return StatusDetails(message, code or _error_type(body), window, prompt_tokens)


SDK_ERRORS = SdkErrors(
    timeout=WireTimeout,
    connection=WireConnectionError,
    response_validation=WireShapeError,
    status=WireStatusError,
    stream=WireError,
    status_details=_status_details,
)


def translate_error(error: Exception, *, provider: str, model: str, timeout_s: float | None = None) -> ProviderError:
    """The ``dialectic.core.errors`` exception for a wire failure (or a body that is not JSON),
    by the one table of :mod:`dialectic.llm.provider_errors`; ``timeout_s`` is named in a timeout's message."""
    return translate(error, SDK_ERRORS, provider=provider, model=model, timeout_s=timeout_s)


def _usage(
    input_tokens: int | None, output_tokens: int | None, total_tokens: int | None, details: JsonValue = None
) -> Usage:
    """The usage, with the cached input tokens when the server reports them (``*_tokens_details.cached_tokens``)."""
    used_in, used_out = input_tokens or 0, output_tokens or 0
    cached = details.get("cached_tokens") if isinstance(details, dict) else getattr(details, "cached_tokens", None)
    return Usage(
        input_tokens=used_in,
        output_tokens=used_out,
        total_tokens=total_tokens or used_in + used_out,
        cached_input_tokens=cached if isinstance(cached, int) else None,
    )


def _usage_json(usage: JsonValue, input_key: str, output_key: str) -> Usage:
    """The usage in a reply's JSON: Chat Completions name its parts ``prompt_tokens``/``completion_tokens``,
    the Responses API ``input_tokens``/``output_tokens``; no usage object gives zeros."""
    if not isinstance(usage, dict):
        return Usage()
    details = usage.get(input_key.replace("_tokens", "_tokens_details"))
    return _usage(usage.get(input_key), usage.get(output_key), usage.get("total_tokens"), details)


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


def chat_message(message: Message) -> JsonObject:
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


def responses_message(role: str, text: str) -> JsonObject:
    """One message as a typed Responses input item (``type: message``; strict servers refuse untyped items,
    llama-server with ``Cannot determine type of 'item'`` for an assistant turn): ``input_text`` parts for
    what the user (or system) said, the text itself for the assistant's own earlier replies. That is the
    API's easy input message: an ``output_text`` part would make it an output message, which must carry
    the ``id`` and ``status`` the server gave it (the SDK's ``ResponseOutputMessageParam``)."""
    if role == "assistant":
        return {"type": "message", "role": role, "content": text}
    return {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}


def responses_input(messages: tuple[Message, ...]) -> list[JsonObject]:
    """The conversation as Responses API input items (``function_call`` and ``function_call_output`` for tools)."""
    items: list[JsonObject] = []
    for message in messages:
        if message.role == "tool":
            items.append(
                {"type": "function_call_output", "call_id": message.tool_call_id or "", "output": message.content}
            )
            continue
        if message.content or not message.tool_calls:
            items.append(responses_message(message.role, message.content))
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


def _chat_tool_calls(message: JsonObject) -> tuple[ToolCall, ...]:
    """The calls of a Chat Completions message (its JSON)."""
    calls: list[ToolCall] = []
    for call in message.get("tool_calls") or ():
        function = call.get("function")
        if function is not None:
            calls.append(tool_call(call["id"], function["name"], function.get("arguments")))
    return tuple(calls)


def chat_logprobs(block: object) -> tuple[TokenLogprob, ...]:
    """``choices[0].logprobs.content`` of a Chat Completion as tokens with log-probabilities (none: empty)."""
    content = block.get("content") if isinstance(block, dict) else None
    if not isinstance(content, list):
        return ()
    return tuple(
        TokenLogprob(str(entry["token"]), float(entry["logprob"]))
        for entry in content
        if isinstance(entry, dict) and isinstance(entry.get("logprob"), int | float) and "token" in entry
    )


def _with_calls(finish: str, calls: tuple[ToolCall, ...]) -> str:
    """A reply that calls tools finishes ``tool_calls`` unless it was cut off (some servers say ``stop``)."""
    return FINISH_TOOL_CALLS if calls and finish != FINISH_LENGTH else finish


@dataclass(frozen=True)
class ListedModel:
    """A model a server lists: its name, and its context window when the listing gives one."""

    id: str
    window: int | None = None


OPENAI_HOSTS = ("api.openai.com",)
DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""Where requests go when neither the configuration nor ``OPENAI_BASE_URL`` names a base URL."""


def is_openai_endpoint(base_url: str) -> bool:
    """Whether ``base_url`` is OpenAI's own API (where ``api: auto`` means the Responses API)."""
    host = httpx2.URL(base_url).host
    return host in OPENAI_HOSTS


KNOWN_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-3.5-turbo", 16_385),
    ("claude", 200_000),
)
"""Context windows of hosted model families, by name prefix (after any ``vendor/`` part), longest first wins."""


def known_window(model: str) -> int | None:
    """The window of a known hosted model (``gpt-4o-mini``, ``openai/gpt-4o``, ``claude-…``), else ``None``."""
    name = model.rsplit("/", 1)[-1].lower()
    matches = [(len(prefix), window) for prefix, window in KNOWN_WINDOWS if name.startswith(prefix)]
    return max(matches)[1] if matches else None


_LISTED_WINDOW_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length")


def window_in_listing(listing: object, model: str) -> int | None:
    """The window a ``/models`` listing gives ``model`` (its entry, or the only entry), else ``None``."""
    entries = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(entries, list):
        return None
    named = [e for e in entries if isinstance(e, dict) and e.get("id") == model]
    candidates = named or (entries if len(entries) == 1 else [])
    for entry in candidates:
        if not isinstance(entry, dict):
            continue
        for key in _LISTED_WINDOW_KEYS:
            value = entry.get(key)
            if isinstance(value, int) and value > 0:
                return value
    return None


def reached_limit(finish: str, usage: Usage, max_tokens: int | None) -> str:
    """``length`` when the reply's output tokens reached the limit asked for, whatever the server said.

    A server that reports every reply as complete (llama-server's Responses API says ``completed``)
    must not hide a cut reply. A reply that called tools keeps ``tool_calls``; an estimated count
    (the server gave none) is never trusted for this.
    """
    if finish != FINISH_STOP or max_tokens is None or usage.estimated:
        return finish
    return FINISH_LENGTH if usage.output_tokens >= max_tokens else finish


CHARS_PER_TOKEN_ESTIMATE = 4
"""Characters per token for a usage estimate (English prose with a BPE tokenizer averages about 4)."""


def estimated_usage(request: CompletionRequest, text: str) -> Usage:
    """Usage estimated from the characters sent and received, for a server that reported none."""
    sent = sum(len(m.content) for m in request.messages)
    prompt = -(-sent // CHARS_PER_TOKEN_ESTIMATE)
    output = -(-len(text) // CHARS_PER_TOKEN_ESTIMATE)
    return Usage(input_tokens=prompt, output_tokens=output, total_tokens=prompt + output, estimated=True)


STRUCTURED_FORMATS = ("json_schema", "json_object", "none")
"""The forms of ``response_format`` tried in turn on a server that refuses one: OpenAI's ``json_schema``
(llama-server, vLLM, Ollama, LM Studio), ``json_object`` with a ``schema`` (llama-cpp-python's server,
which answers 500 to the first), then none: the caller's structured-output repair checks the reply."""


def response_format(kind: str, schema: JsonSchema) -> JsonObject:
    if kind == "json_object":
        return {"type": "json_object", "schema": schema.schema}
    return {"type": "json_schema", "json_schema": {"name": schema.name, "schema": schema.schema}}


_FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object", re.IGNORECASE)


def refuses_response_format(error: WireStatusError) -> bool:
    """Whether a failure refuses the structured-output form asked for: a 400, 422 or 500 whose message
    names ``response_format`` (llama-cpp-python's server answers a 500 naming it; others a 400)."""
    if error.status_code not in (400, 422, 500):
        return False
    message, _ = _server_message(error.body)
    return bool(_FORMAT_WORDS.search(message or ""))


def slot_for(slots: dict[str, int], key: str, total: int) -> int:
    """The llama-server slot ``key`` keeps: its own while it has one; a new key takes the lowest free
    slot, or, when all ``total`` are taken, the slot of the key that took one longest ago (a debate with
    more participants than slots shares them). ``slots`` (key to slot, oldest first) is updated."""
    if key in slots:
        return slots[key]
    taken = set(slots.values())
    free = [slot for slot in range(total) if slot not in taken]
    if free:
        slot = free[0]
    else:
        oldest = next(iter(slots))
        slot = slots.pop(oldest)
    slots[key] = slot
    return slot


class OpenAIProvider:
    """An :class:`~dialectic.llm.base.LLMProvider` for any OpenAI-compatible endpoint.

    ``timeout_s`` (default :data:`~dialectic.llm.timeouts.DEFAULT_CALL_TIMEOUT_S`) is an
    inactivity timeout: see :mod:`dialectic.llm.timeouts`. A request's own ``timeout_s`` wins.
    """

    supports_tools = True

    _responses_api: ClassVar[EndpointMemory[str, bool]] = EndpointMemory()
    """Per endpoint (base URL): False once its Responses API was found missing."""
    _formats: ClassVar[EndpointMemory[str, str]] = EndpointMemory()
    """Per endpoint, the structured-output form its Chat Completions took, when it refused the first one
    (see :data:`STRUCTURED_FORMATS`): asked that way from then on."""
    _windows: ClassVar[EndpointMemory[tuple[str, str], int | None]] = EndpointMemory()
    """Per endpoint and model: the context window the server said (``None``: it did not say)."""
    _props: ClassVar[EndpointMemory[str, JsonObject | None]] = EndpointMemory()
    """Per endpoint: what its ``/props`` said (llama-server's settings; ``None``: it has none)."""

    @classmethod
    def forget(cls, endpoint: str) -> None:
        """Drop what ``endpoint`` said: the next call asks again (it could not be reached, so what
        answers there next may be another server)."""
        for memory in (cls._responses_api, cls._formats, cls._windows, cls._props):
            memory.forget(endpoint)

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout_s: float | None = None,
        name: str = "openai",
        api: str = "auto",
        prompt_cache: bool = True,
    ) -> None:
        self.name = name
        self.timeout_s = timeout_s
        self.api = api
        self.prompt_cache = prompt_cache
        """Ask for prompt-cache reuse (see :meth:`_cache_fields`); off, llama-server is told not to reuse."""
        self._slots: dict[str, int] = {}
        """llama-server slots kept by prompt-cache key, oldest first (see :func:`slot_for`)."""
        url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self._client = JsonWire(url, {"Authorization": f"Bearer {api_key}"}, timeout_s)
        self._endpoint = str(self._client.base_url)
        self._official = is_openai_endpoint(self._endpoint)

    @property
    def uses_responses_api(self) -> bool:
        """Whether the next completion goes to the Responses API (see the module's docstring)."""
        if self.api != "auto":
            return self.api == "responses"
        return self._official and self._responses_api.get(self._endpoint, True)

    async def complete(self, request: CompletionRequest) -> Completion:
        try:
            if self.uses_responses_api:
                try:
                    return await self._complete_responses(request)
                except WireStatusError as error:
                    if self.api != "auto" or not responses_endpoint_missing(error, request.model):
                        raise
                    self._responses_api[self._endpoint] = False
            return await self._complete_chat(request)
        except (WireError, ValueError) as error:
            raise self._translate(error, request) from error

    async def context_window(self, model: str) -> int | None:
        """The context window one request to ``model`` gets, as the server says, or ``None``.

        Asked once per endpoint and model (again after a while: see :class:`EndpointMemory`):
        llama-server's ``/props`` (the per-slot ``n_ctx``: ``-np 4 -c 8192`` gives each request
        2,048), then the server's ``/models`` entry for the model when it
        carries a length (vLLM's ``max_model_len``, ``context_length``, ``context_window``), then the
        table of known hosted models. Never raises: a server that says nothing gives ``None``.
        """
        key = (self._endpoint, model)
        if key not in self._windows:
            self._windows[key] = await self._ask_window(model)
        return self._windows[key]

    async def _server_props(self) -> JsonObject | None:
        """llama-server's ``/props`` of this endpoint (asked once per endpoint, for a while); ``None``
        for OpenAI's own endpoint and for servers that have none."""
        if self._official:
            return None
        if self._endpoint in self._props:
            return self._props[self._endpoint]
        return await self._fetch_props()

    async def _fetch_props(self) -> JsonObject | None:
        """Ask ``/props`` now (and remember what it said)."""
        root = self._endpoint.rstrip("/").removesuffix("/v1")
        props = await self._get_json(f"{root}/props")
        said = props if isinstance(props, dict) else None
        self._props[self._endpoint] = said
        return said

    async def _cache_fields(self, request: CompletionRequest, *, chat: bool) -> JsonObject:
        """What a request carries for the provider's prompt cache.

        OpenAI's own endpoint: ``prompt_cache_key`` (the debate run and participant), which routes a
        participant's calls to the machines that hold its prefix. llama-server (its ``/props`` gives
        ``total_slots``), on Chat Completions: ``cache_prompt`` and the participant's own slot
        (``id_slot``), so its next call finds its prefix in that slot's KV cache. With the cache off,
        llama-server is told ``cache_prompt: false`` (its default is on) and no key or slot is sent.
        Other compatible servers get nothing they might refuse, and neither does a request without a key
        (one not made for a debate's participant)."""
        if self._official:
            return (
                {"prompt_cache_key": request.prompt_cache_key} if self.prompt_cache and request.prompt_cache_key else {}
            )
        if not chat or not request.prompt_cache_key:
            return {}
        props = await self._server_props()
        slots = props.get("total_slots") if props is not None else None
        if not isinstance(slots, int) or slots < 1:
            return {}
        if not self.prompt_cache:
            return {"cache_prompt": False}
        return {"cache_prompt": True, "id_slot": slot_for(self._slots, request.prompt_cache_key, slots)}

    async def _ask_window(self, model: str) -> int | None:
        if not self._official:
            props = await self._fetch_props()
            settings = props.get("default_generation_settings") if isinstance(props, dict) else None
            if isinstance(settings, dict) and isinstance(settings.get("n_ctx"), int) and settings["n_ctx"] > 0:
                return int(settings["n_ctx"])
            listing = await self._get_json(f"{self._endpoint.rstrip('/')}/models")
            window = window_in_listing(listing, model)
            if window is not None:
                return window
        return known_window(model)

    async def models(self) -> list[ListedModel]:
        """The models the server offers (``GET /models``), with their context windows where it says them.

        Raises the translated error when the server cannot be reached or refuses (a down server is a
        ``ProviderUnavailable`` naming the address)."""
        try:
            response = await self._client.get("models")
            listing = response.json()
        except (WireError, ValueError) as error:
            self._forget_if_unreachable(error)
            raise translate_error(error, provider=self.name, model="", timeout_s=self.timeout_s) from error
        entries = listing.get("data") if isinstance(listing, dict) else None
        if not isinstance(entries, list):
            raise InvalidResponse(f"{self.name}: {self._endpoint}models did not answer with a model list")
        return [
            ListedModel(id=str(entry["id"]), window=window_in_listing({"data": [entry]}, str(entry["id"])))
            for entry in entries
            if isinstance(entry, dict) and entry.get("id")
        ]

    async def _get_json(self, url: str) -> JsonValue:
        """GET ``url`` with the client's key and headers; ``None`` when it fails in any way."""
        try:
            response = await self._client.get(url, timeout_s=10.0)
            return response.json()
        except (WireError, httpx2.HTTPError, ValueError):
            return None

    def _forget_if_unreachable(self, error: Exception) -> None:
        if isinstance(error, WireConnectionError) and not isinstance(error, WireTimeout):
            self.forget(self._endpoint)

    def _translate(self, error: Exception, request: CompletionRequest) -> ProviderError:
        self._forget_if_unreachable(error)
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

    async def _post(
        self, path: str, body: JsonObject, request: CompletionRequest, *, stream: bool = False
    ) -> httpx2.Response:
        """POST through the wire (endpoint, key, headers, errors by status) and take the raw response,
        under the request's own timeout when it sets one. The replies are read as JSON here."""
        return await self._client.post(path, body, timeout_s=request.timeout_s, stream=stream)

    def _options(self, request: CompletionRequest) -> JsonObject:
        options: JsonObject = {"model": request.model}
        if request.temperature is not None:
            options["temperature"] = request.temperature
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
        options.update(await self._cache_fields(request, chat=False))
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
            response = await self._post("responses", options, request)
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
            output: list[JsonObject] = data["output"]
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
        options = {**self._chat_options(request), **await self._cache_fields(request, chat=True)}
        formats = STRUCTURED_FORMATS[STRUCTURED_FORMATS.index(self._formats.get(self._endpoint, "json_schema")) :]
        with measure() as wire:
            while True:
                kind = formats[0] if request.json_schema is not None else "none"
                body = dict(options)
                if request.json_schema is not None and kind != "none":
                    body["response_format"] = response_format(kind, request.json_schema)
                try:
                    response = await self._post("chat/completions", body, request)
                    break
                except WireStatusError as error:
                    if kind == "none" or not refuses_response_format(error):
                        raise
                    formats = formats[1:]
                    self._formats[self._endpoint] = formats[0]
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
                logprobs=chat_logprobs(choice.get("logprobs")),
            )
        except (AttributeError, TypeError, KeyError) as error:
            raise self._invalid(request, "the completion lacks expected fields") from error

    def _chat_options(self, request: CompletionRequest) -> JsonObject:
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
        if request.logprobs:
            options["logprobs"] = True
        if request.max_tokens is not None:
            # OpenAI's own endpoint wants the newer name (its reasoning models refuse the old one);
            # compatible servers know only max_tokens.
            options["max_completion_tokens" if self._official else "max_tokens"] = request.max_tokens
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
        logprobs: tuple[TokenLogprob, ...] = (),
    ) -> Completion:
        structured = parse_json_text(text) if request.json_schema is not None else None
        usage = usage if usage.total_tokens else estimated_usage(request, text)
        return Completion(
            text=text,
            model=request.model,
            served_model=model if model != request.model else None,
            usage=usage,
            latency_ms=latency_ms,
            finish_reason=reached_limit(finish, usage, request.max_tokens),
            structured=structured,
            tool_calls=tool_calls,
            logprobs=logprobs,
        )

    def _invalid(self, request: CompletionRequest, why: str) -> InvalidResponse:
        return InvalidResponse(f"{self.name}: unusable response from model {request.model}: {why}", provider=self.name)

    async def stream(self, request: CompletionRequest) -> AsyncIterator[Delta]:
        """Stream through Chat Completions; the final delta carries finish reason, usage and model.

        The request goes through the wire (endpoint, key, headers, status errors); the streamed
        events are read as JSON here (see :mod:`dialectic.llm.sse`). The finish
        reason is None when the server ended the stream without giving one.
        """
        finish: str | None = None
        usage = Usage()
        streamed: list[str] = []
        body = {**self._chat_options(request), "stream": True, "stream_options": {"include_usage": True}}
        try:
            body.update(await self._cache_fields(request, chat=True))
            response = await self._post("chat/completions", body, request, stream=True)
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
                        raise WireError(str(message or "error"), response.request, body=error)
                    if chunk.get("usage"):
                        usage = _usage_json(chunk["usage"], "prompt_tokens", "completion_tokens")
                    for choice in chunk.get("choices") or ():
                        content = (choice.get("delta") or {}).get("content")
                        if content:
                            streamed.append(content)
                            yield Delta(text=content)
                        if choice.get("finish_reason") is not None:
                            finish = _chat_finish(choice["finish_reason"])
            finally:
                await response.aclose()
        except (WireError, ValueError) as error:
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
        if not usage.total_tokens:
            usage = estimated_usage(request, "".join(streamed))
        yield Delta(
            finish_reason=reached_limit(finish, usage, request.max_tokens) if finish else finish,
            usage=usage,
            model=request.model,
        )

    async def aclose(self) -> None:
        await self._client.aclose()
