"""The one protocol every LLM provider implements, and the data it speaks.

A provider turns a :class:`CompletionRequest` into a :class:`Completion` (or a stream of
:class:`Delta`). Providers translate their SDK's errors into ``dialectic.errors``
(``ProviderAuthError``, ``RateLimited``, ``ProviderUnavailable``, ``ProviderTimeout``,
``InvalidResponse``, ``BadRequest``, ``ModelNotFound``, ``ContextWindowExceeded``) and do not
retry on their own: retries, continuation of cut-off replies and structured-output repair are
wrappers that live once in this package, not in each adapter.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, runtime_checkable

from dialectic.domain import Usage

Role = Literal["system", "user", "assistant"]

FINISH_STOP = "stop"
FINISH_LENGTH = "length"
"""The reply was cut off by the token limit."""


@dataclass(frozen=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True)
class JsonSchema:
    """A request for structured output: the provider's native JSON-schema mode where it has one."""

    name: str
    schema: dict[str, Any]


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
        return replace(self, **changes)


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    usage: Usage = field(default_factory=Usage)
    latency_ms: int = 0
    finish_reason: str | None = FINISH_STOP
    structured: Any | None = None
    """The parsed JSON value when a schema was requested and the reply parsed."""
    truncated: bool = False
    """Set by the continuation wrapper when the reply was still cut off after continuing."""
    attempts: int = 1

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
    """What the engine calls. ``name`` identifies the provider kind (``openai``, ``scripted``…)."""

    name: str

    async def complete(self, request: CompletionRequest) -> Completion: ...

    def stream(self, request: CompletionRequest) -> AsyncIterator[Delta]: ...

    async def aclose(self) -> None: ...


async def complete_via_stream(
    provider: LLMProvider, request: CompletionRequest, on_text: Callable[[str], None] | None = None
) -> Completion:
    """Build a :class:`Completion` by draining ``provider.stream``; ``on_text`` sees each piece of text as it comes."""
    import time

    started = time.perf_counter()
    parts: list[str] = []
    finish: str | None = None
    usage = Usage()
    model = request.model
    async for delta in provider.stream(request):
        if delta.text:
            parts.append(delta.text)
            if on_text is not None:
                on_text(delta.text)
        if delta.finish_reason:
            finish = delta.finish_reason
        if delta.usage is not None:
            usage = delta.usage
        if delta.model:
            model = delta.model
    return Completion(
        text="".join(parts),
        model=model,
        usage=usage,
        latency_ms=int((time.perf_counter() - started) * 1000),
        finish_reason=finish,
    )
