"""The team's pool file and settings (:mod:`dialectic.loading.pool`, ``debate.team``): both file shapes, and
every mistake a one-line error of the right kind (``ConfigError``: exit 4; a bad flag: exit 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from dialectic.core.config import SystemConfig, TeamSettings
from dialectic.core.errors import ConfigError, InvalidArgumentsError
from dialectic.loading.pool import parse_pool, read_pool, with_team
from dialectic.loading.setup import Overrides, prepare_config


def pool_agents(count: int = 4) -> list[dict[str, Any]]:
    return [
        {"id": f"agent-{i}", "name": f"Agent {i}", "role": "architect", "provider": "openai", "model": f"m{i}"}
        for i in range(count)
    ]


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("wrap", [False, True])
def test_a_pool_is_a_list_of_agents_or_the_same_under_agents(wrap: bool) -> None:
    data = {"agents": pool_agents(3)} if wrap else pool_agents(3)
    agents = parse_pool("pool.json", json.dumps(data))
    assert [a.id for a in agents] == ["agent-0", "agent-1", "agent-2"]
    assert agents[1].model == "m1"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[{", "invalid JSON in pool file pool.json at line 1, column 3"),
        ('{"judge": {}}', 'pool file pool.json must hold a list of agents, or {"agents": [...]}'),
        ("[]", "pool file pool.json must hold a list of agents"),
        ('[{"id": "a", "name": "A"}]', "invalid pool file pool.json: agents[0].role: Field required"),
        (
            json.dumps([{**pool_agents(1)[0], "temperature": 9}]),
            "invalid pool file pool.json: agents[0].temperature: Input should be less than or equal to 2",
        ),
        (json.dumps(pool_agents(1) * 2), "invalid pool file pool.json: duplicate agent id 'agent-0'"),
        (
            json.dumps([{**pool_agents(1)[0], "provider": "nowhere"}]),
            "invalid pool file pool.json: agents[0].provider: unknown provider 'nowhere'",
        ),
    ],
)
def test_a_bad_pool_is_a_one_line_config_error(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_pool("pool.json", text)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_a_missing_pool_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="pool file not found: "):
        read_pool(tmp_path / "absent.json")


def test_the_flags_set_the_team_from_the_working_directory(tmp_path: Path) -> None:
    pool = write(tmp_path / "pool.json", pool_agents(4))
    config = with_team(SystemConfig(), tmp_path / "elsewhere", pool=pool, size=3)
    team = config.debate.team
    assert team is not None and team.size == 3 and team.pool == str(pool) and len(team.agents) == 4


def test_the_configs_pool_is_relative_to_the_config_file_and_the_flag_changes_its_size(tmp_path: Path) -> None:
    write(tmp_path / "pool.json", pool_agents(4))
    config = SystemConfig.model_validate({"debate": {"team": {"pool": "pool.json", "size": 2}}})
    read = with_team(config, tmp_path).debate.team
    assert read is not None and read.agents[3].id == "agent-3" and read.size == 2
    resized = with_team(config, tmp_path, size=4).debate.team
    assert resized is not None and resized.size == 4


@pytest.mark.parametrize(
    ("pool", "size", "error", "message"),
    [
        (True, 0, InvalidArgumentsError, "--team 0: a team has at least 2 agents"),
        (True, 1, InvalidArgumentsError, "--team 1: a team has at least 2 agents"),
        (True, 5, InvalidArgumentsError, "--team 5: the pool "),
        (False, 3, InvalidArgumentsError, "--team N picks the agents from a pool: give --pool POOL.json too"),
        (True, None, InvalidArgumentsError, "--pool POOL.json needs --team N"),
    ],
)
def test_bad_team_flags(tmp_path: Path, pool: bool, size: int | None, error: type[Exception], message: str) -> None:
    path = write(tmp_path / "pool.json", pool_agents(4)) if pool else None
    with pytest.raises(error) as caught:
        with_team(SystemConfig(), tmp_path, pool=path, size=size)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)
    assert type(caught.value) is error


def test_a_disabled_pool_agent_is_never_counted(tmp_path: Path) -> None:
    agents = pool_agents(3)
    agents[2]["enabled"] = False
    path = write(tmp_path / "pool.json", agents)
    with pytest.raises(InvalidArgumentsError, match="has only 2 enabled agent"):
        with_team(SystemConfig(), tmp_path, pool=path, size=3)
    team = with_team(SystemConfig(), tmp_path, pool=path, size=2).debate.team
    assert team is not None and [a.id for a in team.pool_agents()] == ["agent-0", "agent-1"]


def test_the_config_file_sets_the_team_with_its_errors(tmp_path: Path) -> None:
    write(tmp_path / "pool.json", pool_agents(3))
    good = write(tmp_path / "good.json", {"debate": {"team": {"pool": "pool.json", "size": 2}}})
    prepared = prepare_config(good, check=False)
    assert prepared.config.debate.team is not None and len(prepared.config.debate.team.agents) == 3
    assert not any("no agents" in warning for warning in prepared.warnings)  # the pool gives them
    too_many = write(tmp_path / "many.json", {"debate": {"team": {"pool": "pool.json", "size": 4}}})
    with pytest.raises(ConfigError, match=r"^debate.team.size: 4 is more than the 3 enabled agent\(s\) of the pool"):
        prepare_config(too_many, check=False)
    too_few = write(tmp_path / "few.json", {"debate": {"team": {"pool": "pool.json", "size": 1}}})
    with pytest.raises(ConfigError, match=r"debate.team.size: Input should be greater than or equal to 2"):
        prepare_config(too_few, check=False)
    missing = write(tmp_path / "missing.json", {"debate": {"team": {"pool": "nowhere.json", "size": 2}}})
    with pytest.raises(ConfigError, match="pool file not found: "):
        prepare_config(missing, check=False)


def test_the_flags_reach_the_configuration_through_overrides(tmp_path: Path) -> None:
    pool = write(tmp_path / "pool.json", pool_agents(3))
    prepared = prepare_config(None, Overrides(provider="openai", team_pool=pool, team_size=2), check=False)
    assert prepared.config.debate.team is not None and prepared.config.debate.team.size == 2


def test_inline_settings_are_checked_by_the_model() -> None:
    with pytest.raises(ValidationError, match="a team needs a pool"):
        TeamSettings(size=2)
    with pytest.raises(ValidationError, match="size 3 is more than the pool's 2 enabled agent"):
        TeamSettings.model_validate({"size": 3, "agents": pool_agents(2)})


def test_the_pools_keys_are_checked_not_the_unused_agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agents = [{**agent, "provider": "anthropic", "model": "claude-x"} for agent in pool_agents(3)]
    write(tmp_path / "pool.json", agents)
    judge = {"id": "judge", "name": "Judge", "role": "generalist", "provider": "anthropic", "model": "claude-x"}
    config = write(tmp_path / "c.json", {"judge": judge, "debate": {"team": {"pool": "pool.json", "size": 2}}})
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        prepare_config(config)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    prepared = prepare_config(config)  # the default agents the pool replaces need no OpenAI key
    assert [a.provider for a in prepared.config.eligible()] == ["anthropic"] * 3


def test_an_inline_pool_is_checked_like_a_file(tmp_path: Path) -> None:
    inline = [*pool_agents(2), {**pool_agents(3)[2], "provider": "nowhere"}]
    config = write(tmp_path / "c.json", {"debate": {"team": {"agents": inline, "size": 2}}})
    with pytest.raises(ConfigError, match=r"^debate.team.agents\[2\].provider: unknown provider 'nowhere'"):
        prepare_config(config, check=False)
    good = write(tmp_path / "good.json", {"debate": {"team": {"agents": pool_agents(3), "size": 2}}})
    team = prepare_config(good, check=False).config.debate.team
    assert team is not None and team.pool is None and len(team.pool_agents()) == 3


def test_a_misspelt_key_in_a_pool_is_an_error_unless_lenient() -> None:
    agents = pool_agents(2)
    agents[1]["temprature"] = 0.9
    with pytest.raises(ConfigError) as info:
        parse_pool("pool.json", json.dumps(agents))
    assert info.value.message.startswith(
        "invalid pool file pool.json: `agents[1].temprature`: unknown key — did you mean `agents[1].temperature`?"
    )
    assert len(parse_pool("pool.json", json.dumps(agents), lenient=True)) == 2
