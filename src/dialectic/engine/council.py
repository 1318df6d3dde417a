"""The council's rules, as pure functions: anonymised answers, the rankings read from replies, the
Borda count that combines them, and the answers the chairman is shown.

The protocol (after llm-council): every member answers on its own; every member ranks all the answers,
anonymised ("Response A", "Response B"…) and shown in an order of its own, so neither a member's own
answer nor a position stands out; the rankings are combined by Borda count (an answer ranked first of
``n`` earns ``n - 1`` points, last earns 0; an answer a ranking leaves out earns nothing from it); a
chairman writes the result from the ``top`` answers, best first. Both the bench's ``council`` arm and the
engine's ``council`` format follow these rules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class CouncilPlan:
    members: int = 3
    """Members who answer and rank."""
    top: int = 2
    """Answers the chairman is shown, best first."""

    def __post_init__(self) -> None:
        if not 2 <= self.members <= len(LABELS):
            raise ValueError(f"a council has 2 to {len(LABELS)} members")
        if self.top < 1:
            raise ValueError("the chairman is shown at least one answer")


@dataclass(frozen=True)
class Shown:
    """One answer as a ranker sees it: its label there, and which member gave it."""

    label: str
    member: int
    text: str


def shown_to(ranker: int, texts: Sequence[str | None]) -> list[Shown]:
    """The answers ranker ``ranker`` sees: every member's that exists, rotated to start after the ranker's
    own, so each ranker sees them in another order and its own comes last."""
    order = [(ranker + 1 + k) % len(texts) for k in range(len(texts))]
    present = [m for m in order if texts[m] is not None]
    return [Shown(LABELS[i], m, texts[m] or "") for i, m in enumerate(present)]


_RANKING_HEADER = re.compile(r"final\s+ranking\s*:?", re.IGNORECASE)
_LABEL = re.compile(r"\bresponse\s+([A-Z])\b", re.IGNORECASE)


def read_ranking(reply: str, shown: Sequence[Shown]) -> list[int]:
    """The members a ranking reply puts in order, best first: the labels after its last "FINAL RANKING"
    (else in the whole reply), each counted once; labels it was not shown are skipped."""
    headers = list(_RANKING_HEADER.finditer(reply))
    tail = reply[headers[-1].end() :] if headers else reply
    by_label = {s.label: s.member for s in shown}
    ranked: list[int] = []
    for found in _LABEL.finditer(tail):
        member = by_label.get(found.group(1).upper())
        if member is not None and member not in ranked:
            ranked.append(member)
    return ranked


@dataclass(frozen=True)
class Standing:
    member: int
    points: int


def borda(rankings: Sequence[Sequence[int]], members: Sequence[int]) -> list[Standing]:
    """Every member's Borda points over the rankings, best first (a tie keeps the members' order).

    A ranking of ``k`` answers gives ``k - 1`` points to its first and 0 to its last."""
    points = dict.fromkeys(members, 0)
    for ranking in rankings:
        for place, member in enumerate(ranking):
            if member in points:
                points[member] += len(ranking) - 1 - place
    order = {m: i for i, m in enumerate(members)}
    return [Standing(m, p) for m, p in sorted(points.items(), key=lambda mp: (-mp[1], order[mp[0]]))]


def chairman_choice(standings: Sequence[Standing], plan: CouncilPlan) -> list[int]:
    """The members whose answers the chairman is shown, best first."""
    return [s.member for s in standings[: plan.top]]
