"""A debate as one OpenTelemetry trace: spans for the debate, its rounds, its steps and every LLM call.

:class:`DebateTracer` is two things the engine already offers a place for: an event-bus
subscriber (the debate, its rounds and the runner's steps come from events) and a
:class:`~dialectic.engine.calls.CallWatcher` (each call the engine makes, and each provider
request inside it). The tree of one run::

    debate                                   (root; dialectic.debate.*)
    ├── round 1                              (started by the round's first work)
    │   ├── proposal System Architect        (one call: its ledger figures, retries as events)
    │   │   ├── chat gpt-4o-mini             (one provider request: GenAI attributes)
    │   │   └── execute_tool file_read       (one tool call of the agent's tool loop)
    │   └── critique …
    ├── step proposal, step critique, …      (the runner's nodes)
    └── synthesis Technical Judge

Provider requests carry the GenAI semantic conventions (``gen_ai.system``,
``gen_ai.request.model``, ``gen_ai.usage.input_tokens``/``output_tokens``,
``gen_ai.response.finish_reasons``); prompt and reply text (``gen_ai.prompt``,
``gen_ai.completion``) only when the settings ask for content. Failed requests record the
exception on their span; on the call's span each failure is an event, and each new attempt
after one a ``retry`` event.

Every run of a debate uses the debate's stored trace id, so a resumed debate continues the
same trace (a new root span per run). This module imports the OpenTelemetry SDK: load it only
when tracing is on.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass, field

from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, set_span_in_context

from dialectic.core import events as ev
from dialectic.core.domain import LedgerEntry, ToolCallRecord
from dialectic.core.errors import ProviderError
from dialectic.engine.calls import CallInfo, CallWatch
from dialectic.llm.base import Completion, CompletionRequest
from dialectic.tracing.settings import TraceSettings

ROUND_STEPS = frozenset({"summarization", "proposal", "critique", "refinement", "turns", "evaluation"})
"""Steps of the runner that belong to the round in progress (their spans sit under its span)."""
INSTRUMENTATION = "dialectic"


class DebateIds(RandomIdGenerator):
    """Random ids, except the trace id of a debate's root span, which is the debate's own."""

    def __init__(self) -> None:
        self.next_trace_id: int | None = None

    def generate_trace_id(self) -> int:
        chosen, self.next_trace_id = self.next_trace_id, None
        return chosen if chosen else super().generate_trace_id()


def trace_id_of(debate_id: str, stored: str | None) -> int:
    """The debate's stored trace id; for a debate saved before it had one, one derived from its id."""
    if stored:
        return int(stored, 16)
    return int(hashlib.sha256(debate_id.encode("utf-8")).hexdigest()[:32], 16) or 1


@dataclass
class _Debate:
    root: Span
    rounds: dict[int, Span] = field(default_factory=dict)
    open_rounds: set[int] = field(default_factory=set)
    step: Span | None = None


class DebateTracer:
    """Turns debates into traces; subscribe it to the engine's bus and give it to the engine as a watcher."""

    def __init__(self, provider: TracerProvider, ids: DebateIds, *, content: bool = False) -> None:
        self.provider = provider
        self.content = content
        self._ids = ids
        self._tracer: Tracer = provider.get_tracer(INSTRUMENTATION)
        self._debates: dict[str, _Debate] = {}

    @classmethod
    def to_exporter(
        cls, exporter: SpanExporter, *, content: bool = False, batch: bool = True, service_name: str = "dialectic"
    ) -> DebateTracer:
        """A tracer whose spans go to ``exporter`` (batched in the background, or one by one for tests)."""
        ids = DebateIds()
        provider = TracerProvider(resource=Resource.create({"service.name": service_name}), id_generator=ids)
        provider.add_span_processor(BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter))
        return cls(provider, ids, content=content)

    @classmethod
    def from_settings(cls, settings: TraceSettings) -> DebateTracer:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(endpoint=settings.endpoint, headers=dict(settings.headers) or None)
        return cls.to_exporter(exporter, content=settings.content, service_name=settings.service_name)

    def shutdown(self) -> None:
        """End what is still open and send every span (blocks until the exporter is done)."""
        for debate_id in list(self._debates):
            self._end_debate(debate_id, "stopped", error=None)
        self.provider.shutdown()

    # -- the bus ---------------------------------------------------------------------------------

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.DebateStarted):
            self._start_debate(event)
            return
        debate = self._debates.get(event.debate_id)
        if debate is None:
            return
        if isinstance(event, ev.RoundBegan):
            self._round(debate, event.round_number)
            debate.open_rounds.add(event.round_number)
        elif isinstance(event, ev.NodeStarted):
            self._start_step(debate, event)
        elif isinstance(event, ev.NodeFinished):
            self._end_step(debate, event)
        elif isinstance(event, ev.Warning):
            (debate.step or debate.root).add_event("dialectic.warning", {"message": event.message})
        elif isinstance(event, ev.DebateCompleted):
            self._end_debate(event.debate_id, "completed", error=None)
        elif isinstance(event, ev.DebateSuspended):
            self._end_debate(event.debate_id, "suspended", error=None)
        elif isinstance(event, ev.DebateInterrupted):
            self._end_debate(event.debate_id, "interrupted", error=None)
        elif isinstance(event, ev.DebateFailed):
            self._end_debate(event.debate_id, "failed", error=event.error)

    def _start_debate(self, event: ev.DebateStarted) -> None:
        self._ids.next_trace_id = trace_id_of(event.debate_id, event.trace_id)
        attributes: dict[str, str | int | bool] = {
            "dialectic.debate.id": event.debate_id,
            "dialectic.debate.format": event.format,
            "dialectic.debate.rounds": event.total_rounds,
            "dialectic.debate.resumed": event.resumed,
            "dialectic.debate.agents": ", ".join(a.name for a in event.agents),
            "dialectic.debate.judge": event.judge.name,
        }
        if self.content:
            attributes["dialectic.debate.problem"] = event.problem
        root = self._tracer.start_span("debate", context=Context(), attributes=attributes)
        self._ids.next_trace_id = None
        self._debates[event.debate_id] = _Debate(root)

    def _round(self, debate: _Debate, number: int) -> Span:
        """The span of round ``number``, started by whatever comes first: its first work or its start."""
        span = debate.rounds.get(number)
        if span is None:
            span = self._tracer.start_span(
                f"round {number}", context=set_span_in_context(debate.root), attributes={"dialectic.round": number}
            )
            debate.rounds[number] = span
            debate.open_rounds.add(number)
        return span

    def _start_step(self, debate: _Debate, event: ev.NodeStarted) -> None:
        if event.node in ROUND_STEPS and event.round_number in debate.rounds:
            parent = debate.rounds[event.round_number]
        else:
            parent = debate.root
            for number in [n for n in debate.open_rounds if n <= event.round_number]:
                debate.rounds[number].end()
                debate.open_rounds.discard(number)
        debate.step = self._tracer.start_span(
            f"step {event.node}",
            context=set_span_in_context(parent),
            attributes={"dialectic.step": event.node, "dialectic.round": event.round_number},
        )

    def _end_step(self, debate: _Debate, event: ev.NodeFinished) -> None:
        step, debate.step = debate.step, None
        if step is None:
            return
        step.set_attribute("dialectic.step.next", event.outcome)
        if event.outcome == "error":
            step.set_status(Status(StatusCode.ERROR))
        step.end()

    def _end_debate(self, debate_id: str, status: str, *, error: str | None) -> None:
        debate = self._debates.pop(debate_id, None)
        if debate is None:
            return
        if debate.step is not None:
            debate.step.end()
        for number in sorted(debate.open_rounds):
            debate.rounds[number].end()
        debate.root.set_attribute("dialectic.debate.status", status)
        if error is not None:
            debate.root.set_status(Status(StatusCode.ERROR, error))
        debate.root.end()

    # -- the calls -------------------------------------------------------------------------------

    def call_started(self, info: CallInfo) -> CallWatch:
        debate = self._debates.get(info.debate_id)
        if debate is None:
            parent = Context()
        elif info.round_number is not None:
            parent = set_span_in_context(self._round(debate, info.round_number))
        else:
            parent = set_span_in_context(debate.step or debate.root)
        attributes: dict[str, str | int] = {
            "dialectic.call.kind": info.kind,
            "dialectic.call.activity": info.activity,
            "gen_ai.agent.id": info.agent_id,
            "gen_ai.agent.name": info.agent_name,
        }
        if info.round_number is not None:
            attributes["dialectic.round"] = info.round_number
        if info.target_id is not None:
            attributes["dialectic.call.target"] = info.target_id
        span = self._tracer.start_span(f"{info.kind} {info.agent_name}", context=parent, attributes=attributes)
        return _CallSpan(self._tracer, span, content=self.content)


class _CallSpan:
    """One call's span, and the span of the provider request in progress under it."""

    def __init__(self, tracer: Tracer, span: Span, *, content: bool) -> None:
        self._tracer = tracer
        self.span = span
        self._content = content
        self._request: Span | None = None
        self._attempt = 0
        self._failed_last = False

    def request_started(self, provider: str, request: CompletionRequest) -> None:
        self._attempt += 1
        if self._failed_last:
            self.span.add_event("retry", {"attempt": self._attempt})
        attributes: dict[str, str | int | float] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": provider,
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": request.model,
            "dialectic.request.attempt": self._attempt,
        }
        if request.max_tokens is not None:
            attributes["gen_ai.request.max_tokens"] = request.max_tokens
        if request.temperature is not None:
            attributes["gen_ai.request.temperature"] = request.temperature
        if request.json_schema is not None:
            attributes["gen_ai.output.type"] = "json"
        if self._content:
            messages = [{"role": m.role, "content": m.content} for m in request.messages]
            attributes["gen_ai.prompt"] = json.dumps(messages, ensure_ascii=False)
        self._request = self._tracer.start_span(
            f"chat {request.model}", context=set_span_in_context(self.span), kind=SpanKind.CLIENT, attributes=attributes
        )

    def request_finished(
        self, request: CompletionRequest, completion: Completion | None, error: BaseException | None
    ) -> None:
        span, self._request = self._request, None
        if span is None:
            return
        if completion is not None:
            usage = completion.usage
            span.set_attribute("gen_ai.response.model", completion.model)
            span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
            if usage.cached_input_tokens is not None:
                span.set_attribute("dialectic.usage.cached_input_tokens", usage.cached_input_tokens)
            if completion.finish_reason:
                span.set_attribute("gen_ai.response.finish_reasons", (completion.finish_reason,))
            if self._content:
                span.set_attribute("gen_ai.completion", completion.text)
            self._failed_last = False
        elif error is not None:
            kind = type(error).__name__
            span.set_attribute("error.type", kind)
            span.record_exception(error)
            span.set_status(Status(StatusCode.ERROR, _message(error)))
            self.span.add_event(
                "request failed", {"attempt": self._attempt, "error.type": kind, "message": _message(error)}
            )
            self._failed_last = True
        span.end()

    def tool_called(self, record: ToolCallRecord, started: float, ended: float) -> None:
        """One tool call of the call's tool loop: a child span of the call, timed as it ran."""
        attributes: dict[str, str | int] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": record.name,
            "dialectic.tool.result_chars": record.result_chars,
        }
        if self._content:
            attributes["gen_ai.tool.call.arguments"] = json.dumps(record.arguments, ensure_ascii=False)
        span = self._tracer.start_span(
            f"execute_tool {record.name}",
            context=set_span_in_context(self.span),
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=int(started * 1e9),
        )
        if record.error is not None:
            span.set_attribute("error.type", "tool_error")
            span.set_status(Status(StatusCode.ERROR, record.error))
        span.end(end_time=int(ended * 1e9))

    def finished(self, entry: LedgerEntry | None, error: BaseException | None) -> None:
        if entry is not None:
            self.span.set_attribute("gen_ai.usage.input_tokens", entry.input_tokens)
            self.span.set_attribute("gen_ai.usage.output_tokens", entry.output_tokens)
            self.span.set_attribute("dialectic.call.requests", entry.requests)
            self.span.set_attribute("dialectic.call.attempts", entry.attempts)
            self.span.set_attribute("dialectic.call.status", entry.status)
            if entry.cost_usd is not None:
                self.span.set_attribute("dialectic.cost_usd", entry.cost_usd)
        if error is not None and not isinstance(error, asyncio.CancelledError):
            self.span.record_exception(error)
            self.span.set_status(Status(StatusCode.ERROR, _message(error)))
        self.span.end()


def _message(error: BaseException) -> str:
    if isinstance(error, ProviderError):
        return error.message
    return str(error) or type(error).__name__
