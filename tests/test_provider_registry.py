"""The provider registry: built-ins, entry-point plugins and register_provider(), and config validation on top."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from dialectic.core.config import AgentConfig, SystemConfig
from dialectic.core.errors import ConfigError, InvalidArgumentsError
from dialectic.llm import registry
from dialectic.llm.registry import (
    ENTRY_POINT_GROUP,
    ProviderPool,
    ProviderRegistry,
    ProviderSettings,
    ProviderSpec,
    known_providers,
    provider_spec,
    register_provider,
)
from dialectic.llm.scripted import ScriptedProvider
from dialectic.loading.config import apply_overrides, load_config

BUILTINS = {"anthropic", "human", "llamacpp", "lmstudio", "local", "ollama", "openai", "openrouter", "scripted", "vllm"}


def echo_factory(settings: ProviderSettings) -> ScriptedProvider:
    return ScriptedProvider(name=settings.provider)


ECHO = ProviderSpec("echo", echo_factory, "ECHO_API_KEY", default_model="echo-1")


def make_echo() -> ProviderSpec:
    """An entry point may name a callable that returns the spec."""
    return ProviderSpec("echo-fn", echo_factory, None, default_model="fn-1")


class FakeEntryPoint:
    def __init__(self, name: str, target: object) -> None:
        self.name = name
        self.value = f"fake_plugin:{name}"
        self._target = target
        self.loads = 0

    def load(self) -> object:
        self.loads += 1
        if isinstance(self._target, Exception):
            raise self._target
        return self._target


@pytest.fixture
def entry_points(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[FakeEntryPoint]]:
    """A fresh process-wide registry whose plugins are the returned (initially empty) list."""
    found: list[FakeEntryPoint] = []
    groups: list[str] = []

    def fake_entry_points(*, group: str) -> list[FakeEntryPoint]:
        groups.append(group)
        return list(found)

    monkeypatch.setattr(metadata, "entry_points", fake_entry_points)
    monkeypatch.setattr(registry, "_DEFAULT_REGISTRY", ProviderRegistry())
    yield found
    assert set(groups) <= {ENTRY_POINT_GROUP}


def write(tmp_path: Path, agents: list[dict[str, object]]) -> Path:
    path = tmp_path / "c.json"
    judge = {"id": "j", "name": "Judge", "role": "generalist"}
    path.write_text(json.dumps({"agents": agents, "judge": judge, "debate": {"rounds": 1}}), encoding="utf-8")
    return path


def test_builtins_are_known(entry_points: list[FakeEntryPoint]) -> None:
    assert set(known_providers()) == BUILTINS


def test_register_provider_adds_to_the_builtins(entry_points: list[FakeEntryPoint]) -> None:
    register_provider(ECHO)
    assert set(known_providers()) == BUILTINS | {"echo"}
    assert provider_spec("openai").api_key_env == "OPENAI_API_KEY"
    assert provider_spec("ECHO") is ECHO


def test_entry_points_are_loaded_lazily_once(entry_points: list[FakeEntryPoint]) -> None:
    spec_point, factory_point = FakeEntryPoint("echo", ECHO), FakeEntryPoint("echo-fn", make_echo)
    entry_points.extend([spec_point, factory_point])
    assert spec_point.loads == 0
    assert set(known_providers()) == BUILTINS | {"echo", "echo-fn"}
    provider_spec("echo-fn")
    provider_spec("openai")
    assert (spec_point.loads, factory_point.loads) == (1, 1)
    assert provider_spec("echo-fn").default_model == "fn-1"


def test_a_broken_plugin_is_named_in_the_unknown_provider_message(entry_points: list[FakeEntryPoint]) -> None:
    entry_points.extend([FakeEntryPoint("broken", ImportError("no module named x")), FakeEntryPoint("odd", 42)])
    assert set(known_providers()) == BUILTINS
    with pytest.raises(ConfigError) as raised:
        provider_spec("nope")
    message = raised.value.message
    assert message.startswith(
        "unknown provider 'nope' (known: anthropic, human, llamacpp, lmstudio, local, ollama, openai, openrouter, "
        "scripted, vllm;"
    )
    assert "broken (fake_plugin:broken): ImportError: no module named x" in message
    assert "odd (fake_plugin:odd): TypeError: expected a ProviderSpec, got int" in message


def test_a_plugin_provider_runs_through_the_pool(entry_points: list[FakeEntryPoint]) -> None:
    entry_points.append(FakeEntryPoint("echo", ECHO))
    agent = AgentConfig(id="a", name="A", role="architect", provider="echo", model="echo-1")
    pool = ProviderPool(env={"ECHO_API_KEY": "k"})
    provider = pool.get(agent)
    assert isinstance(provider, ScriptedProvider) and provider.name == "echo"
    assert pool.get(agent) is provider


def test_config_accepts_a_plugin_provider_and_fills_its_default_model(
    entry_points: list[FakeEntryPoint], tmp_path: Path
) -> None:
    entry_points.append(FakeEntryPoint("echo", ECHO))
    path = write(tmp_path, [{"id": "a", "name": "A", "role": "architect", "provider": "Echo"}])
    config = load_config(path, explicit=True).config
    assert (config.agents[0].provider, config.agents[0].model) == ("echo", "echo-1")
    assert (config.judge.provider, config.judge.model) == ("openai", "gpt-4o-mini")


def test_config_rejects_an_unknown_provider_naming_the_field_and_the_plugins(
    entry_points: list[FakeEntryPoint], tmp_path: Path
) -> None:
    entry_points.append(FakeEntryPoint("echo", ECHO))
    path = write(
        tmp_path,
        [{"id": "a", "name": "A", "role": "architect"}, {"id": "b", "name": "B", "role": "kiss", "provider": "gemini"}],
    )
    with pytest.raises(ConfigError) as raised:
        load_config(path, explicit=True)
    assert raised.value.exit_code == 4
    known = "(known: anthropic, echo, human, llamacpp"
    assert f"agents[1].provider: unknown provider 'gemini' {known}" in raised.value.message


def test_a_plugin_without_a_default_model_needs_one_named(entry_points: list[FakeEntryPoint], tmp_path: Path) -> None:
    register_provider(ProviderSpec("bare", echo_factory, None))
    path = write(tmp_path, [{"id": "a", "name": "A", "role": "architect", "provider": "bare"}])
    with pytest.raises(ConfigError, match=r"agents\[0\]\.model: provider 'bare' has no default model"):
        load_config(path, explicit=True)
    with pytest.raises(InvalidArgumentsError, match="give --model too"):
        apply_overrides(SystemConfig(), provider="bare")
    config, _ = apply_overrides(SystemConfig(), provider="bare", model="m1")
    assert {(a.provider, a.model) for a in config.agents} == {("bare", "m1")}


def test_provider_flag_accepts_plugins_and_rejects_unknown_names(entry_points: list[FakeEntryPoint]) -> None:
    entry_points.append(FakeEntryPoint("echo", ECHO))
    config, _ = apply_overrides(SystemConfig(), provider="echo")
    assert {(a.provider, a.model) for a in [*config.agents, config.judge]} == {("echo", "echo-1")}
    with pytest.raises(ConfigError, match=r"unknown provider 'gemini' given to --provider \(known: anthropic, echo"):
        apply_overrides(SystemConfig(), provider="gemini")


def test_prepare_builds_the_providers_and_preloads_each_kind_once(entry_points: list[FakeEntryPoint]) -> None:
    preloads: list[str] = []
    built: list[str] = []

    def factory(settings: ProviderSettings) -> ScriptedProvider:
        built.append(settings.provider)
        return ScriptedProvider(name=settings.provider)

    register_provider(ProviderSpec("warm", factory, None, preload=lambda: preloads.append("warm")))
    agents = [AgentConfig(id=f"a{n}", name="A", role="architect", provider="warm", model="m") for n in range(3)]
    pool = ProviderPool()
    pool.prepare(agents)
    assert preloads == ["warm"] and built == ["warm"]  # one endpoint: one instance, built now
    pool.get(agents[0])
    assert built == ["warm"]  # the debates then reuse it


@pytest.mark.parametrize(
    ("name", "url"),
    [
        ("llamacpp", "http://127.0.0.1:8080/v1"),
        ("ollama", "http://127.0.0.1:11434/v1"),
        ("vllm", "http://127.0.0.1:8000/v1"),
        ("lmstudio", "http://127.0.0.1:1234/v1"),
    ],
)
def test_server_presets_need_no_key_and_know_their_address(name: str, url: str) -> None:
    agent = AgentConfig(id="a", name="A", role="architect", provider=name, model="m")
    settings = registry.resolve_settings(agent, env={})
    assert (settings.base_url, settings.api_key, settings.api) == (url, None, "auto")
    keyed = registry.resolve_settings(agent, env={f"{name.upper()}_API_KEY": "secret"})
    assert keyed.api_key == "secret"  # an optional key is sent when set
    moved = AgentConfig(id="a", name="A", role="architect", provider=name, model="m", base_url="http://h:1/v1")
    assert registry.resolve_settings(moved, env={}).base_url == "http://h:1/v1"


def test_the_api_setting_reaches_the_provider_and_separates_pool_entries() -> None:
    chat = AgentConfig(id="a", name="A", role="architect", provider="llamacpp", api="chat")
    responses = AgentConfig(id="b", name="B", role="architect", provider="llamacpp", api="responses")
    pool = registry.ProviderPool(env={})
    first, second = pool.get(chat), pool.get(responses)
    assert first is not second
    assert getattr(first, "api", None) == "chat" and getattr(second, "api", None) == "responses"


def test_a_preset_without_a_model_points_at_dialectic_models(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    agents = [{"id": "a", "name": "A", "role": "architect", "provider": "ollama"}]
    path.write_text(json.dumps({"agents": agents, "judge": {**agents[0], "id": "j"}, "debate": {}}))
    with pytest.raises(ConfigError, match=r"`dialectic models --provider ollama`"):
        load_config(path, explicit=True)
    agents[0]["provider"] = "llamacpp"
    path.write_text(json.dumps({"agents": agents, "judge": {**agents[0], "id": "j"}, "debate": {}}))
    assert load_config(path, explicit=True).config.agents[0].model == "default"


def test_an_unknown_api_is_a_configuration_error() -> None:
    with pytest.raises(ValueError, match="api"):
        AgentConfig(id="a", name="A", role="architect", api="grpc")  # type: ignore[arg-type]
