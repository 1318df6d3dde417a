"""``judge.fallback``: a judge that fails after its retries does not sink the debate; a participant writes
the synthesis, and the solution, the report and the export say so."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from dialectic.core import events as ev
from dialectic.core.config import SystemConfig
from dialectic.core.errors import ProviderError, ProviderUnavailable
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import ScriptedReply, default_reply
from dialectic.reporting.export import export_json
from dialectic.reporting.report import render_report
from dialectic.testing.harness import Harness, make_config


def judge_down(request: CompletionRequest) -> ScriptedReply | Exception:
    """The judge's synthesis always fails (503, retryable: the client and the node both try again)."""
    if request.tag == "synthesis:generalist":
        return ProviderUnavailable("scripted: 503 judge down", provider="scripted", status_code=503)
    return default_reply(request)


def with_fallback(value: Any, agents: int = 2) -> SystemConfig:
    data = make_config(agents=agents).model_dump(by_alias=True)
    data["judge"]["fallback"] = value
    return SystemConfig.model_validate(data)


def test_by_default_a_participant_writes_the_synthesis(harness: Callable[..., Harness]) -> None:
    h = harness(judge_down)
    state = h.start(make_config(agents=2))
    assert state.status == "completed"
    solution = state.final_solution
    assert solution is not None and solution.synthesized_by == "agent-architect"
    assert solution.judge_failure is not None and "judge down" in solution.judge_failure
    # the judge had its retries (2 client attempts × 2 node attempts), then the first agent wrote it once
    assert h.tags().count("synthesis:generalist") == 4
    assert h.tags().count("synthesis:architect") == 1
    stand_in = next(c for c in h.provider.calls if c.tag == "synthesis:architect")
    judge_call = next(c for c in h.provider.calls if c.tag == "synthesis:generalist")
    assert stand_in.messages[0] == judge_call.messages[0]  # the judge's instructions, not the architect's
    warnings = [e.message for e in h.of(ev.Warning)]
    assert any("Architect writes the synthesis in its place" in w for w in warnings)
    report = render_report(state)
    assert "**Synthesized by:** Architect" in report
    assert "wrote the synthesis in its place (judge.fallback)" in report and "judge down" in report
    exported = json.loads(export_json(state))["finalSolution"]
    assert exported["synthesizedBy"] == "agent-architect" and "judge down" in exported["judgeFailure"]
    synthesis = [e for e in json.loads(export_json(state))["ledger"] if e["kind"] == "synthesis"]
    assert {e["agentId"] for e in synthesis} >= {"agent-architect"}


def test_a_named_fallback_is_the_one_asked(harness: Callable[..., Harness]) -> None:
    h = harness(judge_down)
    state = h.start(with_fallback("agent-performance"))
    assert state.status == "completed"
    assert state.final_solution is not None and state.final_solution.synthesized_by == "agent-performance"
    assert "synthesis:architect" not in h.tags()


def test_auto_tries_the_next_participant_when_one_fails_too(harness: Callable[..., Harness]) -> None:
    def respond(request: CompletionRequest) -> ScriptedReply | Exception:
        if request.tag == "synthesis:architect":
            return ProviderUnavailable("scripted: 503 architect down", provider="scripted", status_code=503)
        return judge_down(request)

    h = harness(respond)
    state = h.start(make_config(agents=2))
    assert state.final_solution is not None and state.final_solution.synthesized_by == "agent-performance"


def test_auto_prefers_a_participant_on_another_model(harness: Callable[..., Harness]) -> None:
    data = make_config(agents=2).model_dump(by_alias=True)
    data["agents"][1]["model"] = "other"
    h = harness(judge_down)
    state = h.start(SystemConfig.model_validate(data))
    assert state.final_solution is not None and state.final_solution.synthesized_by == "agent-performance"


def test_off_lets_the_judge_fail_the_debate(harness: Callable[..., Harness]) -> None:
    h = harness(judge_down)
    with pytest.raises(ProviderError, match="judge down"):
        h.start(with_fallback("off"))
    assert "synthesis:architect" not in h.tags()
    [saved] = h.store.list()
    assert saved.status == "failed"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("agent-nobody", "judge.fallback: no agent 'agent-nobody'"),
        ({"provider": "scripted"}, "deadline and fallback are for a seat played by a person"),
    ],
)
def test_a_fallback_that_names_no_agent_is_refused(value: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        with_fallback(value)


def test_only_the_judge_names_a_participant() -> None:
    data = make_config(agents=2).model_dump(by_alias=True)
    data["agents"][0]["fallback"] = "agent-performance"
    with pytest.raises(ValidationError, match="only the judge names a participant"):
        SystemConfig.model_validate(data)
