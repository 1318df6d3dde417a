"""Team selection through the installed command: ``dialectic debate --pool POOL.json --team N`` picks the
agents, saves the choice with its reasons, reports it, and the leaderboard's ratings and calibration
move with every finished debate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from dialectic.testing.fake_server import FakeLLMServer
from tests.e2e.test_debate_flow import saved_id

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

POOL = [
    ("alpha", "architect", "model-one"),
    ("bravo", "architect", "model-one"),
    ("charlie", "security", "model-two"),
    ("delta", "security", "model-two"),
    ("echo", "kiss", "model-three"),
    ("foxtrot", "performance", "model-one"),
]


def write_pool(workspace: Workspace, server: FakeLLMServer | None, name: str = "pool.json") -> Path:
    endpoint = {"baseUrl": server.openai_base_url} if server is not None else {}
    agents = [
        {"id": f"agent-{who}", "name": who.title(), "role": role, "provider": "openai", "model": model, **endpoint}
        for who, role, model in POOL
    ]
    path = workspace.root / name
    path.write_text(json.dumps({"agents": agents}, indent=2), encoding="utf-8")
    return path


def debate_with_team(workspace: Workspace, server: FakeLLMServer, *flags: str) -> tuple[str, str]:
    """The debate's id and its whole output (stdout and stderr)."""
    config = workspace.write_config(server, format="vote")
    pool = write_pool(workspace, server)
    result = workspace.run("debate", "Design a cache", "-c", str(config), "--pool", pool.name, "--team", "3", *flags)
    assert result.returncode == 0, result.stderr
    return saved_id(result.stderr), result.stdout + result.stderr


def calibration(workspace: Workspace) -> dict[str, tuple[float | None, int]]:
    result = workspace.run("leaderboard", "--by", "agent", "--format", "json")
    assert result.returncode == 0, result.stderr
    rows: list[dict[str, Any]] = json.loads(result.stdout)["ratings"]
    return {row["key"]: (row["brier"], row["forecasts"]) for row in rows}


def test_a_team_of_three_is_picked_from_six_saved_with_its_reasons_and_reported(
    workspace: Workspace, server: FakeLLMServer
) -> None:
    debate_id, output = debate_with_team(workspace, server, "--verbose")
    assert "team: picked Alpha (openai/model-one, score 1150), Charlie" in output
    assert "Team: 3 picked from the pool pool.json (0 debate(s) rated)" in output  # --verbose: with the reasons
    assert "  Echo (openai/model-three, kiss): score 1150; unrated: 1500 ± 350;" in output
    exported = workspace.export(debate_id)
    team = exported["team"]
    assert team["pool"] == "pool.json" and team["size"] == 3 and team["debates"] == 0
    picked = [member["agentId"] for member in team["members"]]
    assert picked == ["agent-alpha", "agent-charlie", "agent-echo"]  # unrated alike: diversity, then pool order
    assert [agent["id"] for agent in exported["agents"]] == picked
    assert len(team["passedOver"]) == 3
    for member in team["members"]:
        assert member["reasons"][:3] == ["score 1150", "unrated: 1500 ± 350", "no stated confidences to calibrate"]
        assert member["reasons"][3].startswith("adds model openai/model-")
    assert "team" not in exported["config"]["debate"]

    report = workspace.run("report", debate_id)
    assert report.returncode == 0, report.stderr
    assert "## Team" in report.stdout and "Picked 3 of the 6 agents of the pool `pool.json`" in report.stdout
    assert "- **Charlie** (`agent-charlie`, openai/model-two, security): score 1150;" in report.stdout
    shown = workspace.run("show", debate_id)
    assert "Team     picked from the 6 agents of the pool pool.json" in shown.stdout


def test_ratings_and_calibration_update_after_each_debate(workspace: Workspace, server: FakeLLMServer) -> None:
    assert workspace.run("leaderboard", "--format", "json").returncode == 0
    first, _ = debate_with_team(workspace, server)
    after_one = calibration(workspace)
    voters = [key for key, (brier, count) in after_one.items() if count]
    assert voters and all(after_one[key][1] == 1 and after_one[key][0] is not None for key in voters)

    table = workspace.run("leaderboard", "--by", "agent")
    assert table.returncode == 0, table.stderr
    assert "Brier" in table.stdout and "Forecasts" in table.stdout

    second, _ = debate_with_team(workspace, server)
    after_two = calibration(workspace)
    assert any(after_two[key][1] == 2 for key in voters)  # the same agents voted again: one forecast more each
    team = workspace.export(second)["team"]
    assert team["debates"] == 1
    scored = [*team["members"], *team["passedOver"]]
    assert any(m["ratedAs"] == "agent" and m["games"] > 0 for m in scored)
    assert any(reason.startswith("Brier ") for m in scored for reason in m["reasons"])
    assert first != second


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--pool", "absent.json", "--team", "3"], 4, "error: pool file not found: absent.json"),
        (["--pool", "broken.json", "--team", "3"], 4, "error: invalid JSON in pool file broken.json at line 1"),
        (["--pool", "pool.json", "--team", "0"], 2, "error: --team 0: a team has at least 2 agents"),
        (["--pool", "pool.json", "--team", "7"], 2, "error: --team 7: the pool pool.json has only 6 enabled agent(s)"),
        (["--team", "3"], 2, "error: --team N picks the agents from a pool: give --pool POOL.json too"),
        (["--pool", "pool.json"], 2, "error: --pool POOL.json needs --team N"),
    ],
)
def test_bad_team_input_is_a_one_line_error_before_anything_is_sent(
    workspace: Workspace, server: FakeLLMServer, args: list[str], code: int, message: str
) -> None:
    config = workspace.write_config(server)
    write_pool(workspace, server)
    (workspace.root / "broken.json").write_text("[{", encoding="utf-8")
    result = workspace.run("debate", "Design a cache", "-c", str(config), *args)
    assert result.returncode == code, result.stderr
    assert result.stderr.splitlines()[-1].startswith(message)
    assert "Traceback" not in result.stderr
    assert server.requests == [] and workspace.debate_ids() == []


def test_the_config_file_picks_the_team_too(workspace: Workspace, server: FakeLLMServer) -> None:
    write_pool(workspace, server)
    config = workspace.write_config(server, format="vote", team={"pool": "pool.json", "size": 2})
    result = workspace.run("debate", "Design a cache", "-c", str(config))
    assert result.returncode == 0, result.stderr
    team = workspace.export(saved_id(result.stderr))["team"]
    assert [m["agentId"] for m in team["members"]] == ["agent-alpha", "agent-charlie"]
    too_big = workspace.write_config(server, name="big.json", team={"pool": "pool.json", "size": 9})
    refused = workspace.run("debate", "Design a cache", "-c", str(too_big))
    assert refused.returncode == 4
    assert refused.stderr.splitlines()[-1].startswith("error: debate.team.size: 9 is more than the 6 enabled agent(s)")
