"""An agent's contribution written with tools: call, run the tools asked for, call again — bounded.

Each step offers the context directory's tools (:mod:`dialectic.context.tools`) and sends
the conversation so far; when the model asks for tools, they are run, the assistant message
and one ``tool`` message per call are appended, and the model is called again. After
``max_calls`` tool calls (or when the model stops asking) the loop ends; if the model was
still asking, one last call without tools gets the final text. Every step is a real request
through the agent's client, so the usage ledger and the budget see each one; the reply's
usage, latency and attempts are the loop's totals.

Whoever watches the call (the engine's tracer) hears of each tool call through
:func:`observing_tools`, the way :mod:`dialectic.llm.observe` reports requests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel

from dialectic.context.tools import TOOL_PARAMETERS, ContextDirectory, ToolOutcome, ToolSession
from dialectic.core.domain import ToolCallRecord, Usage
from dialectic.core.errors import ToolsUnsupported
from dialectic.llm.base import Completion, CompletionRequest, Message, ToolCall, ToolSpec
from dialectic.llm.client import LLMClient, RetryHook, StructuredResult, parse_structured

M = TypeVar("M", bound=BaseModel)

STRUCTURED_NUDGE = "Now give your answer as the JSON object asked for above, without tools."
FINAL_NUDGE = "You have used the tool calls this answer may make. Write your answer now, without tools."
LIMIT_REACHED = "the tool-call limit of this answer is reached; write your answer with what you have read"


def tool_specs() -> tuple[ToolSpec, ...]:
    """The context tools as the model is offered them."""
    return tuple(ToolSpec(name, description, schema) for name, (description, schema) in TOOL_PARAMETERS.items())


@dataclass
class ToolAccess:
    """What an agent may use for one debate: the opened directory and the cap on calls per contribution."""

    directory: ContextDirectory
    max_calls: int

    def overview(self) -> str:
        return self.directory.overview()


@dataclass(frozen=True)
class StructuredReply(Generic[M]):
    """A structured reply, and the tool calls made for it."""

    result: StructuredResult[M]
    tool_calls: tuple[ToolCallRecord, ...] | None = None
    """``None``: the speaker had no tools."""


@dataclass(frozen=True)
class AgentReply:
    """A contribution's final completion and the tool calls made to write it (``None``: it had no tools)."""

    completion: Completion
    tool_calls: tuple[ToolCallRecord, ...] | None = None


class ToolsRejected(Exception):
    """The provider refused a request offering tools (an OpenAI-compatible server without tool support).

    Raised before any tool ran, so the caller can ask again without tools.
    """


class ToolObserver(Protocol):
    def tool_called(self, record: ToolCallRecord, started: float, ended: float) -> None:
        """A tool ran from ``started`` to ``ended`` (``time.time()`` seconds)."""
        ...


_observer: ContextVar[ToolObserver | None] = ContextVar("dialectic_tool_observer", default=None)


@contextmanager
def observing_tools(observer: ToolObserver) -> Iterator[None]:
    """Report the tool calls run inside this block (by this task and those it starts) to ``observer``."""
    token = _observer.set(observer)
    try:
        yield
    finally:
        _observer.reset(token)


@dataclass
class _Totals:
    usage: Usage = field(default_factory=Usage)
    latency_ms: int = 0
    attempts: int = 0

    def add(self, completion: Completion) -> None:
        self.usage = self.usage + completion.usage
        self.latency_ms += completion.latency_ms
        self.attempts += completion.attempts

    def applied(self, completion: Completion) -> Completion:
        return replace(
            completion,
            usage=self.usage,
            latency_ms=self.latency_ms,
            attempts=self.attempts,
            truncated=completion.truncated or completion.cut_off,
        )


@dataclass
class _Reading:
    """Where the tool steps left the conversation."""

    messages: list[Message]
    records: list[ToolCallRecord]
    totals: _Totals
    answer: Completion | None
    """The model's reply when it stopped asking for tools by itself; ``None`` when the cap stopped it."""


async def _read(
    client: LLMClient,
    request: CompletionRequest,
    access: ToolAccess,
    on_retry: RetryHook | None,
    clock: Callable[[], float],
) -> _Reading:
    """The tool steps: call with the tools offered, run what the model asks for, until it answers or the cap."""
    specs = tool_specs()
    session = access.directory.session()
    reading = _Reading(list(request.messages), [], _Totals(), None)
    while len(reading.records) < access.max_calls:
        asked = request.with_changes(messages=tuple(reading.messages), tools=specs)
        step = await _tool_step(client, asked, on_retry, reading.records)
        reading.totals.add(step)
        if not step.tool_calls:
            reading.answer = step
            return reading
        reading.messages.append(Message("assistant", step.text, tool_calls=step.tool_calls))
        for call in step.tool_calls:
            outcome = _run(session, call, reading.records, access.max_calls, clock)
            reading.messages.append(Message("tool", outcome.text, tool_call_id=call.id))
    return reading


async def complete_with_tools(
    client: LLMClient,
    request: CompletionRequest,
    access: ToolAccess,
    *,
    on_retry: RetryHook | None = None,
    clock: Callable[[], float] = time.time,
) -> AgentReply:
    """The bounded tool loop for a free-text reply (see the module's docstring)."""
    reading = await _read(client, request, access, on_retry, clock)
    if reading.answer is not None:
        return AgentReply(reading.totals.applied(reading.answer), tuple(reading.records))
    messages = (*reading.messages, Message("user", FINAL_NUDGE))
    final = await client.complete(request.with_changes(messages=messages, tools=()), on_retry=on_retry)
    reading.totals.add(final)
    return AgentReply(reading.totals.applied(final), tuple(reading.records))


async def complete_structured_with_tools(
    client: LLMClient,
    request: CompletionRequest,
    output_type: type[M],
    access: ToolAccess,
    *,
    on_retry: RetryHook | None = None,
    clock: Callable[[], float] = time.time,
) -> StructuredReply[M]:
    """The tool loop for a structured reply: read with the tools, then answer in the schema.

    A model that answers with valid JSON once it stops reading is taken at its word; otherwise
    one structured call (schema mode, validated and repaired as usual) follows the reading.
    """
    reading = await _read(client, request, access, on_retry, clock)
    if reading.answer is not None:
        value, _ = parse_structured(reading.answer, output_type)
        if value is not None:
            return StructuredReply(
                StructuredResult(value, reading.totals.applied(reading.answer)), tuple(reading.records)
            )
    messages = list(reading.messages)
    if reading.answer is not None and reading.answer.text.strip():
        messages.append(Message("assistant", reading.answer.text))
    messages.append(Message("user", STRUCTURED_NUDGE))
    result = await client.complete_structured(
        request.with_changes(messages=tuple(messages), tools=()), output_type, on_retry=on_retry
    )
    reading.totals.add(result.completion)
    completion = reading.totals.applied(result.completion)
    return StructuredReply(StructuredResult(result.value, completion, result.error), tuple(reading.records))


async def _tool_step(
    client: LLMClient, request: CompletionRequest, on_retry: RetryHook | None, records: list[ToolCallRecord]
) -> Completion:
    try:
        return await client.complete(request, on_retry=on_retry)
    except ToolsUnsupported as error:
        if not records:
            raise ToolsRejected(error.message) from error
        raise


def _run(
    session: ToolSession,
    call: ToolCall,
    records: list[ToolCallRecord],
    max_calls: int,
    clock: Callable[[], float],
) -> ToolOutcome:
    """Run one call the model asked for (or refuse it past the cap); record and report it."""
    if len(records) >= max_calls:
        return ToolOutcome.failure(LIMIT_REACHED)
    started = clock()
    outcome = session.call(call.name, call.arguments, call.arguments_text)
    ended = clock()
    record = ToolCallRecord(
        name=call.name,
        arguments=dict(call.arguments),
        result_chars=len(outcome.text),
        latency_ms=max(0, round((ended - started) * 1000)),
        error=outcome.error,
    )
    records.append(record)
    observer = _observer.get()
    if observer is not None:
        observer.tool_called(record, started, ended)
    return outcome
