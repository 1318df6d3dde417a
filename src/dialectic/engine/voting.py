"""Counting a vote on the final proposals: the rules ``majority``, ``supermajority``, ``weighted``, ``confidence``.

Pure arithmetic over :class:`~dialectic.core.domain.Vote` records; asking the agents and anonymising
the proposals is the engine's job. Every rule works the same way:

1. each vote adds its *support* to the candidate it chose — 1 for ``majority`` and
   ``supermajority``, the voter's weight for ``weighted`` (1 unless given), the vote's
   ``confidence / 100`` for ``confidence``;
2. the tally lists every candidate, zeros included, in the candidates' order;
3. the **winner** is the candidate alone at the top of the tally. Two or more sharing a top
   above zero is a **tie** (no winner). When nothing carries support (no votes cast, or every
   vote weighing zero) there is neither a winner nor a tie: nothing was decided;
4. **consensus** says whether the winner reached the rule's bar, measured against the support
   actually cast (abstentions do not count against anyone): more than half for ``majority``,
   ``weighted`` and ``confidence``; at least ``threshold`` (default 2/3) for ``supermajority``.

A winner short of the bar (a plurality) keeps ``winner_id`` with ``consensus=False``: it is
still the most supported proposal, which the record and a leaderboard may use, while a
synthesis that needs agreement must check ``consensus`` before building on the winner alone.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

from dialectic.core.domain import Vote, VoteOutcome, VoteRule

DEFAULT_SUPERMAJORITY = 2 / 3
"""The share of the votes a ``supermajority`` needs when no threshold is given."""
_RELATIVE_TOLERANCE = 1e-9
"""Weights are floats: sums that differ only by rounding count as equal (ties, bars)."""


def count_votes(
    votes: Sequence[Vote],
    rule: VoteRule,
    *,
    threshold: float | None = None,
    weights: Mapping[str, float] | None = None,
    candidates: Sequence[str],
    voters: Collection[str] | None = None,
) -> VoteOutcome:
    """Count ``votes`` under ``rule`` (see the module docstring for what each rule means).

    ``candidates`` are the agents whose proposals are on the ballot; ``voters`` the agents
    entitled to vote (default: the candidates). ``threshold`` is only for ``supermajority``
    (a share in (0, 1], as the configuration allows; below one half a leader may still reach it
    without a majority, but a tie at the top never has a winner) and ``weights`` (voter id →
    weight ≥ 0) only for ``weighted``.
    Raises ValueError for a vote for an unknown candidate, a vote from a non-voter, two votes
    from one voter, a ``confidence`` vote without a confidence, and for parameters the rule
    does not use or cannot take.
    """
    ballot = _unique(candidates, "candidate")
    if not ballot:
        raise ValueError("a vote needs at least one candidate")
    electorate = set(ballot if voters is None else _unique(voters, "voter"))
    _check_parameters(rule, threshold, weights, electorate)
    _check_votes(votes, ballot, electorate)

    tally: dict[str, float] = dict.fromkeys(ballot, 0.0)
    for vote in votes:
        tally[vote.choice_id] += _support(vote, rule, weights)
    if rule == "confidence":
        tally = {c: round(v, 2) for c, v in tally.items()}  # whole percents: no float dust in ties
    winner_id, tie = _top(tally)
    needed = _bar(rule, threshold)
    consensus = winner_id is not None and _reaches(tally[winner_id], sum(tally.values()), needed, rule)
    return VoteOutcome(
        rule=rule,
        threshold=needed if rule == "supermajority" else None,
        votes=list(votes),
        tally=tally,
        winner_id=winner_id,
        consensus=consensus,
        tie=tie,
    )


def _unique(ids: Collection[str], what: str) -> list[str]:
    seen: list[str] = []
    for item in ids:
        if item in seen:
            raise ValueError(f"{what} '{item}' is listed twice")
        seen.append(item)
    return seen


def _check_parameters(
    rule: VoteRule, threshold: float | None, weights: Mapping[str, float] | None, electorate: set[str]
) -> None:
    if threshold is not None:
        if rule != "supermajority":
            raise ValueError(f"a threshold is only for the supermajority rule, not '{rule}'")
        if not 0 < threshold <= 1:
            raise ValueError(f"a supermajority threshold is a share above 0 and at most 1, not {threshold}")
    if weights is not None:
        if rule != "weighted":
            raise ValueError(f"weights are only for the weighted rule, not '{rule}'")
        for voter, weight in weights.items():
            if voter not in electorate:
                raise ValueError(f"a weight is given for '{voter}', who does not vote")
            if not math.isfinite(weight) or weight < 0:
                raise ValueError(f"the weight of '{voter}' must be a finite number ≥ 0, not {weight}")


def _check_votes(votes: Sequence[Vote], ballot: list[str], electorate: set[str]) -> None:
    voted: set[str] = set()
    for vote in votes:
        if vote.voter_id not in electorate:
            raise ValueError(f"'{vote.voter_id}' is not a voter")
        if vote.voter_id in voted:
            raise ValueError(f"'{vote.voter_id}' voted twice")
        voted.add(vote.voter_id)
        if vote.choice_id not in ballot:
            raise ValueError(f"'{vote.voter_id}' voted for '{vote.choice_id}', who is not a candidate")


def _support(vote: Vote, rule: VoteRule, weights: Mapping[str, float] | None) -> float:
    if rule == "weighted":
        return (weights or {}).get(vote.voter_id, 1.0)
    if rule == "confidence":
        if vote.confidence is None:
            raise ValueError(f"the confidence rule needs a confidence on every vote; '{vote.voter_id}' gave none")
        return vote.confidence / 100
    return 1.0


def _top(tally: Mapping[str, float]) -> tuple[str | None, bool]:
    """The candidate alone at the top of ``tally`` (or ``None``), and whether the top is a tie."""
    best = max(tally.values())
    if best <= 0:
        return None, False
    leaders = [c for c, v in tally.items() if _same(v, best)]
    if len(leaders) > 1:
        return None, True
    return leaders[0], False


def _bar(rule: VoteRule, threshold: float | None) -> float:
    """The share of the cast support the winner needs (more than it; at least it for ``supermajority``)."""
    if rule != "supermajority":
        return 0.5
    return DEFAULT_SUPERMAJORITY if threshold is None else threshold


def _reaches(support: float, total: float, needed: float, rule: VoteRule) -> bool:
    """Whether ``support`` out of ``total`` reaches the bar: more than ``needed`` (at least, for supermajority)."""
    share_needed = needed * total
    if _same(support, share_needed):
        return rule == "supermajority"
    return support > share_needed


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_RELATIVE_TOLERANCE, abs_tol=1e-12)
