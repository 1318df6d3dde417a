"""The problem kind reaches every phase's prompt: reasoning-first for a calculation, the design structure otherwise."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dialectic.agents.templates import phase_template
from dialectic.core import events as ev
from dialectic.core.errors import ProviderAuthError
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script, ScriptedProvider, default_reply
from dialectic.testing.harness import Harness, make_config, scripted_judge

ARITHMETIC = "What is the result of 25+2*3+24?"


def test_phase_templates_per_kind() -> None:
    assert phase_template("propose", "reasoning") == "reasoning/propose.md.j2"
    assert phase_template("judge_synthesize", "reasoning") == "reasoning/judge_synthesize.md.j2"
    assert phase_template("propose", "design") == "propose.md.j2"
    assert phase_template("vote", "reasoning") == "vote.md.j2"  # no reasoning variant: the common one


def test_a_calculation_gets_reasoning_prompts_in_every_phase(harness: Callable[..., Harness]) -> None:
    h = harness()
    state = h.start(make_config(agents=2, rounds=1, format="critique-refine"), problem=ARITHMETIC)
    assert state.config["debate"]["problemKind"] == "reasoning"
    notices = [e.message for e in h.of(ev.Notice)]
    assert any("problem kind: reasoning" in m for m in notices)
    by_tag = {c.tag.split(":")[0]: c for c in h.provider.calls}
    assert {"proposal", "critique", "refinement", "synthesis"} <= set(by_tag)
    for tag in ("proposal", "critique", "refinement"):
        prompt = by_tag[tag].last_user
        assert "inside \\boxed{}" in prompt, tag
        assert "Key Components" not in prompt and "## Question" in prompt
        assert by_tag[tag].messages[0].content.startswith("You solve questions that have one right answer")
    assert "recompute the disputed steps" in by_tag["synthesis"].last_user
    assert by_tag["synthesis"].messages[0].content.startswith("You are the judge of a debate on a question")


def test_a_design_problem_keeps_the_design_prompts(harness: Callable[..., Harness]) -> None:
    h = harness()
    state = h.start(make_config(agents=2, rounds=1), problem="Design a rate limiter for a public API")
    assert state.config["debate"]["problemKind"] == "design"
    proposal = next(c for c in h.provider.calls if c.tag.startswith("proposal"))
    assert "in a design debate" in proposal.last_user and "inside \\boxed{}" not in proposal.last_user


def test_the_configured_kind_wins_over_detection(harness: Callable[..., Harness]) -> None:
    h = harness()
    config = make_config(agents=2, rounds=1, problemKind="reasoning", format="critique-refine")
    h.start(config, problem="Design a cache for sessions")
    proposal = next(c for c in h.provider.calls if c.tag.startswith("proposal"))
    assert "## Question" in proposal.last_user


@pytest.mark.parametrize(
    "debate_format", ["free-form", "round-limited", "convergence-seeking", "simultaneous", "structured"]
)
def test_turn_formats_ask_for_a_worked_answer_on_reasoning(harness: Callable[..., Harness], debate_format: str) -> None:
    h = harness(scripted_judge(should_continue=False))
    h.start(make_config(agents=2, rounds=2, format=debate_format), problem=ARITHMETIC)
    judged = ("assessment", "verdict", "synthesis", "summary", "judge-summary", "vote", "consensus_guard")
    turns = [c for c in h.provider.calls if not c.tag.startswith(judged)]
    assert turns and all("inside \\boxed{}" in c.last_user and "## Question" in c.last_user for c in turns)
    assert all("No preamble" not in c.last_user for c in turns)  # the open-question instructions are not mixed in
    first, *later = turns
    assert "Work it out step by step" in first.last_user
    answered = [c for c in later if "## The discussion so far" in c.last_user]
    assert all("as if nobody had answered" in c.last_user for c in answered)
    if debate_format != "convergence-seeking":  # the scripted agents agree at once: it stops after round 1
        assert answered


def test_a_design_problem_keeps_each_formats_own_turn(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge(should_continue=False))
    h.start(make_config(agents=2, rounds=2, format="structured"), problem="Design a rate limiter for a public API")
    turns = [c for c in h.provider.calls if c.tag.startswith(("opening", "closing"))]
    assert turns and all("inside \\boxed{}" not in c.last_user for c in turns)
    assert "opening statement" in turns[0].last_user


def test_a_resumed_debate_keeps_its_kind(harness: Callable[..., Harness]) -> None:
    def judge_down(request: CompletionRequest) -> Script:
        if request.tag.startswith("synthesis"):
            return ProviderAuthError("judge's key revoked", provider="scripted")
        return default_reply(request)

    h = harness(judge_down)
    with pytest.raises(ProviderAuthError):
        h.start(make_config(agents=2, rounds=1, format="critique-refine"), problem=ARITHMETIC)
    debate_id = h.of(ev.DebateStarted)[0].debate_id
    resumed = h.resume(debate_id, provider=ScriptedProvider())
    assert resumed.status == "completed"
    synthesis = next(c for c in h.provider.calls if c.tag.startswith("synthesis"))
    assert "recompute the disputed steps" in synthesis.last_user
