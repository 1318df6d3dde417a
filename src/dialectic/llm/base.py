"""The one protocol every LLM provider implements, and the data it speaks.

A provider turns a :class:`CompletionRequest` into a :class:`Completion` (or a stream of
:class:`Delta`). Providers translate their client's errors into ``dialectic.core.errors``
(``ProviderAuthError``, ``RateLimited``, ``ProviderUnavailable``, ``ProviderTimeout``,
``InvalidResponse``, ``BadRequest``, ``ModelNotFound``, ``ContextWindowExceeded``) and do not
retry on their own: retries, continuation of cut-off replies and structured-output repair are
wrappers that live once in this package, not in each adapter.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, runtime_checkable

from dialectic.core.domain import Usage
from dialectic.core.json_values import JsonObject, JsonValue

Role = Literal["system", "user", "assistant", "tool"]

FINISH_STOP = "stop"
FINISH_LENGTH = "length"
"""The reply was cut off by the token limit."""
FINISH_TOOL_CALLS = "tool_calls"
"""The model asked for one or more tools to be called (see :attr:`Completion.tool_calls`)."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call: its name, what it does, and its arguments as a JSON schema (an object)."""

    name: str
    description: str
    parameters: JsonObject


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for. ``arguments`` is the parsed JSON object; ``arguments_text`` the raw text.

    When the model's arguments are not a JSON object, ``arguments`` is empty and ``arguments_text``
    keeps what it sent, so the tool can answer with an error the model sees.
    """

    id: str
    name: str
    arguments: JsonObject = field(default_factory=dict)
    arguments_text: str = ""


@dataclass(frozen=True)
class Message:
    """One message of a conversation.

    An assistant message may carry the ``tool_calls`` the model made (its ``content`` may then be
    empty); a ``tool`` message carries one call's result, tied to it by ``tool_call_id``.
    """

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


@dataclass(frozen=True)
class JsonSchema:
    """A request for structured output: the provider's native JSON-schema mode where it has one."""

    name: str
    schema: JsonObject


@dataclass(frozen=True)
class CompletionRequest:
    messages: tuple[Message, ...]
    model: str
    temperature: float | None = None
    max_tokens: int | None = None
    json_schema: JsonSchema | None = None
    timeout_s: float | None = None
    """Per-call timeout in seconds; ``None`` means the adapter's default."""
    tag: str = ""
    """What the call is for (e.g. ``proposal:architect``); used by logs and the scripted model."""
    tools: tuple[ToolSpec, ...] = ()
    """Tools the model may call in this reply (native tool calling); empty: none."""
    logprobs: bool = False
    """Ask for each generated token's log-probability (:attr:`Completion.logprobs`) where the provider
    returns them (Chat Completions servers such as llama-server do); a provider that cannot ignores it."""
    prompt_cache_key: str = ""
    """Whose prompt this is, for the providers' prompt caches (a debate run and a participant): OpenAI's
    ``prompt_cache_key``, and the llama-server slot the participant keeps. Empty: no affinity asked.
    Set by the client after the call cache's key is taken, so it never splits the call cache."""

    @property
    def system(self) -> str:
        return "\n\n".join(m.content for m in self.messages if m.role == "system")

    @property
    def conversation(self) -> tuple[Message, ...]:
        return tuple(m for m in self.messages if m.role != "system")

    @property
    def last_user(self) -> str:
        for m in reversed(self.messages):
            if m.role == "user":
                return m.content
        return ""

    def with_changes(self, **changes: Any) -> CompletionRequest:
        """A copy with ``changes``; ``dataclasses.replace`` checks the names at run time. ``Any``: a keyword
        pass-through has no one type (``replace(request, …)`` directly gets mypy's check per field)."""
        return replace(self, **changes)


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token and its natural-log probability under the model."""

    token: str
    logprob: float


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    """The model as configured (what the request asked for)."""
    usage: Usage = field(default_factory=Usage)
    latency_ms: int = 0
    finish_reason: str | None = FINISH_STOP
    structured: JsonValue | None = None
    """The parsed JSON value when a schema was requested and the reply parsed."""
    truncated: bool = False
    """Set by the continuation wrapper when the reply was still cut off after continuing."""
    attempts: int = 1
    tool_calls: tuple[ToolCall, ...] = ()
    """The tools the model asked to call (``finish_reason`` is then ``tool_calls``); empty for a plain reply."""
    served_model: str | None = None
    """The model name the server reported, when it differs from :attr:`model` (llama-server reports the
    GGUF file it loaded)."""
    logprobs: tuple[TokenLogprob, ...] = ()
    """The reply's tokens with their log-probabilities, when the request asked and the provider returned
    them; empty otherwise (and after a cut-off reply was continued: the pieces do not join exactly)."""

    @property
    def cut_off(self) -> bool:
        return self.finish_reason == FINISH_LENGTH


@dataclass(frozen=True)
class Delta:
    """One piece of a streamed reply. The final delta carries ``finish_reason`` and ``usage``."""

    text: str = ""
    finish_reason: str | None = None
    usage: Usage | None = None
    model: str | None = None


@runtime_checkable
class LLMProvider(Protocol):
    """What the engine calls. ``name`` identifies the provider kind (``openai``, ``scripted``…).

    A provider that does native tool calling says so with a ``supports_tools = True`` attribute
    (see :func:`supports_tools`; optional, so plugins written before tools still fit): its
    ``complete`` then honours ``request.tools`` and returns the calls in ``Completion.tool_calls``.
    ``stream`` is never given a request with tools (the client calls ``complete`` for those).
    """

    name: str

    async def complete(self, request: CompletionRequest) -> Completion: ...

    def stream(self, request: CompletionRequest) -> AsyncIterator[Delta]: ...

    async def aclose(self) -> None: ...


def supports_tools(provider: LLMProvider) -> bool:
    """Whether ``provider`` does native tool calling (its ``supports_tools`` attribute; absent: no)."""
    return bool(getattr(provider, "supports_tools", False))


HOLD_LIMIT_S = 0.0002
"""How long draining one stream may keep the event loop before it lets other work run.

A reply whose chunks are already buffered (a fast server, or a burst after a pause) would
otherwise be drained in one go, holding up every other debate and event stream of the process
for the whole reply."""


class _PieceBatch:
    """Pieces of text handed on together, once per turn of the event loop (not once per chunk).

    The pieces that arrive while the stream holds the loop go out joined, as one piece, as soon
    as it lets go; a piece that arrives on its own goes out on the next turn.
    """

    def __init__(self, on_text: Callable[[str], None]) -> None:
        self._on_text = on_text
        self._pending: list[str] = []
        self._scheduled = False

    def add(self, text: str) -> None:
        self._pending.append(text)
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        self._scheduled = False
        if self._pending:
            text = "".join(self._pending)
            self._pending.clear()
            self._on_text(text)


async def complete_via_stream(
    provider: LLMProvider, request: CompletionRequest, on_text: Callable[[str], None] | None = None
) -> Completion:
    """Build a :class:`Completion` by draining ``provider.stream``; ``on_text`` sees the text as it comes.

    ``on_text`` gets the pieces that arrived during one turn of the event loop joined into one, and
    the drain lets other work run at least every :data:`HOLD_LIMIT_S` (see there).
    """
    started = time.perf_counter()
    parts: list[str] = []
    finish: str | None = None
    usage = Usage()
    model = request.model
    batch = _PieceBatch(on_text) if on_text is not None else None
    held_since = time.perf_counter()
    try:
        async for delta in provider.stream(request):
            if delta.text:
                parts.append(delta.text)
                if batch is not None:
                    batch.add(delta.text)
            if delta.finish_reason:
                finish = delta.finish_reason
            if delta.usage is not None:
                usage = delta.usage
            if delta.model:
                model = delta.model
            now = time.perf_counter()
            if now - held_since >= HOLD_LIMIT_S:
                await asyncio.sleep(0)
                held_since = time.perf_counter()
    finally:
        if batch is not None:
            batch.flush()
    return Completion(
        text="".join(parts),
        model=model,
        usage=usage,
        latency_ms=int((time.perf_counter() - started) * 1000),
        finish_reason=finish,
    )
