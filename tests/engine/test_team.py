"""``debate.team`` in the engine: the team is picked from the pool before the debate is created, saved
with its reasons (:class:`~dialectic.core.changes.TeamSelected`), reported, and the next pick reads the
ratings and calibration the finished debate added."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from dialectic.core.changes import TeamSelected
from dialectic.core.config import SystemConfig
from dialectic.core.errors import ConfigError
from dialectic.reporting.calibration import compute_calibration
from dialectic.reporting.ratings import compute_ratings
from dialectic.reporting.report import render_report
from dialectic.testing.harness import Harness, scripted_judge

POOL = [
    ("alpha", "architect", "m1"),
    ("bravo", "architect", "m1"),
    ("charlie", "security", "m2"),
    ("delta", "security", "m2"),
    ("echo", "kiss", "m3"),
    ("foxtrot", "performance", "m1"),
]


def team_config(size: int = 3, **debate: Any) -> SystemConfig:
    agents = [
        {"id": f"agent-{name}", "name": name.title(), "role": role, "provider": "scripted", "model": model}
        for name, role, model in POOL
    ]
    return SystemConfig.model_validate(
        {
            "agents": [agents[0]],  # not used: the team is picked from the pool
            "judge": {"id": "judge", "name": "Judge", "role": "generalist", "provider": "scripted", "model": "j"},
            "debate": {"rounds": 1, "format": "vote", "team": {"size": size, "agents": agents}, **debate},
        }
    )


def test_the_team_is_picked_saved_and_reported(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge())
    state = h.start(team_config())
    assert state.status == "completed"
    team = state.team
    assert team is not None and team.size == 3 and team.debates == 0 and team.pool == "(inline)"
    # an empty store rates no one: pool order decides between equals, and diversity spreads models and roles
    assert [m.agent_id for m in team.members] == ["agent-alpha", "agent-charlie", "agent-echo"]
    assert [a.id for a in state.agents] == [m.agent_id for m in team.members]
    assert {m.model for m in team.members} == {"scripted/m1", "scripted/m2", "scripted/m3"}
    assert len(team.passed_over) == 3
    assert all("unrated: 1500 ± 350" in m.reasons for m in team.members)
    saved = h.store.load(state.id)
    assert saved.team == team
    assert saved.config["debate"].get("team") is None  # the saved configuration holds the team, not the pool
    assert [a["id"] for a in saved.config["agents"]] == [m.agent_id for m in team.members]
    report = render_report(saved)
    assert "## Team" in report and "Picked 3 of the 6 agents of the pool" in report
    assert "- **Alpha** (`agent-alpha`, scripted/m1, architect): score 1150; unrated: 1500 ± 350" in report
    assert "Not picked:" in report
    notices = [e.message for e in h.events if getattr(e, "message", "").startswith("team: picked")]
    assert notices and "Alpha (scripted/m1, score 1150)" in notices[0]


def test_the_next_pick_reads_the_ratings_and_calibration_the_debate_added(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge())
    first = h.start(team_config())
    assert first.verdict is not None and first.verdict.winner_id is not None and first.vote is not None
    calibrated = compute_calibration([first], "agent")
    assert calibrated and all(c.forecasts == 1 for c in calibrated.values())  # each voter stated 70

    second = h.start(team_config())
    team = second.team
    assert team is not None and team.debates == 1
    scored = {m.agent_id: m for m in [*team.members, *team.passed_over]}
    winner = scored[first.verdict.winner_id]
    entry = next(e for e in compute_ratings([first], "agent").entries if e.key == winner.agent_id)
    assert entry.matches >= 2 and entry.rating > 1500  # the verdict's win over both others, and the vote's
    assert (winner.rated_as, winner.games, winner.rating) == ("agent", entry.matches, round(entry.rating, 1))
    assert f"rating {entry.rating:.0f} ± {entry.deviation:.0f} over {entry.matches} rated games" in winner.reasons
    voters = [scored[agent_id] for agent_id in calibrated]
    assert all(v.confidences == 1 and v.brier == pytest.approx(calibrated[v.agent_id].brier) for v in voters)
    assert all(any(r.startswith("Brier ") for r in v.reasons) for v in voters)
    unrated_alike = [m for m in scored.values() if m.model == "scripted/m1" and m.agent_id not in calibrated]
    assert all(m.rated_as == "model" for m in unrated_alike)  # an agent with no games goes by its model's


def test_the_change_is_saved_once_right_after_creation(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge())
    state = h.start(team_config(size=2))
    kinds = [type(change).__name__ for change in h.store.changes(state.id)]
    assert kinds[:2] == ["DebateCreated", TeamSelected.__name__]
    assert kinds.count(TeamSelected.__name__) == 1


def test_a_pool_that_was_never_read_is_a_config_error(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge())
    config = team_config()
    team = config.debate.team
    assert team is not None
    unread = config.debate.model_copy(update={"team": team.model_copy(update={"pool": "pool.json", "agents": []})})
    with pytest.raises(ConfigError, match="the pool pool.json was not read"):
        h.start(config.model_copy(update={"debate": unread}))
    assert h.store.list() == []
