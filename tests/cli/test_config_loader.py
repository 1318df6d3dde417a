"""Loading JSON/YAML/TOML configuration files, their error messages, and CLI overrides."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dialectic.core.config import SystemConfig
from dialectic.core.errors import EXIT_CONFIG_ERROR, EXIT_INVALID_ARGS, ConfigError, InvalidArgumentsError
from dialectic.loading.config import apply_overrides, check_prompt_files, field_path, load_config

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


def test_missing_default_file_gives_defaults_and_a_warning(tmp_path: Path) -> None:
    loaded = load_config(tmp_path / "debate-config.json", explicit=False)
    assert loaded.path is None
    assert loaded.config == SystemConfig()
    assert len(loaded.warnings) == 1
    assert "built-in defaults" in loaded.warnings[0]


def test_missing_explicit_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found: .*typo.json") as info:
        load_config(tmp_path / "typo.json", explicit=True)
    assert info.value.exit_code == EXIT_CONFIG_ERROR


@pytest.mark.parametrize("explicit", [True, False])
def test_device_config_is_refused_unread(explicit: bool) -> None:
    with pytest.raises(ConfigError, match="/dev/zero is a device, not a regular file"):
        load_config(Path("/dev/zero"), explicit=explicit)


def test_oversize_config_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "big.json", json.dumps({"agents": AGENTS, "pad": "x" * (1024 * 1024)}))
    with pytest.raises(ConfigError, match="larger than 1 MB"):
        load_config(path, explicit=True)


TYPOS = {
    "agents": [{**AGENTS[0], "temprature": 0.3}, {**AGENTS[1], "api_key_env": "K", "colour": "red"}],
    "judge": JUDGE,
    "debate": {"round": 2, "summarization": {"maxLenght": 5}, "timeout_per_round": 1000},
    "rounds": 4,
}
TYPO_MESSAGES = [
    "`agents[0].temprature`: unknown key — did you mean `agents[0].temperature`?",
    "`agents[1].colour`: unknown key",
    "`debate.round`: unknown key — did you mean `debate.rounds`?",
    "`debate.summarization.maxLenght`: unknown key — did you mean `debate.summarization.maxLength`?",
    "`rounds`: unknown key — did you mean `debate.rounds`?",
]


def test_unknown_keys_are_one_error_naming_every_one_with_the_nearest_known_key(tmp_path: Path) -> None:
    path = write(tmp_path, "c.json", json.dumps(TYPOS))
    with pytest.raises(ConfigError) as info:
        load_config(path, explicit=True)
    assert info.value.exit_code == EXIT_CONFIG_ERROR
    assert info.value.message == (
        f"invalid configuration in {path}: {'; '.join(TYPO_MESSAGES)} (to take unknown keys as warnings instead, "
        'give --lenient or set "strict": false in the file; never under budget or limits)'
    )


@pytest.mark.parametrize("how", ["flag", "file"])
def test_lenient_loading_warns_about_unknown_keys_as_before(tmp_path: Path, how: str) -> None:
    data = {**TYPOS, "strict": False} if how == "file" else TYPOS
    loaded = load_config(write(tmp_path, "c.json", json.dumps(data)), explicit=True, lenient=how == "flag")
    messages = [w.split(": ", 1)[1] for w in loaded.warnings]
    assert messages == [message if "did you mean" in message else f"{message} (ignored)" for message in TYPO_MESSAGES]
    assert all(w.startswith(f"{tmp_path / 'c.json'}: ") for w in loaded.warnings)
    assert loaded.config.agents[1].api_key_env == "K"  # snake_case spelling is accepted, not warned about
    assert loaded.config.debate.timeout_per_round == 1000


@pytest.mark.parametrize(
    ("typo", "named"),
    [
        (
            {"debate": {"budget": {"maxCostUSD": 0.0001}}},
            "`debate.budget.maxCostUSD`: unknown key — did you mean `debate.budget.maxCostUsd`?",
        ),
        ({"limits": {"maxRound": 3}}, "`limits.maxRound`: unknown key — did you mean `limits.maxRounds`?"),
        ({"limit": {"maxRounds": 3}}, "`limit`: unknown key — did you mean `limits`?"),
        ({"debate": {"budgt": {"maxTokens": 5}}}, "`debate.budgt`: unknown key — did you mean `debate.budget`?"),
    ],
)
def test_a_misspelt_ceiling_is_an_error_even_when_lenient(tmp_path: Path, typo: dict[str, Any], named: str) -> None:
    """An ignored key under budget or limits would remove a cap: the debate would run, and spend, without it."""
    path = write(tmp_path, "c.json", json.dumps({"agents": AGENTS, "judge": JUDGE, **typo}))
    for lenient in (False, True):
        with pytest.raises(ConfigError) as info:
            load_config(path, explicit=True, lenient=lenient)
        assert info.value.message == f"invalid configuration in {path}: {named}"


def test_strict_must_be_a_boolean(tmp_path: Path) -> None:
    path = write(tmp_path, "c.json", json.dumps({"agents": AGENTS, "strict": "no"}))
    with pytest.raises(ConfigError, match=r"strict: must be true or false \(got 'no'\)"):
        load_config(path, explicit=True)


def test_a_config_file_cannot_allow_outside_prompts_itself(tmp_path: Path) -> None:
    data = {"agents": AGENTS, "judge": JUDGE, "debate": DEBATE, "allowOutsidePrompts": True}
    loaded = load_config(write(tmp_path, "c.json", json.dumps(data)), explicit=True)
    assert loaded.config.allow_outside_prompts is False
    assert len(loaded.warnings) == 1 and "--allow-outside-prompts" in loaded.warnings[0]


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
    known = r"\(known: anthropic, human, llamacpp, lmstudio, local, ollama, openai, openrouter, scripted, vllm\)"
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


def test_no_matching_role_is_invalid_arguments_naming_the_roles_available() -> None:
    with pytest.raises(InvalidArgumentsError, match=r"--agents nosuchrole: .*roles available: architect, kiss") as info:
        apply_overrides(config_with("kiss", "architect"), roles="nosuchrole")
    assert info.value.exit_code == EXIT_INVALID_ARGS


def test_a_role_matching_nothing_beside_one_that_matches_is_a_warning() -> None:
    config, warnings = apply_overrides(config_with("kiss", "architect"), roles="kiss,nosuchrole")
    assert [a.role for a in config.agents] == ["kiss"]
    assert len(warnings) == 1 and "nosuchrole" in warnings[0] and "architect, kiss" in warnings[0]


def test_every_agent_disabled_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="every agent .* is disabled") as info:
        apply_overrides(config_with("architect", "kiss", enabled=(False, False)))
    assert info.value.exit_code == EXIT_CONFIG_ERROR


def test_rounds_above_the_limit_name_the_limit_and_how_to_raise_it() -> None:
    with pytest.raises(InvalidArgumentsError, match=r"--rounds 1000000000 .* limit of 20 .* limits.maxRounds"):
        apply_overrides(SystemConfig(), rounds=1_000_000_000)
    raised = SystemConfig.model_validate({"limits": {"maxRounds": 50}})
    config, _ = apply_overrides(raised, rounds=50)
    assert config.debate.rounds == 50


def test_configured_rounds_above_the_limit_are_a_config_error() -> None:
    config = SystemConfig.model_validate({"debate": {"rounds": 21}})
    with pytest.raises(ConfigError, match=r"debate.rounds is 21, more than the limit of 20"):
        apply_overrides(config)
    config, _ = apply_overrides(config, rounds=3)  # --rounds within the limit wins over the file
    assert config.debate.rounds == 3


def test_agents_above_the_limit_are_a_config_error_unless_filtered_or_raised() -> None:
    many = config_with(*(["architect"] * 13))
    with pytest.raises(ConfigError, match=r"13 agents would take part, more than the limit of 12"):
        apply_overrides(many)
    raised = many.model_copy(update={"limits": many.limits.model_copy(update={"max_agents": 13})})
    config, _ = apply_overrides(raised)
    assert len(config.agents) == 13


def test_allow_outside_prompts_flag_is_kept_in_the_resolved_config() -> None:
    assert apply_overrides(SystemConfig())[0].allow_outside_prompts is False
    assert apply_overrides(SystemConfig(), allow_outside_prompts=True)[0].allow_outside_prompts is True


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


def with_prompt(path: str, *, allow: bool = False) -> SystemConfig:
    agent = {"id": "a1", "name": "A", "role": "architect", "systemPromptPath": path}
    return SystemConfig.model_validate({"agents": [agent], "allowOutsidePrompts": allow})


def test_prompt_files_inside_the_config_directory_are_accepted(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "a.md").write_text("You are A.", encoding="utf-8")
    check_prompt_files(with_prompt("prompts/a.md"), tmp_path)
    check_prompt_files(with_prompt("prompts/missing.md"), tmp_path)  # missing: a warning later, as in the seed


@pytest.mark.parametrize("path", ["../outside/secret.txt", "/etc/hostname", "link-out.md"])
def test_prompt_files_outside_the_config_directory_are_refused(tmp_path: Path, path: str) -> None:
    config_dir = tmp_path / "cfg"
    config_dir.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret", encoding="utf-8")
    (config_dir / "link-out.md").symlink_to(tmp_path / "outside" / "secret.txt")
    with pytest.raises(ConfigError, match=r"systemPromptPath .* is outside .*--allow-outside-prompts") as info:
        check_prompt_files(with_prompt(path), config_dir)
    assert info.value.exit_code == EXIT_CONFIG_ERROR
    check_prompt_files(with_prompt(path, allow=True), config_dir)


def test_device_and_oversize_prompt_files_are_refused_even_when_allowed(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="agent 'a1' systemPromptPath /dev/zero is a device, not a regular file"):
        check_prompt_files(with_prompt("/dev/zero", allow=True), tmp_path)
    (tmp_path / "big.md").write_bytes(b"x" * (256 * 1024 + 1))
    with pytest.raises(ConfigError, match="is larger than 256 KB"):
        check_prompt_files(with_prompt("big.md"), tmp_path)


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        (
            {"debate_format": "critque-refine"},
            "--format critque-refine: unknown format — did you mean `critique-refine`?",
        ),
        ({"problem_kind": "reasonning"}, "--problem-kind reasonning: unknown kind — did you mean `reasoning`?"),
        ({"provider": "opneai"}, "unknown provider 'opneai' given to --provider — did you mean `openai`? (known: "),
    ],
)
def test_a_misspelt_name_gets_the_nearest_one(overrides: dict[str, Any], words: str) -> None:
    with pytest.raises((InvalidArgumentsError, ConfigError)) as info:
        apply_overrides(SystemConfig(), **overrides)
    assert info.value.message.startswith(words), info.value.message
