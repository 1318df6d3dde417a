"""Typed events the engine publishes, and the bus that delivers them.

The CLI's live display, the verbose log, the web stream and tests are all subscribers;
the engine never writes to a terminal itself. Events are published after the change
they announce has been saved.

:class:`TokenDelta` is the one kind that announces nothing saved: a piece of a reply while
it streams. Only subscribers that ask for deltas get them, and the engine streams replies
only while one does (:attr:`EventBus.wants_deltas`); the saved contribution is the whole
reply either way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from dialectic.core.changes import Change
from dialectic.core.domain import (
    AgentClarifications,
    ConsensusGuard,
    Contribution,
    CorrectionOutcome,
    CouncilOutcome,
    DebateSummary,
    DiscardedWork,
    DroppedParticipant,
    HumanTurn,
    LedgerEntry,
    Participant,
    Phase,
    RoundAssessment,
    Solution,
    Verdict,
    VoteOutcome,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Event:
    debate_id: str


@dataclass(frozen=True)
class ChangesSaved(Event):
    """``changes`` were just appended to the debate's log, as numbers ``last_seq - len(changes) + 1``
    to ``last_seq``: a subscriber that mirrors the log (the web stream) follows it without reading
    it back. Published for the engine's appends during a run; a debate's first change (saved as
    its lease is taken) comes before :class:`DebateStarted` without one."""

    last_seq: int
    changes: tuple[Change, ...]


@dataclass(frozen=True)
class DebateStarted(Event):
    problem: str
    total_rounds: int
    agents: tuple[Participant, ...]
    judge: Participant
    resumed: bool = False
    format: str = "critique-refine"
    """The deliberation protocol (``debate.format``)."""
    trace_id: str | None = None
    """The debate's trace id (every run of it is traced under this one)."""


@dataclass(frozen=True)
class RoundBegan(Event):
    round_number: int
    total_rounds: int


@dataclass(frozen=True)
class PhaseStarted(Event):
    round_number: int
    phase: Phase
    expected: int
    """How many tasks the phase will run (e.g. agents × (agents − 1) critiques)."""


@dataclass(frozen=True)
class PhaseCompleted(Event):
    round_number: int
    phase: Phase


@dataclass(frozen=True)
class NodeStarted(Event):
    """The runner starts a step of the debate's graph (``proposal``, ``synthesis``…)."""

    node: str
    round_number: int
    """The debate's current round as the step starts (0 before the first)."""


@dataclass(frozen=True)
class NodeFinished(Event):
    node: str
    outcome: str
    """The next step's name, ``end``, ``suspend``, or ``error``."""


@dataclass(frozen=True)
class CallSaved(Event):
    """A call's ledger entry was saved (with the result it paid for)."""

    entry: LedgerEntry


@dataclass(frozen=True)
class AgentStarted(Event):
    agent_id: str
    agent_name: str
    activity: str
    """Human-readable, e.g. ``proposing`` or ``critiquing Performance Engineer``."""
    round_number: int | None = None
    """The round the call's work belongs to (``None`` for clarifications and the synthesis)."""
    kind: str | None = None
    """What the call makes: ``proposal``, ``critique``, ``refinement``, ``summary``, ``evaluation``…"""
    target_id: str | None = None
    """For a critique: the agent whose proposal is critiqued."""


@dataclass(frozen=True)
class AgentCompleted(Event):
    agent_id: str
    agent_name: str
    activity: str
    ok: bool = True
    round_number: int | None = None
    kind: str | None = None
    target_id: str | None = None


@dataclass(frozen=True)
class TokenDelta(Event):
    """A piece of a reply as the provider streams it (never saved: the contribution is)."""

    agent_id: str
    agent_name: str
    round_number: int | None
    kind: str | None
    """What the call makes, as in :class:`AgentStarted` (``proposal``, ``critique``…)."""
    target_id: str | None
    offset: int
    """Where ``text`` goes in the reply: a retried call starts again at 0 (what came before is void)."""
    text: str


@dataclass(frozen=True)
class ParticipantRemoved(Event):
    agent_name: str
    dropped: DroppedParticipant
    remaining: int


@dataclass(frozen=True)
class WorkAbandoned(Event):
    discarded: DiscardedWork


@dataclass(frozen=True)
class PersonasGiven(Event):
    agents: tuple[Participant, ...]
    """Every agent, with the position and persona the judge gave it."""


@dataclass(frozen=True)
class AssessmentAdded(Event):
    round_number: int
    assessment: RoundAssessment
    stop: bool
    reason: str
    """Why the debate stops (or goes on) after this round."""


@dataclass(frozen=True)
class GuardRaised(Event):
    """The consensus guard challenged round ``guard.round_number``'s consensus: the debate goes on."""

    guard: ConsensusGuard


@dataclass(frozen=True)
class VoteCompleted(Event):
    outcome: VoteOutcome


@dataclass(frozen=True)
class CouncilStandings(Event):
    """The council's rankings were counted (``format: council``): the standings, and what the chair gets."""

    outcome: CouncilOutcome


@dataclass(frozen=True)
class TrajectoryDecided(Event):
    """The correction-biased critique decided over the whole trajectory (``format: correction``)."""

    outcome: CorrectionOutcome


@dataclass(frozen=True)
class VerdictAdded(Event):
    verdict: Verdict


@dataclass(frozen=True)
class ContributionAdded(Event):
    round_number: int
    agent_name: str
    contribution: Contribution
    """May have ``status == "failed"``: failures are announced like any contribution."""


@dataclass(frozen=True)
class SummaryAdded(Event):
    round_number: int
    agent_name: str
    summary: DebateSummary


@dataclass(frozen=True)
class QuestionsPending(Event):
    groups: tuple[AgentClarifications, ...]
    """Only the unanswered questions, grouped by the agent that asked them."""


@dataclass(frozen=True)
class TurnPending(Event):
    """A human seat's turn waits for its text (saved as a :class:`~dialectic.core.changes.TurnAwaited`)."""

    turn: HumanTurn


@dataclass(frozen=True)
class SynthesisStarted(Event):
    pass


@dataclass(frozen=True)
class DebateCompleted(Event):
    solution: Solution


@dataclass(frozen=True)
class DebateSuspended(Event):
    reason: str


@dataclass(frozen=True)
class DebateInterrupted(Event):
    pass


@dataclass(frozen=True)
class DebatePausing(Event):
    """A pause was requested and the run stopped starting calls; it waits for those still in flight."""

    in_flight: int


@dataclass(frozen=True)
class DebatePaused(Event):
    """The run stopped between steps on request, after its calls in flight finished; resumable."""


@dataclass(frozen=True)
class DebateFailed(Event):
    error: str


@dataclass(frozen=True)
class Warning(Event):
    message: str


@dataclass(frozen=True)
class Notice(Event):
    """Something the user should know that is not a problem (e.g. which kind of problem was detected)."""

    message: str


@dataclass(frozen=True)
class CallRetrying(Event):
    agent_name: str
    activity: str
    error: str
    attempt: int
    wait_s: float


Handler = Callable[[Event], None]


@dataclass
class EventBus:
    """Synchronous fan-out. A failing subscriber is logged and never stops the debate.

    A subscriber gets :class:`TokenDelta` events only if it subscribed with ``deltas=True``.
    """

    _handlers: list[tuple[Handler, bool]] = field(default_factory=list)

    def subscribe(self, handler: Handler, *, deltas: bool = False) -> Callable[[], None]:
        entry = (handler, deltas)
        self._handlers.append(entry)

        def unsubscribe() -> None:
            if entry in self._handlers:
                self._handlers.remove(entry)

        return unsubscribe

    @property
    def wants_deltas(self) -> bool:
        """Whether any subscriber asked for token deltas (the engine streams replies only then)."""
        return any(deltas for _, deltas in self._handlers)

    def publish(self, event: Event) -> None:
        is_delta = isinstance(event, TokenDelta)
        for handler, deltas in list(self._handlers):
            if is_delta and not deltas:
                continue
            try:
                handler(event)
            except Exception:  # a display bug must not lose a debate
                log.exception("event subscriber failed on %s", type(event).__name__)
