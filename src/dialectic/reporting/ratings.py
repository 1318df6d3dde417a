"""ELO ratings from stored debates' verdicts and votes: pure, recomputed from the debates every time.

**What counts as a match.** A debate yields pairwise matches between its participants (the
agents still in it at the end; an agent dropped for failing calls is left out) from two
independent judgements, and counts **both** when it has both:

* the judge's **verdict** (only a structured one: when the judge's reply did not parse, its
  missing winner is no judgement);
* the agents' **vote** on the final proposals (only when it decided something: a winner or a
  tie; no votes cast, or all weighing zero, is no result). A vote's winner counts even without
  consensus: it is still the proposal most supported.

A winner beats each other participant (one match per pair); no winner (the judge named none,
or the vote tied) is a draw between every pair. Agents that rate under the same key (two
agents on one model, with ``by="model"``) do not play each other. A winner who is not among
the participants rated is skipped.

**Arithmetic.** Standard ELO: everyone starts at :data:`INITIAL_RATING`; a player rated
``Ra`` expects ``1 / (1 + 10 ** ((Rb - Ra) / 400))`` against ``Rb`` and moves by
``K * (score - expected)``, with :data:`K_FACTOR` and score 1, ½ or 0. Debates are applied in
chronological order of creation (then id). Within one debate every match is computed from
the ratings before the debate and the changes are added together, so the participants'
order inside a debate does not matter.

**Uncertainty.** A rating over few games says little: its deviation is
``INITIAL_DEVIATION / sqrt(1 + matches)``, at least :data:`MIN_DEVIATION` (350 for an unrated
player, about 100 after 12 games). The team selection (:mod:`dialectic.engine.team`) goes by the
conservative ``rating - deviation``.

**Keys.** ``by="model"`` rates ``provider/model`` (e.g. ``openai/gpt-4o``); ``by="agent"``
rates the agent's configured ``id`` (``agent-architect``), whatever model it ran on.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from dialectic.core.domain import DebateState, Participant

RatingKey = Literal["model", "agent"]
RATING_KEYS: tuple[RatingKey, ...] = ("model", "agent")
MatchSource = Literal["verdict", "vote"]

INITIAL_RATING = 1500.0
K_FACTOR = 32.0
WIN, DRAW = 1.0, 0.5
INITIAL_DEVIATION = 350.0
MIN_DEVIATION = 50.0


def rating_deviation(matches: int) -> float:
    """The uncertainty of a rating over ``matches`` rated games (see the module docstring)."""
    return max(MIN_DEVIATION, INITIAL_DEVIATION / math.sqrt(1 + max(matches, 0)))


@dataclass(frozen=True)
class Match:
    """One pairwise game: ``first`` scored ``score`` (:data:`WIN` or :data:`DRAW`) against ``second``."""

    debate_id: str
    source: MatchSource
    first: str
    second: str
    score: float


@dataclass
class RatingEntry:
    """One line of the leaderboard."""

    key: str
    """``provider/model`` or the agent's id."""
    name: str
    """What to show: the model key, or the agent's name (as in its latest rated debate)."""
    rating: float = INITIAL_RATING
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def matches(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def deviation(self) -> float:
        return rating_deviation(self.matches)


@dataclass(frozen=True)
class Leaderboard:
    by: RatingKey
    entries: list[RatingEntry]
    """Highest rating first (then most matches, then key)."""
    debates: int
    """How many debates produced at least one match."""
    judged: int = 0
    """How many debates hold a judgement (a verdict or a deciding vote), matches or not: a debate whose
    participants all rate under one key (one model, by model) has a judgement but no match."""


def expected_score(rating: float, opponent: float) -> float:
    """The score a player rated ``rating`` expects against ``opponent`` (0–1)."""
    return 1.0 / (1.0 + 10.0 ** ((opponent - rating) / 400.0))


def rating_key(participant: Participant, by: RatingKey) -> str:
    return f"{participant.provider}/{participant.model}" if by == "model" else participant.id


def debate_outcomes(state: DebateState) -> list[tuple[MatchSource, str | None]]:
    """The judgements a debate holds, each with its winner (``None``: a draw), verdict first."""
    outcomes: list[tuple[MatchSource, str | None]] = []
    if state.verdict is not None and state.verdict.structured:
        outcomes.append(("verdict", state.verdict.winner_id))
    vote = state.vote
    if vote is not None and (vote.winner_id is not None or vote.tie):
        outcomes.append(("vote", vote.winner_id))
    return outcomes


def debate_matches(state: DebateState, by: RatingKey) -> list[Match]:
    """Every pairwise match of one debate (see the module docstring for the rules)."""
    players = state.active_agents()
    matches: list[Match] = []
    for source, winner_id in debate_outcomes(state):
        if winner_id is None:
            matches += [
                Match(state.id, source, rating_key(a, by), rating_key(b, by), DRAW)
                for i, a in enumerate(players)
                for b in players[i + 1 :]
                if rating_key(a, by) != rating_key(b, by)
            ]
            continue
        winner = next((p for p in players if p.id == winner_id), None)
        if winner is None:
            continue
        matches += [
            Match(state.id, source, rating_key(winner, by), rating_key(other, by), WIN)
            for other in players
            if rating_key(other, by) != rating_key(winner, by)
        ]
    return matches


def compute_ratings(
    debates: Iterable[DebateState],
    by: RatingKey,
    *,
    k: float = K_FACTOR,
    initial: float = INITIAL_RATING,
) -> Leaderboard:
    """The leaderboard of ``debates`` (any order: they are sorted by creation time here)."""
    entries: dict[str, RatingEntry] = {}
    rated = judged = 0
    for state in sorted(debates, key=lambda s: (_utc(s.created_at), s.id)):
        judged += bool(debate_outcomes(state))
        matches = debate_matches(state, by)
        if not matches:
            continue
        rated += 1
        _name_players(entries, state, by, initial)
        before = {key: entry.rating for key, entry in entries.items()}
        for match in matches:
            change = k * (match.score - expected_score(before[match.first], before[match.second]))
            entries[match.first].rating += change
            entries[match.second].rating -= change
            _count(entries[match.first], match.score)
            _count(entries[match.second], 1.0 - match.score)
    ranked = sorted(entries.values(), key=lambda e: (-e.rating, -e.matches, e.key))
    return Leaderboard(by=by, entries=ranked, debates=rated, judged=judged)


def _name_players(entries: dict[str, RatingEntry], state: DebateState, by: RatingKey, initial: float) -> None:
    """Add the debate's players not seen before; an agent's shown name follows its latest debate."""
    for player in state.active_agents():
        key = rating_key(player, by)
        entry = entries.setdefault(key, RatingEntry(key=key, name=key, rating=initial))
        if by == "agent":
            entry.name = player.name


def _count(entry: RatingEntry, score: float) -> None:
    if score == WIN:
        entry.wins += 1
    elif score == DRAW:
        entry.draws += 1
    else:
        entry.losses += 1


def _utc(moment: datetime) -> datetime:
    """``moment`` comparable with any other: a naive time is taken to be UTC (as the store does)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
