"""Team selection (``debate.team``): pick ``size`` agents of a pool by rating and calibration, keeping the
team diverse. Pure: the ratings and calibration come in as :class:`Candidate` values (gathered from the
store by :mod:`dialectic.engine.team_step`), the choice goes out with its reasons.

**Score.** Each pool agent's score is

``rating - deviation + CALIBRATION_WEIGHT * n / (n + CALIBRATION_PRIOR) * (0.25 - brier) - penalty``

* ``rating - deviation``: the conservative ELO rating: an agent rated over few games is trusted less
  (an unrated one: 1500 - 350);
* the calibration bonus: a Brier score below a coin's 0.25 adds, above it takes away, weighed by how many
  stated confidences ``n`` it rests on (half at ``CALIBRATION_PRIOR``); no confidences, no bonus;
* the diversity penalty: :data:`SAME_MODEL_PENALTY` for each agent already picked on the same
  ``provider/model``, :data:`SAME_ROLE_PENALTY` for each in the same role.

**Pick.** Greedy: the best score joins the team, the others' penalties are counted anew against the
team so far, and so on until ``size``. Ties go to the higher score before the penalty, then to the
earlier agent in the pool, so the same pool and store always give the same team.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dialectic.core.config import AgentConfig
from dialectic.core.domain import RatedAs, TeamMember

CALIBRATION_WEIGHT = 400.0
"""Points a perfect forecaster (Brier 0) gains over a coin at full weight: 400 × 0.25 = 100."""
CALIBRATION_PRIOR = 10
"""Stated confidences at which calibration counts half its weight."""
COIN_BRIER = 0.25
SAME_MODEL_PENALTY = 100.0
SAME_ROLE_PENALTY = 50.0


@dataclass(frozen=True)
class Candidate:
    """A pool agent with what the store says of it."""

    agent: AgentConfig
    rating: float
    deviation: float
    games: int = 0
    rated_as: RatedAs = "unrated"
    brier: float | None = None
    confidences: int = 0
    calibrated_as: RatedAs = "unrated"
    """Whose stated confidences the Brier score is over: the agent's own, or its model's."""

    @property
    def model_key(self) -> str:
        return f"{self.agent.provider}/{self.agent.model}"


@dataclass(frozen=True)
class TeamPick:
    members: list[TeamMember]
    """Picked, in pick order."""
    passed_over: list[TeamMember]
    """The rest, best score first."""


def calibration_bonus(brier: float | None, confidences: int) -> float:
    """What calibration adds to (or takes from) a score (see the module docstring)."""
    if brier is None or confidences <= 0:
        return 0.0
    return CALIBRATION_WEIGHT * confidences / (confidences + CALIBRATION_PRIOR) * (COIN_BRIER - brier)


def base_score(candidate: Candidate) -> float:
    """The score before the diversity penalty."""
    return candidate.rating - candidate.deviation + calibration_bonus(candidate.brier, candidate.confidences)


def diversity_penalty(candidate: Candidate, team: Sequence[Candidate]) -> float:
    same_model = sum(member.model_key == candidate.model_key for member in team)
    same_role = sum(member.agent.role == candidate.agent.role for member in team)
    return SAME_MODEL_PENALTY * same_model + SAME_ROLE_PENALTY * same_role


def pick_team(candidates: Sequence[Candidate], size: int) -> TeamPick:
    """The ``size`` best agents of ``candidates`` by the greedy rule of the module docstring."""
    if not 1 <= size <= len(candidates):
        raise ValueError(f"cannot pick {size} of {len(candidates)} agents")
    order = {id(candidate): index for index, candidate in enumerate(candidates)}
    left = list(candidates)
    team: list[Candidate] = []
    members: list[TeamMember] = []

    def rank(candidate: Candidate) -> tuple[float, float, int]:
        base = base_score(candidate)
        return (-(base - diversity_penalty(candidate, team)), -base, order[id(candidate)])

    while len(team) < size:
        best = min(left, key=rank)
        members.append(member_of(best, team))
        team.append(best)
        left.remove(best)
    passed_over = [member_of(candidate, team) for candidate in sorted(left, key=rank)]
    return TeamPick(members=members, passed_over=passed_over)


def member_of(candidate: Candidate, team: Sequence[Candidate]) -> TeamMember:
    """``candidate`` scored against ``team`` (the agents picked before it), with its reasons."""
    agent = candidate.agent
    penalty = diversity_penalty(candidate, team)
    score = base_score(candidate) - penalty
    return TeamMember(
        agent_id=agent.id,
        name=agent.name,
        role=agent.role,
        model=candidate.model_key,
        score=round(score, 1),
        rating=round(candidate.rating, 1),
        deviation=round(candidate.deviation, 1),
        games=candidate.games,
        rated_as=candidate.rated_as,
        brier=round(candidate.brier, 4) if candidate.brier is not None else None,
        confidences=candidate.confidences,
        reasons=reasons(candidate, team, score),
    )


def reasons(candidate: Candidate, team: Sequence[Candidate], score: float) -> list[str]:
    """Why ``candidate`` scored ``score`` against ``team``, one phrase per part of the score."""
    return [
        f"score {score:.0f}",
        rating_reason(candidate),
        calibration_reason(candidate),
        *diversity_reasons(candidate, team),
    ]


def rating_reason(candidate: Candidate) -> str:
    rating = f"{candidate.rating:.0f} ± {candidate.deviation:.0f}"
    games = f"{candidate.games} rated game{'s' if candidate.games != 1 else ''}"
    if candidate.rated_as == "agent":
        return f"rating {rating} over {games}"
    if candidate.rated_as == "model":
        return f"its model's rating {rating} over {games} (the agent itself has none)"
    return f"unrated: {rating}"


def calibration_reason(candidate: Candidate) -> str:
    if candidate.brier is None or candidate.confidences <= 0:
        return "no stated confidences to calibrate"
    count = f"{candidate.confidences} stated confidence{'s' if candidate.confidences != 1 else ''}"
    bonus = calibration_bonus(candidate.brier, candidate.confidences)
    whose = " (its model's)" if candidate.calibrated_as == "model" else ""
    return f"Brier {candidate.brier:.2f} over {count}{whose} ({bonus:+.0f})"


def diversity_reasons(candidate: Candidate, team: Sequence[Candidate]) -> list[str]:
    same_model = sum(member.model_key == candidate.model_key for member in team)
    same_role = sum(member.agent.role == candidate.agent.role for member in team)
    model = (
        f"model {candidate.model_key} already on the team (-{SAME_MODEL_PENALTY * same_model:.0f})"
        if same_model
        else f"adds model {candidate.model_key}"
    )
    role = (
        f"role {candidate.agent.role} already on the team (-{SAME_ROLE_PENALTY * same_role:.0f})"
        if same_role
        else f"adds role {candidate.agent.role}"
    )
    return [model, role]
