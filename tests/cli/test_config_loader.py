"""Loading JSON/YAML/TOML configuration files, their error messages, and CLI overrides."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dialectic.config import SystemConfig
from dialectic.config_loader import apply_overrides, field_path, load_config
from dialectic.errors import EXIT_CONFIG_ERROR, EXIT_INVALID_ARGS, ConfigError, InvalidArgumentsError

AGENTS: list[dict[str, Any]] = [
    {"id": "a1", "name": "System Architect", "role": "architect", "temperature": 0.4},
    {"id": "a2", "name": "Security Engineer", "role": "security", "provider": "openrouter"},
]
JUDGE: dict[str, Any] = {"id": "j", "name": "Judge", "role": "generalist", "temperature": 0.2}
DEBATE = {"rounds": 2, "summarization": {"threshold": 100, "maxLength": 50}}

YAML_TEXT = """
agents:
  - id: a1
    name: System Architect
    role: architect
    temperature: 0.4
  - id: a2
    name: Security Engineer
    role: security
    provider: openrouter
judge:
  id: j
  name: Judge
  role: generalist
  temperature: 0.2
debate:
  rounds: 2
  summarization:
    threshold: 100
    maxLength: 50
"""

TOML_TEXT = """
[[agents]]
id = "a1"
name = "System Architect"
role = "architect"
temperature = 0.4

[[agents]]
id = "a2"
name = "Security Engineer"
role = "security"
provider = "openrouter"

[judge]
id = "j"
name = "Judge"
role = "generalist"
temperature = 0.2

[debate]
rounds = 2

[debate.summarization]
threshold = 100
maxLength = 50
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("config.json", json.dumps({"agents": AGENTS, "judge": JUDGE, "debate": DEBATE})),
        ("config.yaml", YAML_TEXT),
        ("config.yml", YAML_TEXT),
        ("config.toml", TOML_TEXT),
    ],
)
def test_every_format_loads_the_same_config(tmp_path: Path, name: str, text: str) -> None:
    loaded = load_config(write(tmp_path, name, text), explicit=True)
    config = loaded.config
    assert loaded.warnings == []
    assert loaded.path == tmp_path / name
    assert loaded.directory == tmp_path
    assert [a.id for a in config.agents] == ["a1", "a2"]
    assert config.agents[0].temperature == 0.4
    assert config.agents[1].provider == "openrouter"
    assert config.judge.temperature == 0.2
    assert config.debate.rounds == 2
    assert config.debate.summarization.max_length == 50


@pytest.mark.parametrize("explicit", [True, False])
def test_missing_file_gives_defaults_and_a_warning(tmp_path: Path, explicit: bool) -> None:
    loaded = load_config(tmp_path / "debate-config.json", explicit=explicit)
    assert loaded.path is None
    assert loaded.config == SystemConfig()
    assert len(loaded.warnings) == 1
    assert "built-in defaults" in loaded.warnings[0]


def test_directory_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a directory"):
        load_config(tmp_path, explicit=True)


def test_missing_sections_are_filled_with_warnings(tmp_path: Path) -> None:
    loaded = load_config(write(tmp_path, "c.json", json.dumps({"agents": []})), explicit=True)
    assert [a.role for a in loaded.config.agents] == ["architect", "performance", "kiss"]
    assert loaded.config.judge.id == "judge-main"
    assert loaded.config.debate.rounds == 3
    joined = "\n".join(loaded.warnings)
    assert "no agents" in joined and "no judge" in joined and "no debate section" in joined


def test_only_judge_missing_warns_about_the_judge(tmp_path: Path) -> None:
    loaded = load_config(write(tmp_path, "c.json", json.dumps({"agents": AGENTS, "debate": DEBATE})), explicit=True)
    assert [a.id for a in loaded.config.agents] == ["a1", "a2"]
    assert len(loaded.warnings) == 1 and "judge" in loaded.warnings[0]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("c.json", '{\n  "agents": [\n    {"id": "a",}\n  ]\n}', "invalid JSON in .*c.json at line 3, column 16"),
        (
            "c.yaml",
            "agents:\n  - id: a\n    name: [unclosed\njudge: {}\n",
            r"invalid YAML in .*c.yaml at line \d+, column \d+",
        ),
        ("c.toml", "[judge\nid = 1\n", r"invalid TOML in .*c.toml: .*line 1"),
        ("c.json", "[1, 2]", "must hold an object"),
    ],
)
def test_malformed_files_name_the_file_and_position(tmp_path: Path, name: str, text: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected) as info:
        load_config(write(tmp_path, name, text), explicit=True)
    assert info.value.exit_code == EXIT_CONFIG_ERROR
    assert "\n" not in info.value.message


def test_validation_error_names_the_field_path_in_the_files_spelling(tmp_path: Path) -> None:
    agents = [dict(AGENTS[0]), {**AGENTS[1], "temperature": "hot"}]
    path = write(tmp_path, "c.json", json.dumps({"agents": agents, "judge": JUDGE, "debate": DEBATE}))
    with pytest.raises(ConfigError) as info:
        load_config(path, explicit=True)
    assert "agents[1].temperature: Input should be a valid number" in info.value.message
    assert "(and" not in info.value.message


def test_camel_case_field_paths_and_extra_errors_are_counted(tmp_path: Path) -> None:
    debate = {"rounds": 0, "summarization": {"maxLength": "long"}, "timeoutPerRound": -5}
    path = write(tmp_path, "c.json", json.dumps({"agents": AGENTS, "judge": JUDGE, "debate": debate}))
    with pytest.raises(ConfigError) as info:
        load_config(path, explicit=True)
    message = info.value.message
    assert "debate.rounds: Input should be greater than or equal to 1" in message
    assert message.endswith("(and 2 more)")


def test_unknown_provider_is_a_config_error(tmp_path: Path) -> None:
    agents = [{**AGENTS[0], "provider": "gemini"}]
    path = write(tmp_path, "c.json", json.dumps({"agents": agents, "judge": JUDGE, "debate": DEBATE}))
    known = r"\(known: anthropic, local, openai, openrouter, scripted\)"
    with pytest.raises(ConfigError, match=r"agents\[0\]\.provider: unknown provider 'gemini' " + known):
        load_config(path, explicit=True)


def test_unknown_role_is_a_warning_naming_the_known_roles(tmp_path: Path) -> None:
    agents = [{**AGENTS[0], "role": "Poet"}]
    loaded = load_config(
        write(tmp_path, "c.json", json.dumps({"agents": agents, "judge": JUDGE, "debate": DEBATE})), explicit=True
    )
    assert loaded.config.agents[0].role == "poet"
    assert len(loaded.warnings) == 1
    warning = loaded.warnings[0]
    assert "'poet'" in warning and "generalist" in warning
    assert "architect, datamodeling, generalist, kiss, performance, security, testing" in warning


def test_field_path_formats_indexes() -> None:
    assert field_path(("agents", 1, "summarization", "maxLength")) == "agents[1].summarization.maxLength"
    assert field_path(()) == ""


def config_with(*roles: str, enabled: tuple[bool, ...] | None = None) -> SystemConfig:
    flags = enabled or (True,) * len(roles)
    pairs = enumerate(zip(roles, flags, strict=True))
    agents = [{"id": f"a{i}", "name": f"Agent {i}", "role": r, "enabled": e} for i, (r, e) in pairs]
    return SystemConfig.model_validate({"agents": agents})


def test_overrides_filter_roles_and_set_rounds_provider_model() -> None:
    config, warnings = apply_overrides(
        config_with("architect", "security", "kiss"),
        rounds=5,
        roles="security, ARCHITECT",
        provider="Anthropic",
        model="claude-x",
    )
    assert warnings == []
    assert [a.role for a in config.agents] == ["architect", "security"]
    assert config.debate.rounds == 5
    assert {a.provider for a in [*config.agents, config.judge]} == {"anthropic"}
    assert {a.model for a in [*config.agents, config.judge]} == {"claude-x"}


def test_disabled_agents_are_dropped() -> None:
    config, _ = apply_overrides(config_with("architect", "kiss", enabled=(True, False)))
    assert [a.role for a in config.agents] == ["architect"]


def test_no_matching_role_falls_back_to_architect_and_performance() -> None:
    config, warnings = apply_overrides(config_with("kiss"), roles="security")
    assert [a.role for a in config.agents] == ["architect", "performance"]
    assert len(warnings) == 1 and "security" in warnings[0]


@pytest.mark.parametrize("rounds", [0, -1])
def test_rounds_below_one_are_invalid_arguments(rounds: int) -> None:
    with pytest.raises(InvalidArgumentsError, match="--rounds must be at least 1") as info:
        apply_overrides(SystemConfig(), rounds=rounds)
    assert info.value.exit_code == EXIT_INVALID_ARGS


def test_unknown_provider_override_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown provider 'gemini'"):
        apply_overrides(SystemConfig(), provider="gemini")


def test_empty_agents_option_is_invalid() -> None:
    with pytest.raises(InvalidArgumentsError):
        apply_overrides(SystemConfig(), roles=" , ")
