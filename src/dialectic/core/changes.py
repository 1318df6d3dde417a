"""Every change a debate goes through, as typed records, and the pure function that applies one.

The store appends these records and never rewrites a debate; loading a debate folds its
records in order with :func:`apply_change`. The engine applies the same records to its
in-memory state, so what is saved and what is running cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Annotated, Literal, assert_never

from pydantic import Field, TypeAdapter

from dialectic.core.domain import (
    AgentClarifications,
    AnswerTally,
    ConsensusGuard,
    Contribution,
    CorrectionOutcome,
    CouncilOutcome,
    DebateRound,
    DebateState,
    DebateStatus,
    DebateSummary,
    DiscardedWork,
    DroppedParticipant,
    EarlyStop,
    HumanTurn,
    LedgerEntry,
    Model,
    PlayedBy,
    RecalledMemory,
    Receipt,
    RoundAssessment,
    RoundEvaluation,
    Solution,
    TeamChoice,
    Verdict,
    VoteOutcome,
    WindowUse,
    utc_now,
)


class ChangeBase(Model):
    at: datetime = Field(default_factory=utc_now)


class DebateCreated(ChangeBase):
    kind: Literal["debate_created"] = "debate_created"
    state: DebateState


class StatusChanged(ChangeBase):
    kind: Literal["status_changed"] = "status_changed"
    status: DebateStatus
    error: str | None = None
    reason: str | None = None
    """Why a failed debate stopped, when it is a reason a user acts on (``budget``)."""


class RoundStarted(ChangeBase):
    kind: Literal["round_started"] = "round_started"
    round_number: int
    phase: str | None = None
    """The protocol's name for the round (``opening``, ``rebuttal``, ``closing``…), when it has one."""


class ContributionRecorded(ChangeBase):
    kind: Literal["contribution_recorded"] = "contribution_recorded"
    round_number: int
    contribution: Contribution


class SummaryRecorded(ChangeBase):
    kind: Literal["summary_recorded"] = "summary_recorded"
    round_number: int
    summary: DebateSummary


class JudgeSummaryRecorded(ChangeBase):
    kind: Literal["judge_summary_recorded"] = "judge_summary_recorded"
    summary: DebateSummary


class QuestionsAsked(ChangeBase):
    """New clarifying questions (unanswered), merged into the agent groups; one iteration."""

    kind: Literal["questions_asked"] = "questions_asked"
    iteration: int
    groups: list[AgentClarifications]


class AnswersRecorded(ChangeBase):
    kind: Literal["answers_recorded"] = "answers_recorded"
    answers: dict[str, str]


class EvaluationRecorded(ChangeBase):
    kind: Literal["evaluation_recorded"] = "evaluation_recorded"
    round_number: int
    evaluation: RoundEvaluation


class SolutionRecorded(ChangeBase):
    kind: Literal["solution_recorded"] = "solution_recorded"
    solution: Solution


class ParticipantDropped(ChangeBase):
    """An agent whose calls kept failing leaves the rest of the debate."""

    kind: Literal["participant_dropped"] = "participant_dropped"
    dropped: DroppedParticipant


class ParticipantsReinstated(ChangeBase):
    """Resuming a failed debate gives the dropped agents another chance."""

    kind: Literal["participants_reinstated"] = "participants_reinstated"
    agent_ids: list[str]


class WorkDiscarded(ChangeBase):
    """What work started ahead for a round that did not happen cost (nothing of it was saved)."""

    kind: Literal["work_discarded"] = "work_discarded"
    discarded: DiscardedWork


class Stance(Model):
    agent_id: str
    position: str
    persona: str


class PersonasAssigned(ChangeBase):
    """The judge gave the participants positions and personas before round 1."""

    kind: Literal["personas_assigned"] = "personas_assigned"
    stances: list[Stance]


class AssessmentRecorded(ChangeBase):
    kind: Literal["assessment_recorded"] = "assessment_recorded"
    assessment: RoundAssessment


class ConsensusChallenged(ChangeBase):
    """The consensus guard's turn after a round (``debate.consensusGuard``): saved once, so a resumed debate
    never challenges the same round twice."""

    kind: Literal["consensus_challenged"] = "consensus_challenged"
    guard: ConsensusGuard


class DebateStoppedEarly(ChangeBase):
    kind: Literal["debate_stopped_early"] = "debate_stopped_early"
    stop: EarlyStop


class VoteRecorded(ChangeBase):
    kind: Literal["vote_recorded"] = "vote_recorded"
    outcome: VoteOutcome


class AnswerTallied(ChangeBase):
    kind: Literal["answer_tallied"] = "answer_tallied"
    tally: AnswerTally


class CouncilCounted(ChangeBase):
    """The council's rankings read and counted, and the answers its chair is given (``format: council``)."""

    kind: Literal["council_counted"] = "council_counted"
    outcome: CouncilOutcome


class CorrectionDecided(ChangeBase):
    """The correction-biased critique's checks, points and winner (``format: correction``)."""

    kind: Literal["correction_decided"] = "correction_decided"
    outcome: CorrectionOutcome


class VerdictRecorded(ChangeBase):
    kind: Literal["verdict_recorded"] = "verdict_recorded"
    verdict: Verdict


class CallRecorded(ChangeBase):
    """One call the debate made and what it cost (a line of the ledger), saved with the result it paid for."""

    kind: Literal["call_recorded"] = "call_recorded"
    entry: LedgerEntry


class BudgetChanged(ChangeBase):
    """The debate's budget was set anew (``dialectic resume ID --budget-usd 2``); ``None`` leaves a limit as it was."""

    kind: Literal["budget_changed"] = "budget_changed"
    max_cost_usd: float | None = None
    max_tokens: int | None = None


class WindowNoted(ChangeBase):
    """What a participant's prompts took of its context window so far (replaces its earlier note)."""

    kind: Literal["window_noted"] = "window_noted"
    use: WindowUse


class WindowsSized(ChangeBase):
    """Participants' context windows set anew for a resumed debate (``dialectic resume ID --context-window``):
    participant id → tokens, written into the saved configuration as their ``contextWindow``."""

    kind: Literal["windows_sized"] = "windows_sized"
    windows: dict[str, int]


class TurnAwaited(ChangeBase):
    """A human seat's turn is asked while no one can write it: the debate suspends until its text comes."""

    kind: Literal["turn_awaited"] = "turn_awaited"
    turn: HumanTurn


class TurnAnswered(ChangeBase):
    """The text of an awaited human turn: the person's, or the fallback model's once the deadline passed."""

    kind: Literal["turn_answered"] = "turn_answered"
    key: str
    text: str
    played_by: PlayedBy = "person"


class CursorMoved(ChangeBase):
    """The runner's cursor: the node to run next (``None`` when the debate has ended)."""

    kind: Literal["cursor_moved"] = "cursor_moved"
    next_node: str | None = None


class ReceiptRecorded(ChangeBase):
    """The debate's receipt, saved once it completed: a hash chain over the changes before it
    (:mod:`dialectic.core.receipts`); receipts themselves are never part of a chain."""

    kind: Literal["receipt_recorded"] = "receipt_recorded"
    receipt: Receipt


class MemoriesRecalled(ChangeBase):
    """The past debates given to round 1 (``debate.memory: on``), chosen once: a resumed debate keeps them."""

    kind: Literal["memories_recalled"] = "memories_recalled"
    memories: list[RecalledMemory]


class MemoryForgotten(ChangeBase):
    """``dialectic memory forget``: the debate is never recalled as memory again (the debate itself is kept)."""

    kind: Literal["memory_forgotten"] = "memory_forgotten"


class TeamSelected(ChangeBase):
    """The agents picked from a pool (``debate.team``) and the reasons, saved right after the debate was created."""

    kind: Literal["team_selected"] = "team_selected"
    choice: TeamChoice


Change = Annotated[
    DebateCreated
    | StatusChanged
    | RoundStarted
    | ContributionRecorded
    | SummaryRecorded
    | JudgeSummaryRecorded
    | QuestionsAsked
    | AnswersRecorded
    | EvaluationRecorded
    | SolutionRecorded
    | ParticipantDropped
    | ParticipantsReinstated
    | WorkDiscarded
    | PersonasAssigned
    | AssessmentRecorded
    | ConsensusChallenged
    | DebateStoppedEarly
    | VoteRecorded
    | AnswerTallied
    | CouncilCounted
    | CorrectionDecided
    | VerdictRecorded
    | CallRecorded
    | BudgetChanged
    | WindowNoted
    | WindowsSized
    | TurnAwaited
    | TurnAnswered
    | CursorMoved
    | ReceiptRecorded
    | MemoriesRecalled
    | MemoryForgotten
    | TeamSelected,
    Field(discriminator="kind"),
]

RunChange = (
    StatusChanged
    | RoundStarted
    | ContributionRecorded
    | SummaryRecorded
    | JudgeSummaryRecorded
    | EvaluationRecorded
    | SolutionRecorded
    | WorkDiscarded
    | CursorMoved
)
"""The run itself: status, rounds and what they hold, the solution, the cursor."""
SeatChange = (
    QuestionsAsked
    | AnswersRecorded
    | ParticipantDropped
    | ParticipantsReinstated
    | PersonasAssigned
    | TurnAwaited
    | TurnAnswered
    | TeamSelected
)
"""The participants: who is seated, dropped or given a persona, and what they asked and were told."""
OutcomeChange = (
    AssessmentRecorded
    | ConsensusChallenged
    | DebateStoppedEarly
    | VoteRecorded
    | AnswerTallied
    | CouncilCounted
    | CorrectionDecided
    | VerdictRecorded
)
"""The deliberation's judgements: assessments, guards, early stops, votes, tallies and verdicts."""
RecordChange = (
    CallRecorded | BudgetChanged | WindowNoted | WindowsSized | ReceiptRecorded | MemoriesRecalled | MemoryForgotten
)
"""The records kept beside the debate: calls, budget, context windows, receipt and memories."""

CHANGE_ADAPTER: TypeAdapter[Change] = TypeAdapter(Change)


def parse_change(raw: str | bytes) -> Change:
    return CHANGE_ADAPTER.validate_json(raw)


def dump_change(change: Change) -> str:
    return change.model_dump_json(by_alias=True, exclude_none=True)


def apply_change(state: DebateState | None, change: Change) -> DebateState:
    """Apply one change. Only :class:`DebateCreated` may start from ``None``. Mutates and returns ``state``.

    One case per kind of change, in four groups; the type checker proves the cases total (``assert_never``)."""
    if isinstance(change, DebateCreated):
        return change.state.model_copy(deep=True)
    if state is None:
        raise ValueError(f"change '{change.kind}' before the debate was created")
    if isinstance(change, RunChange):
        _apply_run_change(state, change)
    elif isinstance(change, SeatChange):
        _apply_seat_change(state, change)
    elif isinstance(change, OutcomeChange):
        _apply_outcome_change(state, change)
    elif isinstance(change, RecordChange):
        _apply_record_change(state, change)
    else:
        assert_never(change)
    state.updated_at = change.at
    return state


def _apply_run_change(state: DebateState, change: RunChange) -> None:
    match change:
        case StatusChanged():
            state.status = change.status
            state.error = change.error
            state.failure_reason = change.reason
        case RoundStarted():
            started = _round_at(state, change.round_number, change.at)
            started.phase = change.phase or started.phase
            state.current_round = max(state.current_round, change.round_number)
        case ContributionRecorded():
            _round_at(state, change.round_number, change.at).contributions.append(change.contribution)
        case SummaryRecorded():
            _round_at(state, change.round_number, change.at).summaries[change.summary.agent_id] = change.summary
        case JudgeSummaryRecorded():
            state.judge_summary = change.summary
        case EvaluationRecorded():
            state.round(change.round_number).evaluation = change.evaluation
        case SolutionRecorded():
            state.final_solution = change.solution
        case WorkDiscarded():
            state.discarded.append(change.discarded)
        case CursorMoved():
            state.next_node = change.next_node
        case _:
            assert_never(change)


def _apply_seat_change(state: DebateState, change: SeatChange) -> None:
    match change:
        case QuestionsAsked():
            _merge_questions(state, change.groups)
            state.clarification_iterations = max(state.clarification_iterations, change.iteration)
        case AnswersRecorded():
            for item in state.clarification_items():
                if item.id in change.answers:
                    item.answer = change.answers[item.id]
        case ParticipantDropped():
            if change.dropped.agent_id not in state.dropped_ids():
                state.dropped.append(change.dropped)
        case ParticipantsReinstated():
            state.dropped = [d for d in state.dropped if d.agent_id not in change.agent_ids]
        case PersonasAssigned():
            by_id = {s.agent_id: s for s in change.stances}
            for agent in state.agents:
                if agent.id in by_id:
                    agent.position, agent.persona = by_id[agent.id].position, by_id[agent.id].persona
            state.personas_assigned = True
        case TurnAwaited():
            state.human_turns = [t for t in state.human_turns if t.key != change.turn.key]
            state.human_turns.append(change.turn.model_copy(deep=True))
        case TurnAnswered():
            turn = state.find_turn(change.key)
            if turn is not None:
                turn.text, turn.played_by, turn.answered_at = change.text, change.played_by, change.at
        case TeamSelected():
            state.team = change.choice.model_copy(deep=True)
        case _:
            assert_never(change)


def _apply_outcome_change(state: DebateState, change: OutcomeChange) -> None:
    match change:
        case AssessmentRecorded():
            _round_at(state, change.assessment.round_number, change.at).assessment = change.assessment
        case ConsensusChallenged():
            _round_at(state, change.guard.round_number, change.at).guard = change.guard
        case DebateStoppedEarly():
            state.stopped_early = change.stop
        case VoteRecorded():
            state.vote = change.outcome
        case AnswerTallied():
            state.answer_tally = change.tally
        case CouncilCounted():
            state.council = change.outcome.model_copy(deep=True)
        case CorrectionDecided():
            state.correction = change.outcome.model_copy(deep=True)
        case VerdictRecorded():
            state.verdict = change.verdict
        case _:
            assert_never(change)


def _apply_record_change(state: DebateState, change: RecordChange) -> None:
    match change:
        case CallRecorded():
            state.ledger.append(change.entry)
        case BudgetChanged():
            _set_budget(state, change)
        case WindowNoted():
            state.windows[change.use.agent_id] = change.use
        case WindowsSized():
            _set_windows(state, change)
        case ReceiptRecorded():
            state.receipt = change.receipt
        case MemoriesRecalled():
            state.memories = [memory.model_copy() for memory in change.memories]
        case MemoryForgotten():
            state.memory_forgotten_at = change.at
        case _:
            assert_never(change)


def _round_at(state: DebateState, number: int, at: datetime) -> DebateRound:
    """The round ``number``, created in order if it does not exist yet.

    Work for the next round may be saved before the runner's cursor reaches it (it is
    scheduled as soon as its inputs exist), so a contribution can open its round;
    ``current_round`` still moves only with :class:`RoundStarted`, when the cursor gets there.
    """
    found = state.find_round(number)
    if found is not None:
        return found
    created = DebateRound(round_number=number, timestamp=at)
    state.rounds.append(created)
    state.rounds.sort(key=lambda r: r.round_number)
    return created


def _set_budget(state: DebateState, change: BudgetChanged) -> None:
    """The new limits in the saved configuration (camelCase, as the debate was created with)."""
    debate = state.config.setdefault("debate", {})
    budget = dict(debate.get("budget") or {})
    if change.max_cost_usd is not None:
        budget["maxCostUsd"] = change.max_cost_usd
    if change.max_tokens is not None:
        budget["maxTokens"] = change.max_tokens
    debate["budget"] = budget


def _set_windows(state: DebateState, change: WindowsSized) -> None:
    """The new windows in the saved configuration (camelCase ``contextWindow``), agents' and the judge's."""
    config = state.config
    for agent in [*(config.get("agents") or []), config.get("judge") or {}]:
        if isinstance(agent, dict) and agent.get("id") in change.windows:
            agent["contextWindow"] = change.windows[agent["id"]]


def _merge_questions(state: DebateState, groups: list[AgentClarifications]) -> None:
    by_agent = {g.agent_id: g for g in state.clarifications}
    for group in groups:
        existing = by_agent.get(group.agent_id)
        if existing is None:
            copy = group.model_copy(deep=True)
            state.clarifications.append(copy)
            by_agent[group.agent_id] = copy
        else:
            existing.items.extend(item.model_copy() for item in group.items)


def fold(changes: Iterable[Change]) -> DebateState:
    state: DebateState | None = None
    for change in changes:
        state = apply_change(state, change)
    if state is None:
        raise ValueError("no changes to fold")
    return state
