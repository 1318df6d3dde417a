"""The evaluator configuration: its shape, defaults, and errors that name the offending field."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dialectic.core.errors import EXIT_CONFIG_ERROR, ConfigError
from dialectic.eval.config import DEFAULT_EVAL_TEMPERATURE, load_eval_config


def _agent(**fields: Any) -> dict[str, Any]:
    return {"id": "e1", "name": "Evaluator 1", "model": "gpt-4o-mini", "provider": "openai", **fields}


def test_a_valid_config_loads_with_camel_case_fields(tmp_path: Path, write_config: Callable[..., Path]) -> None:
    path = write_config(
        [
            _agent(systemPromptPath="prompts/system.md", userPromptPath="prompts/user.md.j2", timeout=30000),
            _agent(id="e2", name="Evaluator 2", provider="Anthropic", enabled=False),
        ],
        maxConcurrency=2,
    )
    loaded = load_eval_config(path)
    first, second = loaded.config.agents
    assert first.system_prompt_path == "prompts/system.md"
    assert first.user_prompt_path == "prompts/user.md.j2"
    assert first.timeout == 30000
    assert first.temperature == DEFAULT_EVAL_TEMPERATURE
    assert second.provider == "anthropic" and not second.enabled
    assert [a.id for a in loaded.config.evaluators()] == ["e1"]
    assert loaded.config.max_concurrency == 2
    assert loaded.directory == tmp_path.absolute()


def test_an_evaluator_maps_onto_the_provider_pool_agent_config(write_config: Callable[..., Path]) -> None:
    loaded = load_eval_config(write_config([_agent(timeout=5000, baseUrl="http://127.0.0.1:1/v1")]))
    agent = loaded.config.agents[0].agent_config()
    assert (agent.id, agent.provider, agent.model, agent.timeout) == ("e1", "openai", "gpt-4o-mini", 5000)
    assert agent.base_url == "http://127.0.0.1:1/v1"


@pytest.mark.parametrize(
    ("agents", "expected"),
    [
        ([{"id": "e1", "name": "E", "provider": "openai"}], "agents[0].model: Field required"),
        ([_agent(), _agent(id="e2", timeout=0)], "agents[1].timeout: Input should be greater than or equal to 1"),
        ([_agent(provider="acme")], "agents[0].provider: unknown provider 'acme'"),
        ([_agent(enabled="sometimes")], "agents[0].enabled: Input should be a valid boolean"),
        ([_agent(), _agent()], "agents: duplicate evaluator id 'e1'"),
        ([], "agents: List should have at least 1 item"),
    ],
)
def test_invalid_fields_are_named_by_their_path(
    write_config: Callable[..., Path], agents: list[dict[str, Any]], expected: str
) -> None:
    path = write_config(agents)
    with pytest.raises(ConfigError) as caught:
        load_eval_config(path)
    assert expected in caught.value.message
    assert str(path) in caught.value.message
    assert caught.value.exit_code == EXIT_CONFIG_ERROR


def test_the_agents_list_is_required(tmp_path: Path) -> None:
    path = tmp_path / "eval.json"
    path.write_text(json.dumps({"evaluators": []}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"agents: Field required"):
        load_eval_config(path)


def test_no_enabled_evaluator_is_a_config_error(write_config: Callable[..., Path]) -> None:
    with pytest.raises(ConfigError, match="no enabled evaluator"):
        load_eval_config(write_config([_agent(enabled=False)]))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"agents": [', "invalid JSON"),
        ("[1, 2]", "must hold an object"),
    ],
)
def test_unparseable_files_are_config_errors(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "eval.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=expected):
        load_eval_config(path)


def test_a_missing_file_or_a_directory_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_eval_config(tmp_path / "nope.json")
    with pytest.raises(ConfigError, match="is a directory"):
        load_eval_config(tmp_path)
