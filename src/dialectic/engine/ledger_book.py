"""When a call's ledger entry is saved: in the same append as the result it paid for, or right after.

A call's entry waits here until the change that keeps its result is saved, and goes into that
same append (a contribution, a summary, the questions, the assessment, the consensus
guard's challenge, the vote, the solution, the verdict). So a crash can never leave an entry saved for a result that was
lost — a resumed debate, which asks again for what was not saved, never counts a call twice.

A call whose reply nothing keeps (it failed, or did not parse) is saved with the runner's next
step; work ahead of an early stop, with the record of what was discarded; and when the debate
stops (completed, failed, interrupted), whatever is left, marked as discarded: it was paid for.
"""

from __future__ import annotations

from collections.abc import Sequence

from dialectic.core.changes import (
    AssessmentRecorded,
    CallRecorded,
    Change,
    ConsensusChallenged,
    ContributionRecorded,
    CursorMoved,
    JudgeSummaryRecorded,
    PersonasAssigned,
    QuestionsAsked,
    SolutionRecorded,
    StatusChanged,
    SummaryRecorded,
    VerdictRecorded,
    VoteRecorded,
    WorkDiscarded,
)
from dialectic.core.domain import LedgerEntry

ENDS = ("completed", "failed", "interrupted")

_KEPT_BY_KIND: dict[type, str] = {
    QuestionsAsked: "clarification",
    PersonasAssigned: "personas",
    VoteRecorded: "vote",
    SolutionRecorded: "synthesis",
    VerdictRecorded: "verdict",
}


def keeps(change: Change, entry: LedgerEntry) -> bool:
    """Whether ``change`` saves the result ``entry`` paid for."""
    if isinstance(change, ContributionRecorded):
        c = change.contribution
        return (entry.kind, entry.round_number, entry.agent_id, entry.target_agent_id) == (
            c.type,
            change.round_number,
            c.agent_id,
            c.target_agent_id,
        )
    if isinstance(change, SummaryRecorded):
        summary = change.summary
        return (entry.kind, entry.round_number, entry.agent_id) == ("summary", change.round_number, summary.agent_id)
    if isinstance(change, JudgeSummaryRecorded):
        return entry.kind == "judge_summary"
    if isinstance(change, AssessmentRecorded):
        return (entry.kind, entry.round_number) == ("assessment", change.assessment.round_number)
    if isinstance(change, ConsensusChallenged):
        return (entry.kind, entry.round_number) == ("consensus_guard", change.guard.round_number)
    kind = _KEPT_BY_KIND.get(type(change))
    return kind is not None and entry.kind == kind


def ahead(entry: LedgerEntry, current_round: int) -> bool:
    """Work for a round the runner has not reached: its result may still be kept, or discarded."""
    return entry.round_number is not None and entry.round_number > current_round


class LedgerBook:
    """The entries of calls that ended but are not saved yet."""

    def __init__(self) -> None:
        self._waiting: list[LedgerEntry] = []

    def __len__(self) -> int:
        return len(self._waiting)

    def add(self, entry: LedgerEntry) -> None:
        self._waiting.append(entry)

    def settle(self, changes: Sequence[Change], current_round: int) -> list[CallRecorded]:
        """The entries to append with ``changes`` (and take them out of the book)."""
        taken: list[LedgerEntry] = []
        for change in changes:
            if isinstance(change, CallRecorded):
                continue
            for entry in list(self._waiting):
                discarded = False
                if keeps(change, entry):
                    pass
                elif isinstance(change, WorkDiscarded):
                    if entry.round_number != change.discarded.round_number:
                        continue
                    discarded = True
                elif isinstance(change, StatusChanged) and change.status in ENDS:
                    discarded = change.status != "completed" or ahead(entry, current_round)
                elif isinstance(change, CursorMoved | StatusChanged):
                    if ahead(entry, current_round):
                        continue
                else:
                    continue
                self._waiting.remove(entry)
                taken.append(entry.model_copy(update={"discarded": True}) if discarded else entry)
        return [CallRecorded(entry=entry) for entry in taken]
