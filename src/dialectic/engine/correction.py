"""The correction-biased critique's rules, as pure functions: what counts as a correcting critique, and
how the whole trajectory picks the final answer.

The protocol ("Debate or Vote", 2025: discussion alone is a martingale, only corrections move the odds;
Free-MAD, 2025: decide on the whole trajectory, not the last round's majority):

1. **Answers.** Every member answers on its own.
2. **Critiques.** Member ``k`` checks member ``k + 1``'s answer. A critique corrects only when it names the
   rule or step that is broken (a ``Violation:`` line) and quotes the words of the answer that break it
   (an ``Evidence:`` line) — and the quote is really in the answer. Anything else (no violation found,
   a vague objection, a quote the answer does not hold, a copied instruction) leaves the answer standing.
3. **Revisions.** Only an answer with a correcting critique is sent back to its author, who fixes it or
   keeps it; the others are kept without a call.
4. **The decision.** Every answer of the trajectory earns points: +1 for being given; −1 for a correcting
   critique against it; +0.5 for a critique that checked it and found nothing; a revision that changes
   the answer earns +1 (it answers a named error), one that keeps it +0.5 (it was defended). Answers that
   read the same add up; the most points win, a tie going to the answer its model was surest of, then to
   the earliest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

GIVEN = 1.0
CORRECTED = -1.0
CHECKED = 0.5
REVISED = 1.0
DEFENDED = 0.5
MIN_EVIDENCE = 2
"""Characters a quote needs (after normalising) to count as evidence."""

_VIOLATION = re.compile(r"^[\s*_#>-]*violation\s*[:\-]\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_EVIDENCE = re.compile(r"^[\s*_#>-]*evidence\s*[:\-]\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_QUOTES = "\"'`“”‘’«»"


@dataclass(frozen=True)
class Critique:
    """What a critique says of one answer."""

    violation: str | None
    evidence: str | None
    corrects: bool
    """It names a violation and quotes evidence the answer really holds."""

    @property
    def verdict(self) -> Literal["corrects", "holds"]:
        return "corrects" if self.corrects else "holds"


def _normalised(text: str) -> str:
    return " ".join(text.lower().translate({ord(q): " " for q in _QUOTES}).split())


def read_critique(reply: str, critiqued: str) -> Critique:
    """The last ``Violation:`` line of ``reply`` and the ``Evidence:`` line after it; the critique corrects
    only when both are there and the evidence is quoted from ``critiqued`` (the answer and its working)."""
    violations = list(_VIOLATION.finditer(reply))
    if not violations:
        return Critique(None, None, False)
    last = violations[-1]
    violation = last.group(1).strip()
    evidence_match = _EVIDENCE.search(reply, last.end())
    evidence = evidence_match.group(1).strip() if evidence_match else None
    quoted = _normalised(evidence or "")
    holds_quote = len(quoted) >= MIN_EVIDENCE and quoted in _normalised(critiqued)
    meaningful = bool(_normalised(violation)) and _normalised(violation) not in ("none", "no", "n/a")
    return Critique(violation, evidence, meaningful and holds_quote)


@dataclass(frozen=True)
class Trajectory:
    """One member's path: its answer, the critique of it, and its revision (when it was asked for one)."""

    answer: str | None
    critique: Critique | None = None
    revised: str | None = None
    """The answer after the revision; ``None`` when there was no revision (or it stated no answer)."""
    confidence: float | None = None
    """How sure the member's model was of its first answer (token probability), for ties."""


@dataclass(frozen=True)
class Decision:
    winner: str | None
    points: dict[str, float]
    """Points per answer, in the order the answers were first given."""


def decide(trajectories: Sequence[Trajectory]) -> Decision:
    """The answer the whole trajectory supports best (see the module docstring for the points)."""
    points: dict[str, float] = {}
    surest: dict[str, float] = {}

    def earn(answer: str | None, amount: float, confidence: float | None = None) -> None:
        if answer is None:
            return
        points[answer] = points.get(answer, 0.0) + amount
        if confidence is not None:
            surest[answer] = max(surest.get(answer, 0.0), confidence)

    for path in trajectories:
        earn(path.answer, GIVEN, path.confidence)
        if path.critique is not None:
            earn(path.answer, CORRECTED if path.critique.corrects else CHECKED)
        if path.revised is not None:
            earn(path.revised, DEFENDED if path.revised == path.answer else REVISED)
    if not points:
        return Decision(None, {})
    order = {answer: i for i, answer in enumerate(points)}
    winner = max(points, key=lambda a: (round(points[a], 9), surest.get(a, 0.0), -order[a]))
    return Decision(winner, {a: round(p, 6) for a, p in points.items()})
