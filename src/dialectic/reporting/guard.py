"""The report's section for the consensus guard (``debate.consensusGuard``): when it fired, its objection,
and whether the participants' positions moved afterwards.

Pure rendering over stored figures: the positions' similarity when the guard fired against the next
round's (the convergence detector's), and how alike each participant's next position was to its
previous one (the repetition detector's highest figure).
"""

from __future__ import annotations

from dataclasses import dataclass

from dialectic.core.domain import ConsensusGuard, DebateRound, DebateState

MOVED_BY = 0.05
"""A fall in the positions' similarity of at least this much (0–1) after the challenge: they moved apart."""

KEPT_AT = 0.9
"""Every participant's next position less alike its previous one than this: they all changed their answers
(the repetition detector's threshold for a participant repeating itself)."""


@dataclass(frozen=True)
class GuardOutcome:
    """What the challenge changed: the figures before and after, and the reading of them."""

    before: float | None
    after: float | None
    kept: float | None
    """The highest similarity of a participant's next position to its previous one."""
    verdict: str
    """``moved``, ``held``, or ``unknown`` (no round was assessed after it)."""


def outcome(state: DebateState, guard: ConsensusGuard) -> GuardOutcome:
    """Whether the positions moved after ``guard``: by the next round's assessment, when there is one."""
    following = state.find_round(guard.round_number + 1)
    assessment = following.assessment if following is not None else None
    if assessment is None:
        return GuardOutcome(guard.similarity, None, None, "unknown")
    after, kept = assessment.similarity, assessment.repetition
    apart = guard.similarity is not None and after is not None and guard.similarity - after >= MOVED_BY
    changed = kept is not None and kept < KEPT_AT
    return GuardOutcome(guard.similarity, after, kept, "moved" if apart or changed else "held")


def guard_blocks(state: DebateState, rnd: DebateRound, name: str) -> list[str]:
    """``#### Consensus guard`` after round ``rnd``, when the guard challenged it; ``name``: the speaker's."""
    guard = rnd.guard
    if guard is None:
        return []
    result = outcome(state, guard)
    facts = [f"- **Fired after round {guard.round_number}** (written by {name}): {' '.join(guard.reason.split())}."]
    figures = []
    if result.before is not None:
        figures.append(f"positions {result.before:.0%} alike when it fired")
    if result.after is not None:
        figures.append(f"{result.after:.0%} in round {guard.round_number + 1}")
    if result.kept is not None:
        figures.append(f"participants' next positions up to {result.kept:.0%} like their previous ones")
    reading = {
        "moved": "the positions moved",
        "held": "the positions held",
        "unknown": "no later round was assessed",
    }[result.verdict]
    facts.append(f"- **Afterwards:** {reading}" + (f" ({'; '.join(figures)})" if figures else "") + ".")
    quoted = "\n".join(f"> {line}" if line else ">" for line in guard.objection.strip().splitlines())
    return ["#### Consensus guard", "\n".join(facts), f"**Objection:**\n\n{quoted}"]
