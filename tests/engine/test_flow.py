"""The debate flow on the scripted model: rounds, carried-over proposals, termination, summarization, synthesis."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from dialectic.core import events as ev
from dialectic.engine.nodes import graph
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import ScriptedReply, default_reply
from dialectic.testing.harness import Harness, make_config, scripted_judge


def test_graph_edges_are_the_seed_state_machine() -> None:
    assert graph() == {
        "initialization": {"clarification"},
        "clarification": {"personas", "suspend"},
        "personas": {"round_manager"},
        "round_manager": {"summarization", "turns", "answer", "council", "correction", "vote", "synthesis"},
        "answer": {"synthesis", "verdict", "end"},
        "council": {"chair", "synthesis"},
        "chair": {"verdict", "end"},
        "correction": {"synthesis", "verdict", "end"},
        "summarization": {"proposal"},
        "proposal": {"critique"},
        "critique": {"refinement"},
        "refinement": {"evaluation"},
        "turns": {"evaluation"},
        "evaluation": {"round_manager", "vote", "synthesis"},
        "vote": {"synthesis"},
        "synthesis": {"verdict", "end"},
        "verdict": {"end"},
    }


def test_fixed_rounds_full_flow(harness: Callable[..., Harness]) -> None:
    h = harness()
    state = h.start(make_config(agents=3, rounds=2, summarization={"enabled": False}))

    assert state.status == "completed" and state.next_node is None
    assert [r.round_number for r in state.rounds] == [1, 2]
    for rnd in state.rounds:
        assert len(rnd.of_type("proposal")) == 3
        assert len(rnd.of_type("critique")) == 6  # every agent critiques every other agent
        assert len(rnd.of_type("refinement")) == 3
        pairs = {(c.agent_id, c.target_agent_id) for c in rnd.of_type("critique")}
        assert all(a != b for a, b in pairs) and len(pairs) == 6
    # Round 2 proposals are round 1's refinements, carried over without a call.
    for proposal in state.round(2).of_type("proposal"):
        refinement = state.round(1).find("refinement", proposal.agent_id)
        assert refinement is not None and proposal.content == refinement.content
        assert proposal.metadata.carried_over
    assert h.tags().count("proposal:architect") == 1
    # 3 proposals + 2×(6 critiques + 3 refinements) + synthesis
    assert len(h.provider.calls) == 3 + 2 * 9 + 1
    assert state.final_solution is not None and state.final_solution.structured
    assert state.final_solution.synthesized_by == "judge"
    assert h.of(ev.DebateCompleted)


def test_saved_state_equals_running_state(harness: Callable[..., Harness]) -> None:
    h = harness()
    state = h.start(make_config(agents=2, rounds=2))
    assert h.store.load(state.id).to_json_dict() == state.to_json_dict()


def test_export_has_the_seed_shape(harness: Callable[..., Harness]) -> None:
    state = harness().start(make_config(agents=2, rounds=1))
    data = json.loads(json.dumps(state.to_json_dict()))
    assert {
        "id",
        "problem",
        "status",
        "currentRound",
        "rounds",
        "finalSolution",
        "promptSources",
        "createdAt",
        "updatedAt",
    } <= set(data)
    contribution = data["rounds"][0]["contributions"][0]
    assert {"agentId", "agentRole", "type", "content", "metadata"} <= set(contribution)
    assert {"tokensUsed", "latencyMs", "model"} <= set(contribution["metadata"])
    critique = next(c for c in data["rounds"][0]["contributions"] if c["type"] == "critique")
    assert critique["targetAgentId"]
    assert data["promptSources"]["agents"][0]["systemPrompt"]["kind"] == "built-in"


def test_the_judge_stops_the_debate_early_when_it_says_so(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge(should_continue=False))
    state = h.start(make_config(rounds=3, terminationCondition={"type": "judge"}))
    assert state.status == "completed"
    assert len(state.rounds) == 1
    assessment = state.round(1).assessment
    assert assessment is not None and not assessment.should_continue and assessment.structured
    assert state.stopped_early is not None and state.stopped_early.round_number == 1
    assert "the judge says to stop" in state.stopped_early.reason
    assert h.of(ev.AssessmentAdded)[0].stop


def test_quality_runs_to_the_cap_when_the_judge_rates_rounds_low(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge(score=4))
    state = h.start(make_config(rounds=3, terminationCondition={"type": "quality", "threshold": 80}))
    assert len(state.rounds) == 3 and state.stopped_early is None
    # Every round is assessed; only rounds 1 and 2 could have stopped the debate.
    assert h.tags().count("assessment:generalist") == 3
    assert [r.assessment.quality for r in state.rounds if r.assessment] == [4.0, 4.0, 4.0]


def test_quality_stops_when_the_rubric_reaches_the_threshold(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge(score=9))
    state = h.start(make_config(rounds=3, terminationCondition={"type": "quality", "threshold": 80}))
    assert len(state.rounds) == 1 and state.stopped_early is not None


def test_convergence_is_measured_without_asking_the_judge(harness: Callable[..., Harness]) -> None:
    h = harness()
    state = h.start(make_config(rounds=3, terminationCondition={"type": "convergence", "threshold": 5}))
    assessment = state.round(1).assessment
    assert assessment is not None and assessment.similarity is not None and assessment.measured_by
    assert not assessment.structured  # the detectors' figures only
    assert not any(t.startswith("assessment") for t in h.tags())
    assert len(state.rounds) == 1  # scripted replies look alike: a 5% bar is met at once


def test_fixed_termination_never_asks_the_judge(harness: Callable[..., Harness]) -> None:
    h = harness()
    state = h.start(make_config(rounds=2))
    assert not any(t.startswith("assessment") for t in h.tags())
    assert all(r.assessment is None for r in state.rounds)


def test_summarization_over_threshold_is_stored_and_used(harness: Callable[..., Harness]) -> None:
    h = harness()
    summarization = {"enabled": True, "threshold": 10, "maxLength": 60}
    state = h.start(make_config(rounds=2, summarization=summarization))
    assert state.round(1).summaries == {}  # nothing to summarize before the first round
    summaries = state.round(2).summaries
    assert set(summaries) == {"agent-architect", "agent-performance"}
    summary = summaries["agent-architect"]
    assert len(summary.summary) <= 60 and summary.metadata.before_chars > summary.metadata.after_chars
    # Round 2 prompts of that agent carry its summary instead of the full history.
    critique_prompts = [c.last_user for c in h.provider.calls if c.tag == "critique:architect"]
    assert summary.summary.strip() in critique_prompts[-1]
    assert h.of(ev.SummaryAdded)


def test_summarization_off_keeps_full_history(harness: Callable[..., Harness]) -> None:
    h = harness()
    state = h.start(make_config(rounds=2, summarization={"enabled": False, "threshold": 10}))
    assert all(r.summaries == {} for r in state.rounds)
    assert not any(t.startswith("summary") for t in h.tags())


def test_failing_summarization_warns_and_goes_on(harness: Callable[..., Harness]) -> None:
    from dialectic.core.errors import BadRequest

    def respond(request: CompletionRequest) -> ScriptedReply | Exception:
        if request.tag.startswith("summary"):
            return BadRequest("scripted: summary refused", provider="scripted")
        return default_reply(request)

    h = harness(respond)
    state = h.start(make_config(rounds=2, summarization={"enabled": True, "threshold": 10}))
    assert state.status == "completed"
    assert state.round(2).summaries == {}
    assert any("could not summarize" in w.message for w in h.of(ev.Warning))


def test_judge_summarizes_a_long_final_round(harness: Callable[..., Harness]) -> None:
    h = harness()
    state = h.start(make_config(rounds=1, summarization={"enabled": True, "threshold": 50, "maxLength": 80}))
    assert state.judge_summary is not None
    synthesis_prompt = next(c.last_user for c in h.provider.calls if c.tag.startswith("synthesis"))
    assert state.judge_summary.summary.strip() in synthesis_prompt


def test_unparseable_synthesis_falls_back_to_text(harness: Callable[..., Harness]) -> None:
    def respond(request: CompletionRequest) -> ScriptedReply:
        if request.tag.startswith("synthesis"):
            return ScriptedReply(text="Use a token bucket per API key.")
        return default_reply(request)

    h = harness(respond)
    state = h.start(make_config())
    solution = state.final_solution
    assert solution is not None and not solution.structured
    assert solution.description == "Use a token bucket per API key."
    assert h.tags().count("synthesis:generalist") == 2  # the first try and one repair
    assert any("did not match" in w.message for w in h.of(ev.Warning))


def _synthesis_describing(description: str) -> Callable[[CompletionRequest], ScriptedReply]:
    def respond(request: CompletionRequest) -> ScriptedReply:
        if request.tag.startswith("synthesis"):
            value = {"description": description, "confidence": 60}
            return ScriptedReply(text=json.dumps(value), structured=value)
        return default_reply(request)

    return respond


PROBLEM = "Design a rate limiter that allows 100 requests per minute per API key and fails open when its store is down."


def test_a_solution_that_restates_the_problem_is_replaced_by_a_position(harness: Callable[..., Harness]) -> None:
    h = harness(_synthesis_describing("A rate limiter allowing 100 requests per minute per API key; it fails open."))
    state = h.start(make_config(), problem=PROBLEM)
    assert state.status == "completed" and state.final_solution is not None  # a warning, not a failure
    warnings = [w.message for w in h.of(ev.Warning) if "restated the problem" in w.message]
    assert len(warnings) == 1 and "(only 8% of its content words" in warnings[0]  # "allowing" is new
    solution = state.final_solution
    assert "allowing 100 requests" not in solution.description  # never recorded as the solution
    assert solution.description.startswith("_The judge's synthesis restated the problem")
    assert solution.synthesized_by in {a.id for a in state.agents} and solution.confidence_withheld


def test_a_solution_that_echoes_the_judges_instructions_is_replaced(harness: Callable[..., Harness]) -> None:
    echo = "Write the final solution to the problem below from what the agents proposed in the debate above."
    h = harness(_synthesis_describing(echo))  # what a 0.5B judge wrote, given a long pasted context
    state = h.start(make_config(), problem=PROBLEM)
    assert [w for w in h.of(ev.Warning) if "restated the problem" in w.message]
    assert state.final_solution is not None and echo not in state.final_solution.description


def test_a_one_line_answer_to_a_calculation_is_not_a_restatement(harness: Callable[..., Harness]) -> None:
    h = harness(_synthesis_describing("The final answer is 343."))
    state = h.start(make_config(), problem="What is the result of 27+12*24+28?")
    assert state.config["debate"]["problemKind"] == "reasoning"
    assert not [w for w in h.of(ev.Warning) if "restates" in w.message]


def test_a_solution_that_answers_the_problem_is_not_warned_about(harness: Callable[..., Harness]) -> None:
    h = harness(_synthesis_describing("1. **Token bucket in Redis**, updated by a Lua script.\n2. **Local fallback**."))
    h.start(make_config(), problem=PROBLEM)
    assert not [w for w in h.of(ev.Warning) if "restates the problem" in w.message]


def test_critique_starts_as_soon_as_its_target_proposal_exists(harness: Callable[..., Harness]) -> None:
    """Data-driven scheduling: the slow agent's proposal does not hold back critiques of the fast one's."""
    order: list[str] = []

    def respond(request: CompletionRequest) -> ScriptedReply:
        order.append(request.tag)
        slow = request.tag == "proposal:performance"
        reply = default_reply(request)
        return ScriptedReply(text=reply.text, structured=reply.structured, delay_s=0.3 if slow else 0.01)

    h = harness(respond)
    h.start(make_config(agents=2))
    # performance critiques architect's (fast) proposal while its own proposal is still being written
    assert order.index("critique:performance") < order.index("critique:architect")
    finished = [e for e in h.events if isinstance(e, ev.ContributionAdded)]
    first_critique = next(i for i, e in enumerate(finished) if e.contribution.type == "critique")
    slow_proposal = next(
        i
        for i, e in enumerate(finished)
        if e.contribution.type == "proposal" and e.contribution.agent_id == "agent-performance"
    )
    assert first_critique < slow_proposal


def test_concurrency_is_bounded_per_provider(harness: Callable[..., Harness]) -> None:
    in_flight = 0
    peak = 0

    class Counting:
        def __init__(self, inner: object) -> None:
            self.inner = inner

    h = harness(latency_s=0.02)
    original = h.provider.complete

    async def counted(request: CompletionRequest):  # type: ignore[no-untyped-def]
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            return await original(request)
        finally:
            in_flight -= 1

    h.provider.complete = counted  # type: ignore[method-assign]
    h.start(make_config(agents=3, maxConcurrency=2))
    assert peak == 2


def test_events_arrive_in_a_sensible_order(harness: Callable[..., Harness]) -> None:
    h = harness()
    state = h.start(make_config(rounds=1))
    kinds = [type(e).__name__ for e in h.events]
    assert kinds[0] == "DebateStarted" and kinds[-1] == "DebateCompleted"
    assert kinds.index("RoundBegan") < kinds.index("ContributionAdded") < kinds.index("SynthesisStarted")
    assert all(e.debate_id == state.id for e in h.events)


def test_concurrent_debates_share_nothing(harness: Callable[..., Harness]) -> None:
    from pathlib import Path

    from dialectic.engine import DebateRequest

    h = harness()
    engine = h.engine()

    async def both() -> list[str]:
        a, b = await asyncio.gather(
            engine.start(DebateRequest(problem="A", config=make_config(), config_dir=Path("."))),
            engine.start(DebateRequest(problem="B", config=make_config(), config_dir=Path("."))),
        )
        return [a.id, b.id]

    ids = asyncio.run(both())
    assert len(set(ids)) == 2
    assert {h.store.load(i).problem for i in ids} == {"A", "B"}


def test_a_later_summary_updates_the_last_one_with_the_rounds_since(harness: Callable[..., Harness]) -> None:
    h = harness()
    summarization = {"enabled": True, "threshold": 10, "maxLength": 60}
    state = h.start(make_config(rounds=3, summarization=summarization))
    first = state.round(2).summaries["agent-architect"].summary
    prompts = [c.last_user for c in h.provider.calls if c.tag == "summary:architect"]
    assert len(prompts) == 2
    assert "## Your debate history" in prompts[0] and "summary of the earlier rounds" not in prompts[0]
    # Round 3's summary reads round 2's summary and round 2 only, not round 1 again.
    assert first.strip() in prompts[1] and "## The rounds since that summary" in prompts[1]
    round_one = [c.content for c in state.round(1).contributions if c.agent_id == "agent-architect"]
    assert round_one and all(text.strip() not in prompts[1] for text in round_one)
