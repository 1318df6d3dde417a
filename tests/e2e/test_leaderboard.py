"""``dialectic leaderboard`` on a store filled with constructed debates that already hold verdicts and votes.

The ratings below are worked out by hand with E(Ra, Rb) = 1 / (1 + 10^((Rb − Ra) / 400)), K = 32,
from 1500; see tests/test_ratings.py for the single steps.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from dialectic.core.changes import DebateCreated
from dialectic.core.domain import DebateState, DebateStatus, Participant, Verdict, Vote, VoteOutcome
from dialectic.engine.voting import count_votes
from dialectic.store import SqliteStore

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

AGENTS = {
    "a": Participant(id="agent-a", name="Alpha", role="architect", provider="openai", model="gpt-a"),
    "b": Participant(id="agent-b", name="Beta", role="security", provider="anthropic", model="claude-b"),
    "c": Participant(id="agent-c", name="Gamma", role="kiss", provider="openai", model="gpt-c"),
}


def stored_debate(
    number: int,
    created: str,
    players: str,
    *,
    status: DebateStatus = "completed",
    verdict: str | None = None,
    vote: VoteOutcome | None = None,
) -> DebateState:
    return DebateState(
        id=f"deb-2025-{number:04d}",
        problem=f"Problem {number}",
        status=status,
        agents=[AGENTS[p] for p in players],
        verdict=Verdict(summary="...", winner_id=AGENTS[verdict].id) if verdict else None,
        vote=vote,
        created_at=datetime.fromisoformat(created).replace(tzinfo=UTC),
    )


def three_way_tie() -> VoteOutcome:
    votes = [
        Vote(voter_id="agent-a", choice_id="agent-b"),
        Vote(voter_id="agent-b", choice_id="agent-c"),
        Vote(voter_id="agent-c", choice_id="agent-a"),
    ]
    return count_votes(votes, "majority", candidates=["agent-a", "agent-b", "agent-c"])


def gamma_wins_the_vote() -> VoteOutcome:
    votes = [Vote(voter_id="agent-a", choice_id="agent-c"), Vote(voter_id="agent-c", choice_id="agent-c")]
    return count_votes(votes, "majority", candidates=["agent-a", "agent-c"])


DEBATES = [
    stored_debate(1, "2025-01-10T10:00", "ab", verdict="a"),
    stored_debate(2, "2025-02-10T10:00", "abc", vote=three_way_tie()),
    stored_debate(3, "2025-03-01T10:00", "ab", verdict="b", status="failed"),  # not completed: not rated
    stored_debate(4, "2025-03-05T10:00", "ab", verdict="b", status="running"),  # not completed: not rated
    stored_debate(5, "2025-03-15T10:00", "ac", verdict="c", vote=gamma_wins_the_vote()),
]
# debate 1: Alpha beats Beta from 1500: a 1516, b 1484.
# debate 2: the vote tied, a draw in every pair, all from (a 1516, b 1484, c 1500):
#   a-b: a expects 0.545922 → a −1.4695, b +1.4695;  a-c: a expects 0.523010 → a −0.7363, c +0.7363;
#   b-c: b expects 0.476990 → b +0.7363, c −0.7363.  a 1513.7942, b 1486.2058, c 1500.
# debate 5: the verdict and the vote both name Gamma: two wins over Alpha, both from (c 1500, a 1513.7942):
#   c expects 1 / (1 + 10^(13.7942/400)) = 0.480159 → +32 × 0.519841 = +16.6349 twice.
#   c 1533.2698, a 1480.5244.
# deviation: 350 / sqrt(1 + matches): 156.5 (4), 175.0 (3), 142.9 (5). No vote states a confidence: no calibration.
NOT_CALIBRATED = {"brier": None, "forecasts": 0}
EXPECTED_BY_MODEL = [
    {
        "rank": 1,
        "key": "openai/gpt-c",
        "rating": 1533.3,
        "deviation": 156.5,
        "matches": 4,
        "wins": 2,
        "draws": 2,
        "losses": 0,
        **NOT_CALIBRATED,
    },
    {
        "rank": 2,
        "key": "anthropic/claude-b",
        "rating": 1486.2,
        "deviation": 175.0,
        "matches": 3,
        "wins": 0,
        "draws": 2,
        "losses": 1,
        **NOT_CALIBRATED,
    },
    {
        "rank": 3,
        "key": "openai/gpt-a",
        "rating": 1480.5,
        "deviation": 142.9,
        "matches": 5,
        "wins": 1,
        "draws": 2,
        "losses": 2,
        **NOT_CALIBRATED,
    },
]


def fill(path: Path, debates: list[DebateState]) -> None:
    with SqliteStore(path) as store:
        for state in debates:
            store.append(state.id, DebateCreated(state=state))


def run_json(workspace: Workspace, *args: str) -> dict[str, Any]:
    result = workspace.run("leaderboard", "--format", "json", *args)
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_json_by_model(workspace: Workspace) -> None:
    fill(workspace.home / "debates.sqlite3", DEBATES)
    data = run_json(workspace)
    assert {k: data[k] for k in ("by", "since", "debates", "initialRating", "kFactor")} == {
        "by": "model",
        "since": None,
        "debates": 3,
        "initialRating": 1500,
        "kFactor": 32,
    }
    assert [{k: v for k, v in row.items() if k != "name"} for row in data["ratings"]] == EXPECTED_BY_MODEL
    assert [row["name"] for row in data["ratings"]] == ["openai/gpt-c", "anthropic/claude-b", "openai/gpt-a"]


def test_json_by_agent_keys_on_the_agent_id(workspace: Workspace) -> None:
    fill(workspace.home / "debates.sqlite3", DEBATES)
    data = run_json(workspace, "--by", "agent")
    assert data["by"] == "agent"
    assert [(row["key"], row["name"], row["rating"]) for row in data["ratings"]] == [
        ("agent-c", "Gamma", 1533.3),
        ("agent-b", "Beta", 1486.2),
        ("agent-a", "Alpha", 1480.5),
    ]


def test_since_keeps_the_debates_created_from_that_date(workspace: Workspace) -> None:
    fill(workspace.home / "debates.sqlite3", DEBATES)
    data = run_json(workspace, "--since", "2025-02-01")
    # debates 2 and 5 only: the tie from 1500 changes nothing (3 draws); then Gamma beats Alpha twice,
    # both from 1500: +16 twice. c 1532, b 1500, a 1468.
    assert data["debates"] == 2
    assert data["since"].startswith("2025-02-01T00:00:00")
    assert [(row["key"], row["rating"], row["matches"]) for row in data["ratings"]] == [
        ("openai/gpt-c", 1532.0, 4),
        ("anthropic/claude-b", 1500.0, 2),
        ("openai/gpt-a", 1468.0, 4),
    ]
    with_zone = run_json(workspace, "--since", "2025-03-10T00:00:00+00:00")
    assert with_zone["debates"] == 1 and with_zone["since"] == "2025-03-10T00:00:00+00:00"


def test_table(workspace: Workspace) -> None:
    fill(workspace.home / "debates.sqlite3", DEBATES)
    result = workspace.run("leaderboard")
    assert result.returncode == 0, result.stderr
    assert "ELO by model from 3 debate(s) (start 1500, K 32)" in result.stdout
    rows = [line.split() for line in result.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert rows == [
        ["1", "openai/gpt-c", "1533", "157", "4", "2/2/0", "-", "0"],
        ["2", "anthropic/claude-b", "1486", "175", "3", "0/2/1", "-", "0"],
        ["3", "openai/gpt-a", "1481", "143", "5", "1/2/2", "-", "0"],
    ]
    by_agent = workspace.run("leaderboard", "--by", "agent")
    assert by_agent.returncode == 0, by_agent.stderr
    assert [line.split() for line in by_agent.stdout.splitlines() if line.strip()[:1].isdigit()] == [
        ["1", "Gamma", "(agent-c)", "1533", "157", "4", "2/2/0", "-", "0"],
        ["2", "Beta", "(agent-b)", "1486", "175", "3", "0/2/1", "-", "0"],
        ["3", "Alpha", "(agent-a)", "1481", "143", "5", "1/2/2", "-", "0"],
    ]


def test_a_store_without_rated_debates_says_so(workspace: Workspace) -> None:
    store_dir = workspace.root / "elsewhere"
    unrated = [stored_debate(1, "2025-01-10T10:00", "ab"), DEBATES[2]]  # no judgement; failed
    fill(store_dir / "debates.sqlite3", unrated)
    result = workspace.run("leaderboard", "--store", str(store_dir))
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert f"No completed debates with a verdict or a vote in {store_dir / 'debates.sqlite3'}" in result.stderr
    data = run_json(workspace, "--store", str(store_dir))
    assert (data["debates"], data["ratings"]) == (0, [])


def test_a_missing_store_is_not_created(workspace: Workspace) -> None:
    result = workspace.run("leaderboard")
    assert result.returncode == 0, result.stderr
    assert "No completed debates with a verdict or a vote in" in result.stderr
    assert not workspace.home.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "last week"], "--since takes an ISO date or date-time"),
        (["--since", "2025-13-01"], "(got '2025-13-01')"),
        (["--by", "provider"], "unknown --by 'provider' (known: model, agent)"),
        (["--format", "csv"], "unknown --format 'csv' (known: table, json)"),
    ],
)
def test_bad_flags(workspace: Workspace, args: list[str], message: str) -> None:
    result = workspace.run("leaderboard", *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert not workspace.home.exists()


def test_judged_debates_on_one_model_say_why_nothing_is_ranked_by_model(workspace: Workspace) -> None:
    store_dir = workspace.root / "one-model"
    same = [
        Participant(id="agent-x", name="Ex", role="architect", provider="local", model="qwen2.5-0.5b"),
        Participant(id="agent-y", name="Why", role="kiss", provider="local", model="qwen2.5-0.5b"),
    ]
    debate = DebateState(
        id="deb-2025-0100",
        problem="Problem 100",
        status="completed",
        agents=same,
        verdict=Verdict(summary="...", winner_id="agent-y"),
        created_at=datetime(2025, 4, 1, tzinfo=UTC),
    )
    fill(store_dir / "debates.sqlite3", [debate])
    by_model = workspace.run("leaderboard", "--store", str(store_dir))
    assert by_model.returncode == 0, by_model.stderr
    assert "1 completed debate(s) with a verdict or a vote" in by_model.stderr
    assert "no two models met" in by_model.stderr and "--by agent" in by_model.stderr
    by_agent = workspace.run("leaderboard", "--store", str(store_dir), "--by", "agent")
    assert [line.split()[:2] for line in by_agent.stdout.splitlines() if line.strip()[:1].isdigit()] == [
        ["1", "Why"],
        ["2", "Ex"],
    ]
