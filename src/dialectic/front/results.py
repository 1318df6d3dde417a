"""What a debate run from Python gives back: its outcome, read from the saved debate."""

from __future__ import annotations

from dataclasses import dataclass

from dialectic.core.domain import (
    AnswerTally,
    ClarificationItem,
    CorrectionOutcome,
    CouncilOutcome,
    DebateState,
    HumanTurn,
    Solution,
    Verdict,
    VoteOutcome,
)
from dialectic.core.events import Event
from dialectic.core.ledger import LedgerTotals, debate_totals
from dialectic.reporting.export import export_json
from dialectic.reporting.report import render_report


@dataclass(frozen=True)
class DebateResult:
    """A debate as it stands after a run: ``completed``, or ``suspended`` waiting for answers or human turns.

    Everything is read from :attr:`state`, the saved debate (the CLI's ``show`` and ``export`` read
    the same)."""

    state: DebateState

    @property
    def id(self) -> str:
        return self.state.id

    @property
    def status(self) -> str:
        return self.state.status

    @property
    def solution(self) -> str | None:
        """The judge's synthesis, as text (``None`` until the debate completes)."""
        return self.state.final_solution.description if self.state.final_solution is not None else None

    @property
    def synthesis(self) -> Solution | None:
        """The whole synthesis: description, tradeoffs, recommendations, open questions, confidence."""
        return self.state.final_solution

    @property
    def verdict(self) -> Verdict | None:
        """The judge's verdict, when the debate's format gives one."""
        return self.state.verdict

    @property
    def tally(self) -> VoteOutcome | None:
        """The vote on the final proposals, when the format holds one."""
        return self.state.vote

    @property
    def answer(self) -> AnswerTally | None:
        """How the adaptive protocol decided (``format: adaptive``): the answer, every answer's count and
        weight, and the agreement (``result.answer.agreement`` is ``"5 of 7 agree"``)."""
        return self.state.answer_tally

    @property
    def council(self) -> CouncilOutcome | None:
        """How the council decided (``format: council``): each ranking, the Borda standings (best first) and
        the members whose answers the chair was given (``result.council.chosen``)."""
        return self.state.council

    @property
    def correction(self) -> CorrectionOutcome | None:
        """How the correction-biased critique decided (``format: correction``): each check's verdict, the
        points over the whole trajectory and the winner."""
        return self.state.correction

    @property
    def usage(self) -> LedgerTotals:
        """Calls, tokens and cost in US dollars (for priced models), over every run of the debate."""
        return debate_totals(self.state)

    @property
    def questions(self) -> list[ClarificationItem]:
        """The clarifying questions waiting for answers (a ``suspended`` debate's)."""
        return self.state.pending_questions()

    @property
    def turns(self) -> list[HumanTurn]:
        """The human seats' turns waiting for their text (a ``suspended`` debate's): each with its ``key``,
        its seat and the ``prompt`` the person is to answer."""
        return self.state.pending_turns()

    def report(self) -> str:
        """The Markdown report, as ``dialectic report`` writes it."""
        return render_report(self.state)

    def to_json(self) -> str:
        """The JSON export, as ``dialectic export`` writes it."""
        return export_json(self.state)


@dataclass(frozen=True)
class Finished(Event):
    """The last item :meth:`dialectic.Debate.stream` yields: the debate's result."""

    result: DebateResult
