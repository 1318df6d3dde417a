"""Team selection against the store: the pool's ratings and calibration, the pick, the debate's agents.

:func:`choose_team` runs when a debate with ``debate.team`` starts, before it is created: the
debate's agents are the team, in the order picked, and the saved configuration holds them (not the
pool), so a resumed or replayed debate runs the same team. The choice and its reasons are saved
right after the debate is created (:class:`~dialectic.core.changes.TeamSelected`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TypeVar

from dialectic.core.config import AgentConfig, SystemConfig
from dialectic.core.domain import DebateState, TeamChoice
from dialectic.core.errors import ConfigError, StoreError
from dialectic.engine.team import Candidate, pick_team
from dialectic.reporting.calibration import Calibration, compute_calibration
from dialectic.reporting.ratings import (
    INITIAL_RATING,
    RATING_KEYS,
    RatingEntry,
    RatingKey,
    compute_ratings,
    rating_deviation,
)
from dialectic.store.base import DebateStore

log = logging.getLogger(__name__)
Entry = TypeVar("Entry")


def completed_debates(store: DebateStore) -> list[DebateState]:
    """The store's completed debates (one that cannot be read is skipped, with a log line)."""
    debates: list[DebateState] = []
    for listing in store.list(status="completed"):
        try:
            debates.append(store.load(listing.id))
        except StoreError as exc:
            log.warning("debate %s left out of the team's ratings: %s", listing.id, exc)
    return debates


def candidates(pool: Sequence[AgentConfig], debates: Sequence[DebateState]) -> list[Candidate]:
    """Each pool agent with its rating and calibration: its own (by agent id) where it has any, else its
    model's (``provider/model``), else the starting rating with the widest deviation and no calibration."""
    ratings = {by: {e.key: e for e in compute_ratings(debates, by).entries} for by in RATING_KEYS}
    calibration = {by: compute_calibration(debates, by) for by in RATING_KEYS}
    found: list[Candidate] = []
    for agent in pool:
        keys: dict[RatingKey, str] = {"agent": agent.id, "model": f"{agent.provider}/{agent.model}"}
        rated = _first_counted([(by, ratings[by].get(keys[by])) for by in ("agent", "model")], _matches)
        calibrated = _first_counted([(by, calibration[by].get(keys[by])) for by in ("agent", "model")], _forecasts)
        entry = rated[1] if rated is not None else None
        forecasts = calibrated[1] if calibrated is not None else None
        found.append(
            Candidate(
                agent=agent,
                rating=entry.rating if entry is not None else INITIAL_RATING,
                deviation=rating_deviation(entry.matches if entry is not None else 0),
                games=entry.matches if entry is not None else 0,
                rated_as=rated[0] if rated is not None else "unrated",
                brier=forecasts.brier if forecasts is not None else None,
                confidences=forecasts.forecasts if forecasts is not None else 0,
                calibrated_as=calibrated[0] if calibrated is not None else "unrated",
            )
        )
    return found


def _matches(entry: RatingEntry) -> int:
    return entry.matches


def _forecasts(entry: Calibration) -> int:
    return entry.forecasts


def _first_counted(
    options: list[tuple[RatingKey, Entry | None]], count: Callable[[Entry], int]
) -> tuple[RatingKey, Entry] | None:
    """The first of ``options`` (the agent's own, then its model's) that rests on anything (``count`` > 0)."""
    for by, entry in options:
        if entry is not None and count(entry) > 0:
            return by, entry
    return None


def choose_team(config: SystemConfig, store: DebateStore) -> tuple[SystemConfig, TeamChoice]:
    """``config`` with its agents the team picked from ``debate.team``'s pool (and ``debate.team`` cleared),
    and the choice with its reasons. ``ConfigError`` when the pool was never read or is too small."""
    team = config.debate.team
    if team is None:
        raise ValueError("choose_team needs debate.team")
    pool = team.pool_agents()
    if not pool:
        raise ConfigError(
            f"debate.team.pool: the pool {team.pool or ''} was not read; load the configuration with "
            "dialectic.load_config or Debate.from_config (or give the pool inline as debate.team.agents)"
        )
    if team.size > len(pool):
        raise ConfigError(f"debate.team.size: {team.size} is more than the pool's {len(pool)} agent(s)")
    debates = completed_debates(store)
    picked = pick_team(candidates(pool, debates), team.size)
    by_id = {agent.id: agent for agent in pool}
    agents = [by_id[member.agent_id] for member in picked.members]
    chosen = config.model_copy(update={"agents": agents, "debate": config.debate.model_copy(update={"team": None})})
    choice = TeamChoice(
        pool=team.pool or "(inline)",
        size=team.size,
        members=picked.members,
        passed_over=picked.passed_over,
        debates=len(debates),
    )
    return chosen, choice


def team_notice(choice: TeamChoice) -> str:
    """The choice in a line, for the progress output."""
    picked = ", ".join(f"{m.name} ({m.model}, score {m.score:.0f})" for m in choice.members)
    pool = len(choice.members) + len(choice.passed_over)
    return (
        f"team: picked {picked} of the pool's {pool} agents by rating and calibration over "
        f"{choice.debates} completed debate(s); the report's Team section gives the reasons"
    )
