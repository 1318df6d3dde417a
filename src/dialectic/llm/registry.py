"""Provider registry: names to factories, API-key resolution, one instance per endpoint.

A provider is registered with a tiny hook (:func:`register_provider`); the engine asks for
providers through a :class:`ProviderPool`, which builds each distinct endpoint once so
agents that share an endpoint share its client, its learned capabilities and its
concurrency limit.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from dialectic.config import AgentConfig
from dialectic.errors import ConfigError, MissingApiKeyError
from dialectic.llm.base import LLMProvider


@dataclass(frozen=True)
class ProviderSettings:
    """Everything an adapter needs to build a client."""

    provider: str
    api_key: str | None
    base_url: str | None
    timeout_s: float | None = None


ProviderFactory = Callable[[ProviderSettings], LLMProvider]


@dataclass(frozen=True)
class ProviderSpec:
    name: str
    factory: ProviderFactory
    api_key_env: str | None
    """Environment variable holding the key; ``None`` for providers that need none."""
    base_url_env: str | None = None
    default_base_url: str | None = None


_REGISTRY: dict[str, ProviderSpec] = {}


def register_provider(spec: ProviderSpec) -> None:
    _REGISTRY[spec.name] = spec


def provider_spec(name: str) -> ProviderSpec:
    _register_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise ConfigError(f"unknown provider '{name}' (known: {known})") from None


def _openai_factory(settings: ProviderSettings) -> LLMProvider:
    from dialectic.llm.openai_provider import OpenAIProvider

    return OpenAIProvider(
        api_key=settings.api_key or "not-needed",
        base_url=settings.base_url,
        timeout_s=settings.timeout_s,
        name=settings.provider,
    )


def _anthropic_factory(settings: ProviderSettings) -> LLMProvider:
    from dialectic.llm.anthropic_provider import AnthropicProvider

    return AnthropicProvider(api_key=settings.api_key or "", base_url=settings.base_url, timeout_s=settings.timeout_s)


def _local_factory(settings: ProviderSettings) -> LLMProvider:
    from dialectic.llm.local_provider import LocalProvider

    return LocalProvider()


def _scripted_factory(settings: ProviderSettings) -> LLMProvider:
    from dialectic.llm.scripted import ScriptedProvider

    return ScriptedProvider()


def _register_builtins() -> None:
    if _REGISTRY:
        return
    register_provider(ProviderSpec("openai", _openai_factory, "OPENAI_API_KEY", "OPENAI_BASE_URL"))
    register_provider(
        ProviderSpec(
            "openrouter",
            _openai_factory,
            "OPENROUTER_API_KEY",
            "OPENROUTER_BASE_URL",
            "https://openrouter.ai/api/v1",
        )
    )
    register_provider(ProviderSpec("anthropic", _anthropic_factory, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"))
    register_provider(ProviderSpec("local", _local_factory, None))
    register_provider(ProviderSpec("scripted", _scripted_factory, None))


def resolve_settings(agent: AgentConfig, env: Mapping[str, str] | None = None) -> ProviderSettings:
    """The endpoint and key an agent will use; raises ``MissingApiKeyError`` (exit 4) if a key is missing.

    A key is not required when the agent names its own ``baseUrl`` (local servers such as
    Ollama or a llama.cpp server accept any key), unless the agent also names ``apiKeyEnv``:
    a variable the user named must be set.
    """
    environ = os.environ if env is None else env
    spec = provider_spec(agent.provider)
    base_url = (
        agent.base_url or (environ.get(spec.base_url_env) if spec.base_url_env else None) or spec.default_base_url
    )
    key_env = agent.api_key_env or spec.api_key_env
    api_key = environ.get(key_env) if key_env else None
    if key_env and not api_key and (agent.api_key_env or not agent.base_url):
        raise MissingApiKeyError(agent.provider, key_env)
    timeout_s = agent.timeout / 1000 if agent.timeout else None
    return ProviderSettings(provider=agent.provider, api_key=api_key, base_url=base_url, timeout_s=timeout_s)


class ProviderPool:
    """Builds each distinct endpoint once and hands the same instance to every agent using it."""

    def __init__(
        self, env: Mapping[str, str] | None = None, overrides: Mapping[str, LLMProvider] | None = None
    ) -> None:
        self._env = env
        self._instances: dict[tuple[str, str | None, str | None, float | None], LLMProvider] = {}
        self._overrides = dict(overrides or {})

    def key_for(self, agent: AgentConfig) -> str:
        """A stable name for the endpoint an agent uses (for per-provider concurrency limits)."""
        if agent.provider in self._overrides:
            return agent.provider
        s = resolve_settings(agent, self._env)
        return f"{s.provider}|{s.base_url or ''}"

    def get(self, agent: AgentConfig) -> LLMProvider:
        if agent.provider in self._overrides:
            return self._overrides[agent.provider]
        settings = resolve_settings(agent, self._env)
        key = (settings.provider, settings.base_url, settings.api_key, settings.timeout_s)
        if key not in self._instances:
            self._instances[key] = provider_spec(settings.provider).factory(settings)
        return self._instances[key]

    def check(self, agents: list[AgentConfig]) -> None:
        """Validate every agent's provider and key up front (before any debate is created)."""
        for agent in agents:
            if agent.provider not in self._overrides:
                resolve_settings(agent, self._env)

    async def aclose(self) -> None:
        for provider in self._instances.values():
            await provider.aclose()
        self._instances.clear()
