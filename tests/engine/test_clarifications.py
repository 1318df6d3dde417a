"""Clarifying questions: asked, suspended for, answered, followed up, capped — and never lost."""

from __future__ import annotations

import json
from collections.abc import Callable

from dialectic.core import events as ev
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import ScriptedReply, default_reply
from dialectic.testing.harness import Harness, make_config


def asking(per_round: list[int]) -> Callable[[CompletionRequest], ScriptedReply]:
    """Each agent asks ``per_round[i]`` questions in clarification iteration ``i`` (then none)."""
    asked_by: dict[str, int] = {}

    def respond(request: CompletionRequest) -> ScriptedReply:
        if not request.tag.startswith("clarify"):
            return default_reply(request)
        iteration = asked_by.get(request.tag, 0)
        asked_by[request.tag] = iteration + 1
        count = per_round[iteration] if iteration < len(per_round) else 0
        value = {"questions": [{"text": f"{request.tag} question {iteration + 1}.{n + 1}?"} for n in range(count)]}
        return ScriptedReply(text=json.dumps(value), structured=value)

    return respond


def test_questions_suspend_the_debate_with_unique_ids(harness: Callable[..., Harness]) -> None:
    h = harness(asking([2]))
    state = h.start(make_config(agents=2), clarify=True)
    assert state.status == "suspended" and state.next_node == "clarification"
    ids = [item.id for item in state.clarification_items()]
    assert ids == ["q1", "q2", "q3", "q4"]
    assert [g.agent_id for g in state.clarifications] == ["agent-architect", "agent-performance"]
    pending = h.of(ev.QuestionsPending)[0]
    assert sum(len(g.items) for g in pending.groups) == 4
    assert not any(t.startswith("proposal") for t in h.tags())  # nothing debated yet


def test_answers_then_follow_ups_then_debate(harness: Callable[..., Harness]) -> None:
    h = harness(asking([1, 1]))
    first = h.start(make_config(agents=2), clarify=True)
    assert [i.id for i in first.pending_questions()] == ["q1", "q2"]

    second = h.resume(first.id, {"q1": "1000 requests/s", "q2": ""})
    assert second.status == "suspended"
    assert [i.id for i in second.pending_questions()] == ["q3", "q4"]  # follow-ups; ids stay unique
    answered = {i.id: i.answer for i in second.clarification_items() if i.answered}
    assert answered == {"q1": "1000 requests/s", "q2": "NA"}
    follow_up_prompt = [c.last_user for c in h.provider.calls if c.tag == "clarify:architect"][-1]
    assert "1000 requests/s" in follow_up_prompt

    done = h.resume(first.id, {"q3": "yes", "q4": "no"})
    assert done.status == "completed"
    assert done.clarification_iterations == 2
    proposal_prompt = next(c.last_user for c in h.provider.calls if c.tag == "proposal:architect")
    assert "1000 requests/s" in proposal_prompt and "q4" in proposal_prompt


def test_follow_ups_stop_at_the_iteration_cap(harness: Callable[..., Harness]) -> None:
    h = harness(asking([1, 1, 1, 1]))
    state = h.start(make_config(agents=1, clarificationsMaxIterations=2), clarify=True)
    state = h.resume(state.id, {"q1": "a"})
    assert state.status == "suspended"
    state = h.resume(state.id, {"q2": "b"})
    assert state.status == "completed"
    assert h.tags().count("clarify:architect") == 2


def test_questions_beyond_the_per_agent_limit_are_cut(harness: Callable[..., Harness]) -> None:
    h = harness(asking([4]))
    state = h.start(make_config(agents=1, clarificationsMaxPerAgent=2), clarify=True)
    assert len(state.clarification_items()) == 2
    assert any("keeping the first 2" in w.message for w in h.of(ev.Warning))


def test_no_questions_means_no_suspension(harness: Callable[..., Harness]) -> None:
    h = harness(asking([0]))
    state = h.start(make_config(agents=2), clarify=True)
    assert state.status == "completed" and state.clarifications == []


def test_config_flag_enables_clarifications(harness: Callable[..., Harness]) -> None:
    h = harness(asking([1]))
    state = h.start(make_config(agents=1, interactiveClarifications=True))
    assert state.status == "suspended"


def test_resume_without_answers_stays_suspended_and_asks_nothing_new(harness: Callable[..., Harness]) -> None:
    h = harness(asking([1, 1]))
    state = h.start(make_config(agents=1), clarify=True)
    calls = len(h.provider.calls)
    again = h.resume(state.id)
    assert again.status == "suspended" and len(h.provider.calls) == calls
    assert [i.id for i in again.pending_questions()] == ["q1"]


def test_unknown_answer_ids_are_ignored_with_a_warning(harness: Callable[..., Harness]) -> None:
    h = harness(asking([1]))
    state = h.start(make_config(agents=1), clarify=True)
    state = h.resume(state.id, {"q1": "fine", "q99": "??"})
    assert state.status == "completed"
    assert any("q99" in w.message for w in h.of(ev.Warning))


def test_malformed_questions_are_a_warning_not_a_failure(harness: Callable[..., Harness]) -> None:
    def respond(request: CompletionRequest) -> ScriptedReply:
        if request.tag.startswith("clarify"):
            return ScriptedReply(text="I have no JSON for you")
        return default_reply(request)

    h = harness(respond)
    state = h.start(make_config(agents=1), clarify=True)
    assert state.status == "completed"
    assert any("did not parse" in w.message for w in h.of(ev.Warning))
