"""What the tools answer: a saved debate (and its job, while this server runs it) as plain data.

Each answer is a pydantic model, so a tool publishes its output schema and a client gets
``structuredContent`` beside the JSON text.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dialectic.core.domain import DebateState
from dialectic.front.results import DebateResult
from dialectic.mcp_server.jobs import Job
from dialectic.store import DebateListing

REPORT_URI = "dialectic://debates/{debate_id}/report"


def report_uri(debate_id: str) -> str:
    return REPORT_URI.format(debate_id=debate_id)


class View(BaseModel):
    """An answer: its fields' docstrings become their descriptions in the tool's output schema."""

    model_config = ConfigDict(use_attribute_docstrings=True)


class Question(View):
    id: str
    agent: str
    """The name of the agent that asked."""
    question: str


class PendingTurn(View):
    key: str
    """What ``submit_turn`` names the turn by."""
    seat: str
    """The name of the seat a person plays."""
    activity: str
    round: int | None = None
    prompt: str
    """What the seat is asked: the problem, the discussion so far and the turn's instructions."""
    role: str
    """The seat's role, as its model would be told it (the system prompt)."""
    deadline: str | None = None
    """When the seat's fallback model plays the turn if no text has come (ISO 8601), for a seat with one."""


class Progress(View):
    rounds_done: int
    total_rounds: int
    phase: str | None = None
    """The phase under way (``proposal``, ``critique``, ``synthesis``…), while this server runs the debate."""
    phase_done: int | None = None
    """Contributions done in the phase, of ``phase_expected``."""
    phase_expected: int | None = None
    message: str


class Status(View):
    debate_id: str
    status: str
    """``running``, ``suspended`` (waiting for answers), ``completed``, ``interrupted``, ``failed``…"""
    running_here: bool
    """Whether this server is running the debate now."""
    round: int
    total_rounds: int
    phase: str | None = None
    progress: Progress
    pending_questions: list[Question] = Field(default_factory=list)
    pending_turns: list[PendingTurn] = Field(default_factory=list)
    """Turns of seats a person plays, waiting for their text (``submit_turn``)."""
    error: str | None = None
    report_uri: str


class Started(View):
    debate_id: str
    status: str
    warnings: list[str] = Field(default_factory=list)


class Waited(Status):
    stopped: bool
    """Whether the debate stopped running (completed, suspended, failed…) before the timeout."""


class Usage(View):
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    """``None`` when a model without a known price was called."""


class Result(View):
    debate_id: str
    status: str
    solution: str
    verdict: dict[str, Any] | None = None
    tally: dict[str, Any] | None = None
    answer: dict[str, Any] | None = None
    """The adaptive protocol's answer tally (answer, counts, weights, agreeing of answered), when it ran."""
    council: dict[str, Any] | None = None
    """The council's rankings, Borda standings and the answers its chair was given (``format: council``)."""
    correction: dict[str, Any] | None = None
    """The correction-biased critique's checks, points and winner (``format: correction``)."""
    usage: Usage
    report_uri: str


class Cancelled(View):
    debate_id: str
    status: str
    cancelled: bool
    """Whether a run was going on here and was cancelled (``False``: nothing to cancel)."""


class Listed(View):
    debate_id: str
    problem: str
    status: str
    round: int
    created_at: str
    updated_at: str


class Listing(View):
    debates: list[Listed]


def total_rounds(state: DebateState) -> int:
    config = state.saved_config()
    return config.debate.rounds if config is not None else len(state.rounds)


def status_of(state: DebateState, job: Job | None) -> Status:
    """``state`` as saved, with where the run stands when ``job`` is running it."""
    live = job if job is not None and job.running else None
    total = live.total_rounds if live is not None and live.total_rounds else total_rounds(state)
    done = state.current_round if state.status == "completed" else max(state.current_round - 1, 0)
    message = live.describe() if live is not None else _message(state, done, total)
    progress = Progress(rounds_done=done, total_rounds=total, message=message)
    if live is not None and live.phase:
        progress.phase = live.phase
        if live.phase_expected:
            progress.phase_done, progress.phase_expected = live.phase_done, live.phase_expected
    questions = [
        Question(id=item.id, agent=group.agent_name, question=item.question)
        for group in state.clarifications
        for item in group.items
        if not item.answered
    ]
    turns = [
        PendingTurn(
            key=turn.key,
            seat=turn.agent_name,
            activity=turn.activity,
            round=turn.round_number,
            prompt=turn.prompt,
            role=turn.role_prompt,
            deadline=deadline.isoformat() if (deadline := turn.deadline_at()) is not None else None,
        )
        for turn in state.pending_turns()
    ]
    return Status(
        debate_id=state.id,
        status=state.status,
        running_here=live is not None,
        round=state.current_round,
        total_rounds=total,
        phase=progress.phase,
        progress=progress,
        pending_questions=questions,
        pending_turns=turns,
        error=state.error or (job.error if job is not None else None),
        report_uri=report_uri(state.id),
    )


def _message(state: DebateState, done: int, total: int) -> str:
    if state.status == "running":
        return "running in another process (or left running by one that stopped: dialectic resume goes on with it)"
    if state.status == "suspended" and state.pending_turns():
        return "waiting for a human seat's turn (submit_turn)"
    if state.status == "suspended":
        return "waiting for answers to the pending questions (answer_questions)"
    return f"{state.status}: {done} of {total} rounds done"


def result_of(result: DebateResult) -> Result:
    usage = result.usage
    return Result(
        debate_id=result.id,
        status=result.status,
        solution=result.solution or "",
        verdict=result.verdict.to_json_dict() if result.verdict is not None else None,
        tally=result.tally.to_json_dict() if result.tally is not None else None,
        answer=result.answer.to_json_dict() if result.answer is not None else None,
        council=result.council.to_json_dict() if result.council is not None else None,
        correction=result.correction.to_json_dict() if result.correction is not None else None,
        usage=Usage(
            calls=usage.calls,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cost_usd=usage.cost_usd if usage.cost_known else None,
        ),
        report_uri=report_uri(result.id),
    )


def listed(entry: DebateListing) -> Listed:
    return Listed(
        debate_id=entry.id,
        problem=entry.problem,
        status=entry.status,
        round=entry.current_round,
        created_at=entry.created_at.isoformat(),
        updated_at=entry.updated_at.isoformat(),
    )
