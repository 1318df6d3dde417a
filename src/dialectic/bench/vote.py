"""Majority vote with one deterministic tie rule, used by every arm that votes.

Tie rule: among the answers with the most votes, the one given earliest wins — earliest
in the order the votes are listed, which is sample order (sample 1, 2, …) for majority and
self-consistency and agent order (agent 1, 2, …) for a debate's last round. Replies without
an answer (unparseable or cut off) cast no vote. The rule is stated in every report along
with how many items were decided by it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

TIE_RULE = (
    "majority vote over the replies that gave an answer; a tie goes to the tied answer given "
    "earliest (sample 1 before sample 2; agent 1 before agent 2)"
)


@dataclass(frozen=True)
class Vote:
    winner: str | None
    """``None`` when no reply gave an answer."""
    counts: dict[str, int]
    tied: bool
    """More than one answer had the top count, so the tie rule decided."""


def majority_vote(answers: Sequence[str | None]) -> Vote:
    given = [a for a in answers if a is not None]
    if not given:
        return Vote(None, {}, False)
    counts = Counter(given)
    top = max(counts.values())
    leaders = {answer for answer, count in counts.items() if count == top}
    winner = next(a for a in given if a in leaders)
    ordered = {answer: counts[answer] for answer in dict.fromkeys(given)}
    return Vote(winner, ordered, len(leaders) > 1)
