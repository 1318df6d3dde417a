"""Which provider runs when nothing is configured, the limits local agents get, and a local debate's size."""

from __future__ import annotations

import pytest

from dialectic.core.config import AgentConfig, SystemConfig
from dialectic.core.errors import ConfigError
from dialectic.loading.config import (
    LOCAL_AGENT_MAX_TOKENS,
    LOCAL_JUDGE_MAX_TOKENS,
    LOCAL_MAX_READ_CHARS,
    SIZED_LOCAL_AGENT_MAX_TOKENS,
    SIZED_LOCAL_JUDGE_MAX_TOKENS,
    SIZED_LOCAL_ROLES,
    SIZED_LOCAL_ROUNDS,
    apply_overrides,
    choose_default_provider,
    size_local_debate,
    with_local_limits,
    with_local_panel,
)


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


def test_local_agents_read_less_through_tools_unless_configured() -> None:
    """The default per-contribution read cap (~12k tokens) would not fit the local model's 8k window."""
    config, _ = apply_overrides(SystemConfig(), provider="local", model="qwen2.5-0.5b")
    assert with_local_limits(config).debate.context.max_read_chars == LOCAL_MAX_READ_CHARS
    chosen = config.debate.model_copy(
        update={"context": config.debate.context.model_copy(update={"max_read_chars": 30_000})}
    )
    assert with_local_limits(config.model_copy(update={"debate": chosen})).debate.context.max_read_chars == 30_000
    assert with_local_limits(SystemConfig()).debate.context.max_read_chars is None  # remote agents: the default


def _local(config: SystemConfig, **overrides: object) -> SystemConfig:
    resolved, _ = apply_overrides(config, provider="local", **overrides)  # type: ignore[arg-type]
    return resolved


def test_a_local_debate_without_config_is_sized_to_minutes() -> None:
    sized, note = size_local_debate(_local(SystemConfig()), rounds_given=False, agents_given=False)
    assert [a.role for a in sized.agents] == list(SIZED_LOCAL_ROLES)
    assert sized.debate.rounds == SIZED_LOCAL_ROUNDS == 1
    assert {a.max_tokens for a in sized.agents} == {SIZED_LOCAL_AGENT_MAX_TOKENS}
    assert sized.judge.max_tokens == SIZED_LOCAL_JUDGE_MAX_TOKENS
    assert note == (
        "sized for the local model (no config file): 2 agents (architect, kiss) × 1 round, "
        f"turns of at most {SIZED_LOCAL_AGENT_MAX_TOKENS} tokens; --agents, --rounds or a config file change this"
    )
    assert "\n" not in note


def test_flags_keep_what_they_chose() -> None:
    chosen = _local(SystemConfig(), rounds=2, roles="performance,kiss,architect")
    sized, note = size_local_debate(chosen, rounds_given=True, agents_given=True)
    assert [a.role for a in sized.agents] == ["architect", "performance", "kiss"]
    assert sized.debate.rounds == 2
    assert note is not None and "3 agents (architect, performance, kiss) × 2 rounds" in note
    one = _local(SystemConfig(), roles="performance")
    sized, _ = size_local_debate(one, rounds_given=False, agents_given=True)
    assert [a.role for a in sized.agents] == ["performance"] and sized.debate.rounds == 1


def test_without_the_preferred_roles_the_first_two_agents_stay() -> None:
    agents = [AgentConfig(id=f"a-{role}", name=role, role=role) for role in ("security", "testing", "performance")]
    sized, _ = size_local_debate(_local(SystemConfig(agents=agents)), rounds_given=False, agents_given=False)
    assert [a.role for a in sized.agents] == ["security", "testing"]


def test_a_configured_turn_length_is_kept() -> None:
    config = _local(SystemConfig())
    own = config.model_copy(update={"judge": config.judge.model_copy(update={"max_tokens": 99})})
    sized, _ = size_local_debate(own, rounds_given=False, agents_given=False)
    assert sized.judge.max_tokens == 99


def test_a_debate_not_wholly_on_the_local_model_is_not_sized() -> None:
    config = SystemConfig()
    assert size_local_debate(config, rounds_given=False, agents_given=False) == (config, None)
    mixed = _local(SystemConfig())
    mixed = mixed.model_copy(update={"judge": mixed.judge.model_copy(update={"provider": "openai"})})
    assert size_local_debate(mixed, rounds_given=False, agents_given=False) == (mixed, None)


def test_with_the_larger_model_installed_the_panel_mixes_both_and_the_judge_runs_on_it() -> None:
    sized, _ = size_local_debate(_local(SystemConfig()), rounds_given=False, agents_given=False)
    panel, note = with_local_panel(sized, larger="qwen2.5-1.5b")
    assert [(a.role, a.model) for a in panel.participants()] == [
        ("architect", "qwen2.5-0.5b"),
        ("kiss", "qwen2.5-1.5b"),
    ]
    assert panel.judge.model == "qwen2.5-1.5b"
    assert note == (
        "a panel of two embedded models (both installed): architect on qwen2.5-0.5b, kiss on qwen2.5-1.5b; "
        "the judge on qwen2.5-1.5b; --model or a config file change this"
    )


def test_no_panel_without_the_larger_model_or_for_a_chosen_model_or_one_agent() -> None:
    sized, _ = size_local_debate(_local(SystemConfig()), rounds_given=False, agents_given=False)
    assert with_local_panel(sized, larger=None) == (sized, None)
    chosen = _local(SystemConfig(), model="qwen2.5-1.5b")
    assert with_local_panel(chosen, larger="qwen2.5-1.5b") == (chosen, None)
    one, _ = size_local_debate(_local(SystemConfig(), roles="kiss"), rounds_given=False, agents_given=True)
    assert with_local_panel(one, larger="qwen2.5-1.5b") == (one, None)
    remote = SystemConfig()
    assert with_local_panel(remote, larger="qwen2.5-1.5b") == (remote, None)


def test_the_missing_config_warning_is_left_out_when_a_provider_is_given(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dialectic.loading.setup import Overrides, prepare_config

    monkeypatch.chdir(str(tmp_path))
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert prepare_config(None, Overrides(provider="scripted")).warnings == []
    unnamed = prepare_config(None, Overrides(rounds=1), check=False).warnings
    assert unnamed == ["no config file at debate-config.json; using the built-in defaults"]
