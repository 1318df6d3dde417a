"""The deliberation protocols a debate can follow (``debate.format``), as data.

The families share the graph's common nodes (clarification, personas, round manager,
assessment, vote, synthesis, verdict):

* ``critique-refine`` (and ``vote``, which ends its rounds with a vote): each round,
  proposals are critiqued by every other agent and refined — the dataflow of
  :mod:`dialectic.engine.work`;
* the **turn** formats: each round, every participant takes one turn. ``simultaneous``
  turns see only earlier rounds (the literature's simultaneous talk); ``sequential`` ones
  also see the turns taken before them in the same round. What a turn is asked to do comes
  from its round's phase.

Three run one round of their own, whatever ``debate.rounds`` says: ``answer`` (``adaptive``:
:mod:`dialectic.engine.answer_step`), ``council`` (:mod:`dialectic.engine.council_step`) and
``correction`` (:mod:`dialectic.engine.correction_step`).

Pure data and pure functions: the nodes read it, nothing here runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dialectic.core.domain import ContributionType

Visibility = Literal["simultaneous", "sequential"]


@dataclass(frozen=True)
class TurnPlan:
    """How one round of a turn format runs."""

    phase: str
    """The round's phase (``response``, ``opening``, ``rebuttal``, ``closing``…), stored with the round."""
    kind: ContributionType
    """The kind of contribution each turn makes."""
    template: str
    """The prompt template of a turn (``agents/prompts``)."""
    visibility: Visibility
    may_stop_after: bool = True
    """Whether the debate may stop early after this round (structured debates only stop after closing)."""


@dataclass(frozen=True)
class Protocol:
    name: str
    family: Literal["critique-refine", "turns", "answer", "council", "correction"]
    votes: bool = False
    """Participants vote on the final proposals after the last round."""
    judge_driven: bool = False
    """The judge's per-round assessment is part of the protocol (not only of early termination)."""

    @property
    def one_round(self) -> bool:
        """It holds one round of its own (adaptive, council, correction), whatever ``debate.rounds`` says."""
        return self.family in ("answer", "council", "correction")

    def turn_plan(self, round_number: int, total_rounds: int) -> TurnPlan:
        """The plan of a turn format's round ``round_number`` of ``total_rounds``."""
        if self.family != "turns":
            raise ValueError(f"{self.name} has no turns")
        if self.name == "structured":
            if round_number == 1:
                return TurnPlan("opening", "opening", "turn_opening.md.j2", "simultaneous", may_stop_after=False)
            if round_number == total_rounds:
                return TurnPlan("closing", "closing", "turn_closing.md.j2", "simultaneous")
            return TurnPlan("rebuttal", "rebuttal", "turn_rebuttal.md.j2", "simultaneous", may_stop_after=False)
        template, visibility = _TURNS[self.name]
        return TurnPlan("response", "response", template, visibility)


_TURNS: dict[str, tuple[str, Visibility]] = {
    "free-form": ("turn_free_form.md.j2", "sequential"),
    "round-limited": ("turn_round_limited.md.j2", "simultaneous"),
    "convergence-seeking": ("turn_common_ground.md.j2", "simultaneous"),
    "simultaneous": ("turn_simultaneous.md.j2", "simultaneous"),
}

PROTOCOLS: dict[str, Protocol] = {
    p.name: p
    for p in (
        Protocol("critique-refine", "critique-refine"),
        Protocol("adaptive", "answer"),
        Protocol("vote", "critique-refine", votes=True),
        Protocol("free-form", "turns", judge_driven=True),
        Protocol("round-limited", "turns"),
        Protocol("structured", "turns", judge_driven=True),
        Protocol("convergence-seeking", "turns"),
        Protocol("simultaneous", "turns"),
        Protocol("council", "council"),
        Protocol("correction", "correction"),
    )
}


def protocol(name: str) -> Protocol:
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise ValueError(f"unknown debate format '{name}' (known: {', '.join(PROTOCOLS)})") from None
