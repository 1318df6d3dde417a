"""Context building: what each agent sees of the debate."""

from __future__ import annotations

from dialectic.context.history import format_clarifications, history_for, perspective_text, rounds_text
from dialectic.core.changes import (
    ContributionRecorded,
    DebateCreated,
    QuestionsAsked,
    RoundStarted,
    SummaryRecorded,
    fold,
)
from dialectic.core.domain import (
    AgentClarifications,
    ClarificationItem,
    Contribution,
    ContributionMetadata,
    DebateState,
    DebateSummary,
    Participant,
    SummaryMetadata,
)


def contribution(agent: str, kind: str, content: str, target: str | None = None, **meta: object) -> Contribution:
    return Contribution(
        agent_id=agent,
        agent_role=agent,
        type=kind,
        content=content,
        target_agent_id=target,  # type: ignore[arg-type]
        metadata=ContributionMetadata(**meta),
    )  # type: ignore[arg-type]


def two_round_state() -> DebateState:
    base = DebateState(
        id="deb-1",
        problem="P",
        agents=[Participant(id=a, name=a.upper(), role=a, model="m", provider="scripted") for a in ("a", "b")],
    )
    changes = [DebateCreated(state=base), RoundStarted(round_number=1)]
    for c in [
        contribution("a", "proposal", "A1"),
        contribution("b", "proposal", "B1"),
        contribution("a", "critique", "A on B", "b"),
        contribution("b", "critique", "B on A", "a"),
        contribution("a", "refinement", "A1r"),
        contribution("b", "refinement", "B1r", truncated=True),
    ]:
        changes.append(ContributionRecorded(round_number=1, contribution=c))
    changes.append(RoundStarted(round_number=2))
    return fold(changes)


def test_perspective_is_own_work_and_critiques_received() -> None:
    text = perspective_text(two_round_state(), "a", before_round=2)
    assert "A1" in text and "B on A" in text and "A1r" in text
    assert "B1" not in text and "A on B" not in text


def test_truncated_contributions_are_labelled() -> None:
    state = two_round_state()
    text = rounds_text(state.rounds, {"a": "A", "b": "B"})
    assert "Refinement by B (b) [cut off by the token limit]" in text
    assert "Critique by A (a) of B's proposal" in text


def test_history_prefers_the_latest_summary() -> None:
    state = two_round_state()
    assert history_for(state, "a", 2, full_history=False) == ("", False)
    full, is_summary = history_for(state, "a", 2, full_history=True)
    assert "A1r" in full and "B on A" in full and not is_summary
    assert "B1r" not in full  # an agent's history is its own thread: what it said and what it was told
    summary = DebateSummary(
        agent_id="a", agent_role="a", summary="short notes", metadata=SummaryMetadata(before_chars=100, after_chars=11)
    )
    state = fold([DebateCreated(state=state), SummaryRecorded(round_number=2, summary=summary)])
    assert history_for(state, "a", 2, full_history=True) == ("short notes", True)


def test_clarifications_keep_only_answered_items_grouped_by_agent() -> None:
    groups = [
        AgentClarifications(
            agent_id="a",
            agent_name="A",
            role="architect",
            items=[
                ClarificationItem(id="q1", question="Load?", answer="1k rps"),
                ClarificationItem(id="q2", question="Region?", answer="NA"),
                ClarificationItem(id="q3", question="Pending?"),
            ],
        )
    ]
    text = format_clarifications(groups)
    assert "Q (q1): Load?" in text and "A: 1k rps" in text and "A: NA" in text and "q3" not in text


def test_questions_merge_per_agent_across_iterations() -> None:
    base = DebateState(id="d", problem="P")
    first = AgentClarifications(
        agent_id="a", agent_name="A", role="r", items=[ClarificationItem(id="q1", question="x")]
    )
    second = AgentClarifications(
        agent_id="a", agent_name="A", role="r", items=[ClarificationItem(id="q2", question="y")]
    )
    state = fold(
        [
            DebateCreated(state=base),
            QuestionsAsked(iteration=1, groups=[first]),
            QuestionsAsked(iteration=2, groups=[second]),
        ]
    )
    assert [i.id for i in state.clarifications[0].items] == ["q1", "q2"]
    assert state.clarification_iterations == 2
