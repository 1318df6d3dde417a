"""An agent's ``apiKeyEnv`` must be set, even when it names its own ``baseUrl``."""

from __future__ import annotations

import pytest

from dialectic.core.config import AgentConfig
from dialectic.core.errors import EXIT_CONFIG_ERROR, MissingApiKeyError
from dialectic.llm.registry import resolve_settings

BASE_URL = "http://127.0.0.1:9/v1"


def agent(**fields: str) -> AgentConfig:
    return AgentConfig(id="a", name="A", role="architect", **fields)


def test_a_named_key_variable_that_is_unset_is_an_error_naming_it() -> None:
    with pytest.raises(MissingApiKeyError, match="MY_GATEWAY_KEY") as info:
        resolve_settings(agent(baseUrl=BASE_URL, apiKeyEnv="MY_GATEWAY_KEY"), env={})
    assert info.value.exit_code == EXIT_CONFIG_ERROR


def test_a_named_key_variable_that_is_set_is_used() -> None:
    settings = resolve_settings(agent(baseUrl=BASE_URL, apiKeyEnv="MY_GATEWAY_KEY"), env={"MY_GATEWAY_KEY": "k"})
    assert settings.api_key == "k" and settings.base_url == BASE_URL


def test_a_base_url_without_api_key_env_needs_no_key() -> None:
    settings = resolve_settings(agent(baseUrl=BASE_URL), env={})
    assert settings.api_key is None and settings.base_url == BASE_URL


def test_the_provider_default_key_is_still_required_without_a_base_url() -> None:
    with pytest.raises(MissingApiKeyError, match="OPENAI_API_KEY"):
        resolve_settings(agent(), env={})
