"""Which provider runs when nothing is configured, and the limits local agents get."""

from __future__ import annotations

import pytest

from dialectic.config import SystemConfig
from dialectic.config_loader import (
    LOCAL_AGENT_MAX_TOKENS,
    LOCAL_JUDGE_MAX_TOKENS,
    apply_overrides,
    choose_default_provider,
    with_local_limits,
)
from dialectic.errors import ConfigError


def test_openai_key_wins() -> None:
    choice = choose_default_provider({"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}, local_available=True)
    assert (choice.provider, choice.model) == ("openai", "gpt-4o-mini")
    assert "OPENAI_API_KEY" in choice.reason


def test_anthropic_key_next() -> None:
    choice = choose_default_provider({"ANTHROPIC_API_KEY": "k"}, local_available=True)
    assert choice.provider == "anthropic" and "ANTHROPIC_API_KEY" in choice.reason


def test_local_model_without_keys() -> None:
    choice = choose_default_provider({}, local_available=True)
    assert (choice.provider, choice.model) == ("local", "qwen2.5-0.5b")
    assert "no API key" in choice.reason


def test_nothing_available_lists_the_three_ways() -> None:
    with pytest.raises(ConfigError) as raised:
        choose_default_provider({"OPENAI_API_KEY": ""}, local_available=False)
    message = raised.value.message
    assert "OPENAI_API_KEY" in message and "ANTHROPIC_API_KEY" in message and ".[local]" in message
    assert raised.value.exit_code == 4


def test_local_agents_get_a_token_limit_unless_configured() -> None:
    config, _ = apply_overrides(SystemConfig(), provider="local", model="qwen2.5-0.5b")
    limited = with_local_limits(config)
    assert {a.max_tokens for a in limited.agents} == {LOCAL_AGENT_MAX_TOKENS}
    assert limited.judge.max_tokens == LOCAL_JUDGE_MAX_TOKENS
    own = config.model_copy(update={"judge": config.judge.model_copy(update={"max_tokens": 99})})
    assert with_local_limits(own).judge.max_tokens == 99
    untouched = with_local_limits(SystemConfig())
    assert all(a.max_tokens is None for a in untouched.agents)
