"""Failures: what is retried, what is recorded as failed, what fails the debate (and is saved)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from dialectic.core import events as ev
from dialectic.core.errors import (
    DebateTimeoutError,
    ProviderAuthError,
    ProviderUnavailable,
    TooFewAgentsError,
)
from dialectic.llm.base import FINISH_LENGTH, CompletionRequest
from dialectic.llm.scripted import ScriptedProvider, ScriptedReply, default_reply
from dialectic.testing.harness import Harness, make_config


def test_failing_critique_is_retried_then_recorded_as_failed(harness: Callable[..., Harness]) -> None:
    def respond(request: CompletionRequest) -> ScriptedReply | Exception:
        if request.tag == "critique:architect":
            return ProviderUnavailable("scripted: 503", provider="scripted", status_code=503)
        return default_reply(request)

    h = harness(respond)
    state = h.start(make_config(agents=2))
    assert state.status == "completed"
    failed = [c for c in state.all_contributions() if c.status == "failed"]
    assert len(failed) == 1
    assert failed[0].type == "critique" and failed[0].target_agent_id == "agent-performance"
    assert "503" in (failed[0].error or "")
    # client retries (2 attempts) × engine attempts (2)
    assert h.tags().count("critique:architect") == 4
    assert any(e.contribution.status == "failed" for e in h.of(ev.ContributionAdded))
    # the refinement went ahead without the missing critique
    assert state.round(1).find("refinement", "agent-performance") is not None


def test_provider_that_keeps_failing_fails_the_debate_and_saves_it(harness: Callable[..., Harness]) -> None:
    def respond(request: CompletionRequest) -> ScriptedReply | Exception:
        if request.tag.startswith("refinement"):
            return ProviderUnavailable("scripted: 500", provider="scripted", status_code=500)
        return default_reply(request)

    h = harness(respond)
    with pytest.raises(TooFewAgentsError) as raised:
        h.start(make_config(agents=2))
    debate_id = raised.value.debate_id
    assert debate_id and raised.value.exit_code == 3
    saved = h.store.load(debate_id)
    assert saved.status == "failed" and "500" in (saved.error or "") and "minAgents" in (saved.error or "")
    assert len(saved.round(1).of_type("proposal")) == 2  # the work done so far is kept
    assert saved.dropped and saved.dropped[0].round_number == 1
    assert saved.next_node == "refinement"
    assert h.of(ev.DebateFailed)

    # once the provider recovers, resume finishes without redoing saved work
    fixed = ScriptedProvider()
    done = h.resume(debate_id, provider=fixed)
    assert done.status == "completed"
    assert sorted(c.tag for c in fixed.calls) == [
        "refinement:architect",
        "refinement:performance",
        "synthesis:generalist",
    ]


def test_auth_errors_are_not_retried(harness: Callable[..., Harness]) -> None:
    h = harness(lambda r: ProviderAuthError("scripted: 401", provider="scripted", status_code=401))
    with pytest.raises(TooFewAgentsError) as raised:
        h.start(make_config(agents=2))
    assert "401" in raised.value.message
    assert len(h.provider.calls) == 2  # one per proposal, no retries


def test_truncated_replies_are_continued_then_marked(harness: Callable[..., Harness]) -> None:
    def respond(request: CompletionRequest) -> ScriptedReply:
        if request.tag == "proposal:architect":
            return ScriptedReply(text="part", finish_reason=FINISH_LENGTH)
        return default_reply(request)

    h = harness(respond)
    state = h.start(make_config(agents=2, maxContinuations=2))
    proposal = state.round(1).find("proposal", "agent-architect")
    assert proposal is not None and proposal.metadata.truncated
    assert proposal.content == "part part part"  # the reply and two continuations
    assert proposal.metadata.attempts == 3
    assert h.tags().count("proposal:architect") == 3
    continuation = [c for c in h.provider.calls if c.tag == "proposal:architect"][1]
    assert continuation.messages[-2].role == "assistant" and continuation.messages[-2].content == "part"


def test_continuation_can_be_turned_off(harness: Callable[..., Harness]) -> None:
    def respond(request: CompletionRequest) -> ScriptedReply:
        if request.tag == "proposal:architect":
            return ScriptedReply(text="part", finish_reason=FINISH_LENGTH)
        return default_reply(request)

    h = harness(respond)
    state = h.start(make_config(agents=2, maxContinuations=0))
    proposal = state.round(1).find("proposal", "agent-architect")
    assert proposal is not None and proposal.metadata.truncated and proposal.content == "part"
    assert h.tags().count("proposal:architect") == 1


def test_a_continued_reply_that_finishes_is_not_truncated(harness: Callable[..., Harness]) -> None:
    replies = iter([ScriptedReply(text="first half", finish_reason=FINISH_LENGTH), ScriptedReply(text="second half")])

    def respond(request: CompletionRequest) -> ScriptedReply:
        if request.tag == "proposal:architect":
            return next(replies)
        return default_reply(request)

    state = harness(respond).start(make_config(agents=2))
    proposal = state.round(1).find("proposal", "agent-architect")
    assert proposal is not None and not proposal.metadata.truncated
    assert proposal.content == "first half second half"


def test_round_timeout_is_enforced(harness: Callable[..., Harness]) -> None:
    h = harness(latency_s=0.5)
    with pytest.raises(DebateTimeoutError) as raised:
        h.start(make_config(agents=2, timeoutPerRound=100))
    saved = h.store.load(raised.value.debate_id or "")
    assert saved.status == "failed" and "timeoutPerRound" in (saved.error or "")


def test_unexpected_bug_still_saves_the_debate_as_failed(harness: Callable[..., Harness]) -> None:
    h = harness(lambda r: ZeroDivisionError("scripted bug"))
    with pytest.raises(ZeroDivisionError):
        h.start(make_config(agents=2))
    saved = h.store.load(h.store.list()[0].id)
    assert saved.status == "failed" and "ZeroDivisionError" in (saved.error or "")


def test_no_tasks_are_left_running_after_a_failure(harness: Callable[..., Harness]) -> None:
    def respond(request: CompletionRequest) -> ScriptedReply | Exception:
        if request.tag in ("proposal:architect", "proposal:performance"):
            return ProviderAuthError("scripted: 401", provider="scripted")
        return ScriptedReply(text="slow", delay_s=0.2)

    h = harness(respond)

    async def go() -> int:
        from pathlib import Path

        from dialectic.engine import DebateRequest

        with pytest.raises(TooFewAgentsError):  # two of three agents dropped: fewer than minAgents (2)
            await h.engine().start(DebateRequest(problem="P", config=make_config(agents=3), config_dir=Path(".")))
        return len([t for t in asyncio.all_tasks() if t is not asyncio.current_task()])

    assert asyncio.run(go()) == 0
