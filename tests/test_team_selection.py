"""Team selection's pure rule (:mod:`dialectic.engine.team`): conservative rating, calibration bonus,
diversity penalty, greedy pick, deterministic ties, and the reasons each pick carries."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dialectic.core.config import AgentConfig
from dialectic.engine.team import (
    CALIBRATION_PRIOR,
    SAME_MODEL_PENALTY,
    SAME_ROLE_PENALTY,
    Candidate,
    base_score,
    calibration_bonus,
    pick_team,
)
from dialectic.reporting.ratings import INITIAL_RATING, rating_deviation


def agent(name: str, *, model: str = "m1", role: str = "architect", provider: str = "openai") -> AgentConfig:
    return AgentConfig(id=f"agent-{name}", name=name.title(), role=role, provider=provider, model=model)


def rated(
    name: str,
    rating: float,
    games: int,
    *,
    model: str = "m1",
    role: str = "architect",
    brier: float | None = None,
    confidences: int = 0,
) -> Candidate:
    return Candidate(
        agent=agent(name, model=model, role=role),
        rating=rating,
        deviation=rating_deviation(games),
        games=games,
        rated_as="agent" if games else "unrated",
        brier=brier,
        confidences=confidences,
    )


def ids(candidates: list[Candidate], size: int) -> list[str]:
    return [member.agent_id for member in pick_team(candidates, size).members]


def test_deviation_shrinks_with_games_to_a_floor() -> None:
    assert rating_deviation(0) == 350
    assert rating_deviation(3) == 175
    assert rating_deviation(10_000) == 50
    assert [rating_deviation(n) for n in range(60)] == sorted((rating_deviation(n) for n in range(60)), reverse=True)


def test_an_agent_rated_over_many_games_beats_an_unrated_one_of_the_same_rating() -> None:
    veteran = rated("veteran", INITIAL_RATING, 30, model="m1", role="a")
    newcomer = rated("newcomer", INITIAL_RATING, 0, model="m2", role="b")
    assert base_score(veteran) > base_score(newcomer)
    assert ids([newcomer, veteran], 1) == ["agent-veteran"]


def test_a_high_rating_over_few_games_is_trusted_less() -> None:
    lucky = rated("lucky", 1600, 1, model="m1", role="a")  # 1600 - 247 = 1353
    steady = rated("steady", 1550, 40, model="m2", role="b")  # 1550 - 54.7 = 1495
    assert ids([lucky, steady], 1) == ["agent-steady"]


def test_calibration_adds_below_a_coin_and_takes_above_it() -> None:
    assert calibration_bonus(None, 0) == 0
    assert calibration_bonus(0.1, 0) == 0
    assert calibration_bonus(0.25, 50) == 0
    assert calibration_bonus(0.0, CALIBRATION_PRIOR) == pytest.approx(50.0)  # half of 400 × 0.25
    assert calibration_bonus(0.5, CALIBRATION_PRIOR) == pytest.approx(-50.0)
    assert calibration_bonus(0.1, 100) > calibration_bonus(0.1, 10) > 0


def test_calibration_decides_between_equal_ratings() -> None:
    sure_and_wrong = rated("sure", 1500, 10, model="m1", role="a", brier=0.6, confidences=20)
    well_calibrated = rated("careful", 1500, 10, model="m2", role="b", brier=0.1, confidences=20)
    assert ids([sure_and_wrong, well_calibrated], 1) == ["agent-careful"]


def test_the_diversity_penalty_brings_in_another_model_and_role() -> None:
    pool = [
        rated("first", 1600, 40, model="m1", role="architect"),
        rated("twin", 1590, 40, model="m1", role="architect"),  # -150 once first is in
        rated("other", 1520, 40, model="m2", role="security"),
    ]
    assert ids(pool, 2) == ["agent-first", "agent-other"]
    team = pick_team(pool, 2)
    assert [m.agent_id for m in team.passed_over] == ["agent-twin"]
    assert team.passed_over[0].score == pytest.approx(
        base_score(pool[1]) - SAME_MODEL_PENALTY - SAME_ROLE_PENALTY, abs=0.1
    )


def test_a_strong_agent_on_a_taken_model_still_wins_by_enough() -> None:
    pool = [
        rated("first", 1700, 40, model="m1", role="a"),
        rated("twin", 1690, 40, model="m1", role="b"),  # 1690 - 100 = 1590 > 1520
        rated("other", 1520, 40, model="m2", role="c"),
    ]
    assert ids(pool, 2) == ["agent-first", "agent-twin"]


def test_ties_go_to_the_earlier_agent_of_the_pool() -> None:
    pool = [rated(name, 1500, 0, model=f"m-{name}", role=name) for name in ("c", "a", "b")]
    assert ids(pool, 2) == ["agent-c", "agent-a"]


def test_reasons_say_rating_calibration_and_what_the_pick_adds() -> None:
    pool = [
        Candidate(agent(name="lead", model="gpt"), 1532, 80, games=12, rated_as="agent", brier=0.18, confidences=40),
        Candidate(agent(name="copy", model="gpt"), 1500, 350),
        Candidate(agent(name="kin", model="other"), 1510, 300, games=2, rated_as="model"),
    ]
    members = pick_team(pool, 3).members
    lead = members[0]
    assert lead.agent_id == "agent-lead" and lead.rating == 1532 and lead.deviation == 80 and lead.games == 12
    assert lead.reasons[1] == "rating 1532 ± 80 over 12 rated games"
    assert lead.reasons[2].startswith("Brier 0.18 over 40 stated confidences (+")
    assert lead.reasons[3:] == ["adds model openai/gpt", "adds role architect"]
    kin, copy = members[1], members[2]
    assert kin.reasons[1] == "its model's rating 1510 ± 300 over 2 rated games (the agent itself has none)"
    assert kin.reasons[2] == "no stated confidences to calibrate"
    assert copy.reasons[1] == "unrated: 1500 ± 350"
    assert "model openai/gpt already on the team (-100)" in copy.reasons
    assert "role architect already on the team (-100)" in copy.reasons  # two architects before it
    assert copy.score == pytest.approx(1500 - 350 - SAME_MODEL_PENALTY - 2 * SAME_ROLE_PENALTY)


@pytest.mark.parametrize("size", [0, 4])
def test_a_size_outside_the_pool_is_refused(size: int) -> None:
    pool = [rated(name, 1500, 0) for name in "abc"]
    with pytest.raises(ValueError, match=f"cannot pick {size} of 3"):
        pick_team(pool, size)


candidate_lists = st.lists(
    st.tuples(
        st.floats(1200, 1800),
        st.integers(0, 60),
        st.sampled_from(["m1", "m2", "m3"]),
        st.sampled_from(["architect", "security", "kiss"]),
        st.one_of(st.none(), st.floats(0, 1)),
        st.integers(0, 50),
    ),
    min_size=2,
    max_size=8,
)


@given(candidate_lists, st.data())
def test_any_pool_gives_a_team_of_its_size_from_its_agents_the_same_way_every_time(
    rows: list[tuple[float, int, str, str, float | None, int]], data: st.DataObject
) -> None:
    pool = [
        Candidate(
            agent(f"n{i}", model=model, role=role),
            rating,
            rating_deviation(games),
            games=games,
            rated_as="agent" if games else "unrated",
            brier=brier,
            confidences=count if brier is not None else 0,
        )
        for i, (rating, games, model, role, brier, count) in enumerate(rows)
    ]
    size = data.draw(st.integers(1, len(pool)))
    first, again = pick_team(pool, size), pick_team(list(pool), size)
    picked = [m.agent_id for m in first.members]
    assert picked == [m.agent_id for m in again.members]
    assert len(picked) == size == len(set(picked))
    assert sorted(picked + [m.agent_id for m in first.passed_over]) == sorted(c.agent.id for c in pool)
    scores = [m.score for m in first.passed_over]
    assert scores == sorted(scores, reverse=True)
    # the first pick has no one to differ from: it is the best before any penalty
    assert first.members[0].score == pytest.approx(max(base_score(c) for c in pool), abs=0.05)
    assert all(m.reasons and m.reasons[0].startswith("score ") for m in first.members)
