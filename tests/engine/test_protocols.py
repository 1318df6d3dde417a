"""Every deliberation protocol end to end on the scripted model: its rounds, what it saves and publishes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from dialectic.core import events as ev
from dialectic.testing.harness import Harness, make_config, scripted_judge


def turns(state: Any, number: int) -> list[Any]:
    return [c for c in state.round(number).contributions if c.ok]


def test_free_form_takes_turns_in_order_and_the_judge_decides_when_to_stop(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge(should_continue=True))
    state = h.start(make_config(agents=3, rounds=2, format="free-form"))
    assert state.status == "completed"
    assert [[c.type for c in turns(state, n)] for n in (1, 2)] == [["response"] * 3, ["response"] * 3]
    # sequential: the third agent's first turn saw the first two agents' turns of the same round
    third = [c for c in h.provider.calls if c.tag == "response:kiss"][0]
    assert "Turn by Architect" in third.last_user and "Turn by Performance" in third.last_user
    assert [r.assessment is not None for r in state.rounds] == [True, True]
    assert state.verdict is not None and state.verdict.winner_id is not None
    assert h.of(ev.VerdictAdded) and len(h.of(ev.AssessmentAdded)) == 2


def test_free_form_stops_when_the_judge_says_so(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge(should_continue=False))
    # The scripted turns look alike: a hollow consensus the guard would challenge (see test_consensus_guard).
    state = h.start(make_config(agents=2, rounds=4, format="free-form", consensusGuard="off"))
    assert len(state.rounds) == 1 and state.stopped_early is not None


def test_simultaneous_turns_see_only_earlier_rounds(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge())
    state = h.start(make_config(agents=3, rounds=2, format="simultaneous"))
    assert [len(turns(state, n)) for n in (1, 2)] == [3, 3]
    first_round = [c for c in h.provider.calls if c.tag.startswith("response")][:3]
    assert all("The discussion so far" not in call.last_user for call in first_round)
    second = [c for c in h.provider.calls if c.tag == "response:kiss"][1]
    assert "Round 1 — Turn by Architect" in second.last_user and "Round 2 —" not in second.last_user
    assert not any(c.tag.startswith("assessment") for c in h.provider.calls)  # fixed: the judge is not asked


def test_round_limited_tells_each_round_what_it_is(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge())
    h.start(make_config(agents=2, rounds=3, format="round-limited"))
    prompts = [c.last_user for c in h.provider.calls if c.tag.startswith("response")]
    assert "Round 1 of 3: make it count" in prompts[0]
    assert "Round 3 of 3: the last one" in prompts[-1]


def test_structured_debates_open_rebut_and_close_and_only_stop_after_closing(
    harness: Callable[..., Harness],
) -> None:
    h = harness(scripted_judge(should_continue=False))
    state = h.start(make_config(agents=2, rounds=4, format="structured", terminationCondition={"type": "judge"}))
    assert [r.phase for r in state.rounds] == ["opening", "rebuttal", "rebuttal", "closing"]
    assert [turns(state, n)[0].type for n in (1, 2, 3, 4)] == ["opening", "rebuttal", "rebuttal", "closing"]
    assert state.stopped_early is None  # the judge wanted to stop after round 1, but only the closing may end it
    assert all(r.assessment is not None for r in state.rounds)


def test_structured_needs_an_opening_and_a_closing(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge())
    state = h.start(make_config(agents=2, rounds=2, format="structured"))
    assert [r.phase for r in state.rounds] == ["opening", "closing"]  # one round is refused (test_format_rounds)


def test_convergence_seeking_stops_once_positions_converge(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge())
    state = h.start(
        make_config(
            agents=3,
            rounds=4,
            format="convergence-seeking",
            terminationCondition={"type": "convergence", "threshold": 5},
            consensusGuard="off",  # the scripted turns look alike: the guard would challenge them once
        )
    )
    assert len(state.rounds) == 1 and state.stopped_early is not None
    assert "converged" in state.stopped_early.reason
    prompt = next(c.last_user for c in h.provider.calls if c.tag.startswith("response"))
    assert "seeking common ground" in prompt


def test_vote_counts_anonymous_ballots_and_the_judge_builds_on_the_winner(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge())
    state = h.start(make_config(agents=3, rounds=1, format="vote", vote={"rule": "majority"}))
    outcome = state.vote
    assert outcome is not None and outcome.rule == "majority" and len(outcome.votes) == 3
    assert all(v.voter_id != v.choice_id for v in outcome.votes)  # nobody sees its own proposal
    ballots = [c.last_user for c in h.provider.calls if c.tag.startswith("vote")]
    headings = [line for b in ballots for line in b.splitlines() if line.startswith("### ")]
    assert headings and all(line.startswith("### Proposal ") for line in headings)  # labels, not names
    synthesis = next(c.last_user for c in h.provider.calls if c.tag.startswith("synthesis"))
    assert "## The participants' vote" in synthesis
    assert h.of(ev.VoteCompleted) and state.verdict is not None


def test_a_majority_vote_between_two_proposals_that_leaves_out_its_own_says_it_can_only_tie(
    harness: Callable[..., Harness],
) -> None:
    h = harness(scripted_judge())
    state = h.start(make_config(agents=2, rounds=1, format="vote", vote={"rule": "majority"}))
    assert state.vote is not None and state.vote.tie and state.vote.winner_id is None
    assert [w for w in h.of(ev.Warning) if "a majority vote can only tie" in w.message]
    three = harness(scripted_judge())
    three.start(make_config(agents=3, rounds=1, format="vote", vote={"rule": "majority"}))
    assert not [w for w in three.of(ev.Warning) if "can only tie" in w.message]


@pytest.mark.parametrize("rule", ["supermajority", "weighted", "confidence"])
def test_every_vote_rule_is_selectable(harness: Callable[..., Harness], rule: str) -> None:
    h = harness(scripted_judge())
    state = h.start(make_config(agents=3, rounds=1, format="vote", vote={"rule": rule}))
    assert state.vote is not None and state.vote.rule == rule


def test_auto_personas_are_assigned_once_stored_and_used_in_prompts(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge())
    state = h.start(make_config(agents=2, rounds=1, personas="auto", personaStrategy="binary"))
    assert state.personas_assigned
    assert [a.position for a in state.agents] == ["Position of Agent 1.", "Position of Agent 2."]
    proposal = next(c for c in h.provider.calls if c.tag == "proposal:architect")
    assert "Your position in this debate: Position of Agent 1." in proposal.system
    assert h.of(ev.PersonasGiven)
    assert "binary" in next(c.last_user for c in h.provider.calls if c.tag.startswith("personas"))


def test_configured_positions_and_personas_reach_the_system_prompt(harness: Callable[..., Harness]) -> None:
    config = make_config(agents=2, rounds=1)
    config.agents[0] = config.agents[0].model_copy(update={"position": "for caching", "persona": "A veteran."})
    h = harness()
    state = h.start(config)
    assert state.agents[0].position == "for caching"
    proposal = next(c for c in h.provider.calls if c.tag == "proposal:architect")
    assert (
        "Your position in this debate: for caching" in proposal.system and "Your persona: A veteran." in proposal.system
    )


def test_the_judge_sees_neutral_labels_and_says_when_it_shares_a_model(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge())
    state = h.start(make_config(agents=2, rounds=1, format="free-form"))
    assessment_prompt = next(c.last_user for c in h.provider.calls if c.tag.startswith("assessment"))
    assert "Participant A" in assessment_prompt and "Architect" not in assessment_prompt
    assert state.verdict is not None
    assert sorted(state.verdict.judge_shares_model_with) == ["agent-architect", "agent-performance"]


def test_critique_refine_gives_no_verdict_unless_asked(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge())
    assert h.start(make_config(agents=2, rounds=1)).verdict is None
    assert h.start(make_config(agents=2, rounds=1, verdict="on")).verdict is not None


def test_the_report_shows_format_phases_assessments_votes_and_verdict(harness: Callable[..., Harness]) -> None:
    from dialectic.reporting.report import render_report

    h = harness(scripted_judge())
    state = h.start(make_config(agents=3, rounds=1, format="vote", assessment="on", personas="auto"))
    text = render_report(state)
    for needle in (
        "- **Format:** vote",
        "### Positions and personas",
        "#### Judge assessment",
        "| Participant | Logical consistency |",
        "## Vote",
        "**Rule:** majority",
        "## Verdict",
        "**Debate quality:** 70/100",
        "the same model as",
    ):
        assert needle in text, needle
    structured = h.start(make_config(agents=2, rounds=3, format="structured"))
    text = render_report(structured)
    assert "### Round 1 — opening" in text and "#### Opening statements" in text
    assert "### Round 3 — closing" in text and "#### Closing statements" in text


def test_auto_personas_are_not_asked_again_on_resume(harness: Callable[..., Harness]) -> None:
    from dialectic.core.errors import TooFewAgentsError
    from dialectic.llm.scripted import ScriptedProvider

    asking = scripted_judge()

    def failing_refinements(request: Any) -> Any:
        if request.tag.startswith("refinement"):
            from dialectic.core.errors import ProviderUnavailable

            return ProviderUnavailable("scripted: down", provider="scripted", status_code=503)
        return asking(request)

    h = harness(failing_refinements)
    with pytest.raises(TooFewAgentsError) as raised:
        h.start(make_config(agents=2, rounds=1, personas="auto"))
    debate_id = raised.value.debate_id or ""
    assert h.store.load(debate_id).personas_assigned
    recovered = ScriptedProvider(asking)
    done = h.resume(debate_id, provider=recovered)
    assert done.status == "completed"
    assert not any(c.tag.startswith("personas") for c in recovered.calls)
    proposal_system = next(c.system for c in recovered.calls if c.tag.startswith("refinement"))
    assert "Your position in this debate: Position of Agent" in proposal_system


def sent_schema(h: Harness, tag: str) -> dict[str, Any]:
    call = next(c for c in h.provider.calls if c.tag.startswith(tag))
    assert call.json_schema is not None
    return call.json_schema.schema


def field_of_items(schema: dict[str, Any], array: str, name: str) -> dict[str, Any]:
    definition = schema["properties"][array]["items"]["$ref"].rsplit("/", 1)[-1]
    return schema["$defs"][definition]["properties"][name]


def test_the_judge_and_the_voters_are_asked_for_every_field_with_the_labels_as_choices(
    harness: Callable[..., Harness],
) -> None:
    """A model held to the schema (the embedded one) left the optional fields out: no winner, no scores."""
    h = harness(scripted_judge())
    h.start(make_config(agents=3, rounds=1, format="vote", personas="auto"))
    participants = ["Participant A", "Participant B", "Participant C"]

    verdict = sent_schema(h, "verdict")
    assert verdict["required"] == list(verdict["properties"])
    assert verdict["properties"]["winner"]["enum"] == [*participants, "none"]
    assert field_of_items(verdict, "keyPoints", "participant")["enum"] == participants
    assert verdict["properties"]["keyPoints"]["minItems"] == 3

    ballots = [c for c in h.provider.calls if c.tag.startswith("vote")]
    for ballot in ballots:
        assert ballot.json_schema is not None
        shown = [line[4:].strip() for line in ballot.last_user.splitlines() if line.startswith("### Proposal ")]
        assert ballot.json_schema.schema["properties"]["choice"]["enum"] == shown and len(shown) == 2

    personas = sent_schema(h, "personas")
    assert personas["properties"]["assignments"]["minItems"] == 3
    assert len(field_of_items(personas, "assignments", "participant")["enum"]) == 3

    synthesis = sent_schema(h, "synthesis")  # a synthesis's lists are extras: its schema is sent as it is
    assert "enum" not in str(synthesis) and synthesis["required"] != list(synthesis["properties"])

    free_form = harness(scripted_judge())
    free_form.start(make_config(agents=2, rounds=1, format="free-form"))
    assessment = sent_schema(free_form, "assessment")
    assert assessment["required"] == list(assessment["properties"])
    assert field_of_items(assessment, "participants", "participant")["enum"] == participants[:2]
    assert assessment["properties"]["participants"]["maxItems"] == 2
