"""A debate as one OpenTelemetry trace, read back from the SDK's in-memory exporter: span tree and attributes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from dialectic.core.config import SystemConfig
from dialectic.core.domain import DebateState
from dialectic.core.errors import BudgetExceeded, ProviderUnavailable
from dialectic.core.events import EventBus
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.engine.api import BudgetChange
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import ScriptedProvider, default_reply
from dialectic.store import MemoryStore
from dialectic.testing.harness import FAST_RETRY, make_config, scripted_judge
from dialectic.tracing.otel import DebateTracer, trace_id_of


class Traced:
    """An engine on the scripted model whose runs are traced into memory."""

    def __init__(self, provider: ScriptedProvider, *, content: bool = False) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer = DebateTracer.to_exporter(self.exporter, content=content, batch=False)
        self.store = MemoryStore()
        bus = EventBus()
        bus.subscribe(self.tracer)
        pool = ProviderPool(overrides={"scripted": provider})
        self.engine = DebateEngine(self.store, pool, bus, retry=FAST_RETRY, watchers=[self.tracer])

    def start(self, config: SystemConfig, *, clarify: bool = False) -> DebateState:
        request = DebateRequest(problem="Design a rate limiter", config=config, config_dir=Path("."), clarify=clarify)
        return asyncio.run(self.engine.start(request))

    def spans(self) -> Sequence[ReadableSpan]:
        return self.exporter.get_finished_spans()


def named(spans: Sequence[ReadableSpan], prefix: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name.startswith(prefix)]


def parent_of(span: ReadableSpan, spans: Sequence[ReadableSpan]) -> ReadableSpan | None:
    if span.parent is None:
        return None
    return next(s for s in spans if s.context.span_id == span.parent.span_id)


def attr(span: ReadableSpan, key: str) -> Any:
    assert span.attributes is not None
    return span.attributes.get(key)


def fail_first_critique() -> Any:
    failed: list[bool] = []

    def respond(request: Any) -> Any:
        if request.tag.startswith("critique") and not failed:
            failed.append(True)
            return ProviderUnavailable("scripted: server error (500)")
        return default_reply(request)

    return respond


def test_one_debate_is_one_trace_with_the_debate_its_rounds_steps_calls_and_requests() -> None:
    traced = Traced(ScriptedProvider(fail_first_critique()))
    state = traced.start(make_config(agents=2, rounds=2))
    spans = traced.spans()

    assert state.trace_id is not None
    assert {s.context.trace_id for s in spans} == {int(state.trace_id, 16)}
    (root,) = [s for s in spans if s.parent is None]
    assert root.name == "debate"
    assert attr(root, "dialectic.debate.id") == state.id and attr(root, "dialectic.debate.status") == "completed"
    rounds = named(spans, "round ")
    assert sorted(s.name for s in rounds) == ["round 1", "round 2"]
    assert all(parent_of(s, spans) is root for s in rounds)

    steps = {s.name: s for s in named(spans, "step ")}
    assert parent_of(steps["step synthesis"], spans) is root
    for step in named(spans, "step proposal") + named(spans, "step critique") + named(spans, "step refinement"):
        assert parent_of(step, spans) in rounds

    calls = [s for s in spans if attr(s, "dialectic.call.kind") is not None]
    assert len(calls) == len(state.ledger)
    for call in calls:
        kind = attr(call, "dialectic.call.kind")
        expected_parent = steps["step synthesis"] if kind == "synthesis" else None
        if expected_parent is not None:
            assert parent_of(call, spans) is expected_parent
        else:
            parent = parent_of(call, spans)
            assert parent is not None and parent.name == f"round {attr(call, 'dialectic.round')}"

    requests = named(spans, "chat ")
    assert len(requests) == sum(e.attempts for e in state.ledger)
    answered = [r for r in requests if r.status.status_code != StatusCode.ERROR]
    assert sum(attr(r, "gen_ai.usage.input_tokens") for r in answered) == sum(e.input_tokens for e in state.ledger)
    assert sum(attr(r, "gen_ai.usage.output_tokens") for r in answered) == sum(e.output_tokens for e in state.ledger)
    for request in answered:
        assert attr(request, "gen_ai.system") == "scripted"
        assert attr(request, "gen_ai.request.model") == "m"
        assert attr(request, "gen_ai.operation.name") == "chat"
        assert tuple(attr(request, "gen_ai.response.finish_reasons")) == ("stop",)
        assert attr(parent_of(request, spans), "dialectic.call.kind") is not None  # type: ignore[arg-type]
        assert attr(request, "gen_ai.prompt") is None and attr(request, "gen_ai.completion") is None


def test_a_failed_request_is_an_error_span_and_its_retry_an_event_of_the_call() -> None:
    traced = Traced(ScriptedProvider(fail_first_critique()))
    traced.start(make_config(agents=2, rounds=1))
    spans = traced.spans()

    (failed,) = [s for s in named(spans, "chat ") if s.status.status_code == StatusCode.ERROR]
    assert attr(failed, "error.type") == "ProviderUnavailable"
    assert any(e.name == "exception" for e in failed.events)
    call = parent_of(failed, spans)
    assert call is not None and attr(call, "dialectic.call.kind") == "critique"
    assert [e.name for e in call.events] == ["request failed", "retry"]
    assert attr(call, "dialectic.call.attempts") == 2 and attr(call, "dialectic.call.requests") == 1


def test_prompts_and_replies_are_in_the_spans_only_with_content() -> None:
    traced = Traced(ScriptedProvider(), content=True)
    traced.start(make_config(agents=2, rounds=1))
    request = named(traced.spans(), "chat ")[0]
    messages = json.loads(attr(request, "gen_ai.prompt"))
    assert messages[0]["role"] == "system" and "Design a rate limiter" in messages[-1]["content"]
    assert attr(request, "gen_ai.completion").startswith("1. **")  # the scripted design debate's proposal


def test_a_resumed_debate_continues_the_same_trace() -> None:
    traced = Traced(ScriptedProvider(scripted_judge()))
    first = traced.start(make_config(agents=2, rounds=1, clarificationsMaxIterations=1), clarify=True)
    assert first.status == "suspended"
    answers = {q.id: "yes" for q in first.pending_questions()}
    done = asyncio.run(traced.engine.resume(first.id, answers))

    spans = traced.spans()
    assert done.status == "completed"
    assert {s.context.trace_id for s in spans} == {int(first.trace_id or "0", 16)}
    roots = [s for s in spans if s.parent is None]
    assert [(attr(r, "dialectic.debate.resumed"), attr(r, "dialectic.debate.status")) for r in roots] == [
        (False, "suspended"),
        (True, "completed"),
    ]


def test_a_debate_stopped_by_its_budget_ends_its_trace_in_error() -> None:
    traced = Traced(ScriptedProvider())
    data = make_config(agents=2, rounds=1).to_json_dict()
    data["debate"]["budget"] = {"maxTokens": 600}  # type: ignore[index]
    with pytest.raises(BudgetExceeded) as raised:
        traced.start(SystemConfig.model_validate(data))
    (root,) = [s for s in traced.spans() if s.parent is None]
    assert root.status.status_code == StatusCode.ERROR and attr(root, "dialectic.debate.status") == "failed"
    assert raised.value.debate_id is not None
    done = asyncio.run(traced.engine.resume(raised.value.debate_id, budget=BudgetChange(max_tokens=100_000)))
    assert done.status == "completed"
    assert len({s.context.trace_id for s in traced.spans()}) == 1


def test_a_debate_saved_without_a_trace_id_gets_one_from_its_id() -> None:
    assert trace_id_of("deb-1", None) == trace_id_of("deb-1", None) != trace_id_of("deb-2", None)
    assert trace_id_of("deb-1", "0af7651916cd43dd8448eb211c80319c") == 0x0AF7651916CD43DD8448EB211C80319C


def test_each_tool_call_is_a_child_span_of_its_call(tmp_path: Path) -> None:
    from dialectic.llm.base import CompletionRequest, ToolCall
    from dialectic.llm.scripted import ScriptedReply

    (tmp_path / "notes.md").write_text("Use Redis.\n", encoding="utf-8")

    def respond(request: CompletionRequest) -> Any:
        if request.tools and not any(m.role == "tool" for m in request.messages):
            return ScriptedReply(
                tool_calls=(
                    ToolCall("a", "file_read", {"path": "notes.md"}),
                    ToolCall("b", "file_read", {"path": "../secret"}),
                )
            )
        return default_reply(request)

    config = make_config(agents=2)
    context = config.debate.context.model_copy(update={"dir": str(tmp_path)})
    config = config.model_copy(update={"debate": config.debate.model_copy(update={"context": context})})
    traced = Traced(ScriptedProvider(respond), content=True)
    state = traced.start(config)
    assert state.status == "completed"
    spans = traced.spans()
    tools = named(spans, "execute_tool")
    assert len(tools) == 2 * 2 * 2  # two calls in each proposal and refinement of two agents
    for span in tools:
        call = parent_of(span, spans)
        assert call is not None and call.name.split()[0] in ("proposal", "refinement")
        assert attr(span, "gen_ai.tool.name") == "file_read"
        assert span.start_time is not None and span.end_time is not None and span.start_time <= span.end_time
    ok = [s for s in tools if s.status.status_code != StatusCode.ERROR]
    failed = [s for s in tools if s.status.status_code == StatusCode.ERROR]
    assert len(ok) == len(failed) == 4
    assert attr(ok[0], "dialectic.tool.result_chars") == len("notes.md (lines 1-1 of 1)\nUse Redis.")
    assert json.loads(attr(ok[0], "gen_ai.tool.call.arguments")) == {"path": "notes.md"}
    assert attr(failed[0], "error.type") == "tool_error"
