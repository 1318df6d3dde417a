"""Provider registry: names to factories, API-key resolution, one instance per endpoint.

Providers come from three places, looked up in this order of precedence (a later source
wins on a shared name): the built-ins (``openai``, ``openrouter``, ``anthropic``, ``local``,
``scripted``, ``human`` (a seat played by a person, :mod:`dialectic.llm.human`), and the presets
for local inference servers ``llamacpp``, ``ollama``, ``vllm`` and ``lmstudio``: the OpenAI
adapter with the server's usual address and no key required),
installed packages that declare an entry point in the ``dialectic.providers`` group, and
:func:`register_provider` calls. An entry point names either a :class:`ProviderSpec` or a
callable returning one; entry points are loaded lazily, once, on the first lookup, and one that
fails to load is reported in the "unknown provider" message instead of breaking every command.
The engine asks for providers through a
:class:`ProviderPool`, which builds each distinct endpoint once so agents that share an
endpoint share its client, its learned capabilities and its concurrency limit.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING

from dialectic.core import environment
from dialectic.core.config import DEFAULT_MODELS, AgentConfig, WireApi
from dialectic.core.errors import ConfigError, MissingApiKeyError
from dialectic.core.redaction import note_key_env
from dialectic.core.spelling import did_you_mean, nearest
from dialectic.llm.base import LLMProvider

if TYPE_CHECKING:
    from dialectic.llm.client import SharedLimit

ENTRY_POINT_GROUP = "dialectic.providers"


@dataclass(frozen=True)
class ProviderSettings:
    """Everything an adapter needs to build a client."""

    provider: str
    api_key: str | None
    base_url: str | None
    timeout_s: float | None = None
    api: WireApi = "auto"
    """Which OpenAI API to speak (``auto``, ``chat``, ``responses``); adapters of other APIs ignore it."""
    prompt_cache: bool = True
    """Ask the provider to reuse cached prompt prefixes (``DIALECTIC_PROMPT_CACHE=off`` turns it off:
    ``benchmarks/speed.py`` compares the two)."""


ProviderFactory = Callable[[ProviderSettings], LLMProvider]


@dataclass(frozen=True)
class ProviderSpec:
    name: str
    factory: ProviderFactory
    api_key_env: str | None
    """Environment variable holding the key; ``None`` for providers that need none."""
    base_url_env: str | None = None
    default_base_url: str | None = None
    default_model: str | None = None
    """The model an agent on this provider gets when its configuration names none."""
    preload: Callable[[], None] | None = None
    """Imports what the provider's first call would import, for a long-lived process to run before it
    serves (an import on the event loop holds up every debate running on it)."""
    key_optional: bool = False
    """The key in ``api_key_env`` is sent when set but not required (local inference servers)."""


def _openai_factory(settings: ProviderSettings) -> LLMProvider:
    from dialectic.llm.openai_provider import OpenAIProvider

    return OpenAIProvider(
        api_key=settings.api_key or "not-needed",
        base_url=settings.base_url,
        timeout_s=settings.timeout_s,
        name=settings.provider,
        api=settings.api,
        prompt_cache=settings.prompt_cache,
    )


def _anthropic_factory(settings: ProviderSettings) -> LLMProvider:
    from dialectic.llm.anthropic_provider import AnthropicProvider

    return AnthropicProvider(
        api_key=settings.api_key or "",
        base_url=settings.base_url,
        timeout_s=settings.timeout_s,
        prompt_cache=settings.prompt_cache,
    )


def _local_factory(settings: ProviderSettings) -> LLMProvider:
    from dialectic.llm.local_provider import LocalProvider

    return LocalProvider()


def _scripted_factory(settings: ProviderSettings) -> LLMProvider:
    from dialectic.llm.scripted import ScriptedProvider

    return ScriptedProvider()


def _human_factory(settings: ProviderSettings) -> LLMProvider:
    from dialectic.llm.human import HumanProvider

    return HumanProvider()


def builtin_providers() -> list[ProviderSpec]:
    return [
        ProviderSpec("openai", _openai_factory, "OPENAI_API_KEY", "OPENAI_BASE_URL"),
        ProviderSpec(
            "openrouter",
            _openai_factory,
            "OPENROUTER_API_KEY",
            "OPENROUTER_BASE_URL",
            "https://openrouter.ai/api/v1",
        ),
        ProviderSpec("anthropic", _anthropic_factory, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
        ProviderSpec("local", _local_factory, None),
        ProviderSpec("scripted", _scripted_factory, None),
        ProviderSpec("human", _human_factory, None),
        *(
            ProviderSpec(
                name,
                _openai_factory,
                f"{name.upper()}_API_KEY",
                f"{name.upper()}_BASE_URL",
                base_url,
                default_model=model,
                key_optional=True,
            )
            for name, base_url, model in SERVER_PRESETS
        ),
    ]


SERVER_PRESETS: tuple[tuple[str, str, str | None], ...] = (
    ("llamacpp", "http://127.0.0.1:8080/v1", "default"),
    ("ollama", "http://127.0.0.1:11434/v1", None),
    ("vllm", "http://127.0.0.1:8000/v1", None),
    ("lmstudio", "http://127.0.0.1:1234/v1", None),
)
"""Local inference servers: name, usual address, default model. ``llama-server`` answers with the one
model it loaded whatever name is asked; the others need a name (``dialectic models`` lists them)."""


class ProviderRegistry:
    """Built-in providers, entry-point plugins (loaded once, on first use) and registered ones."""

    def __init__(self) -> None:
        self._builtins = {spec.name: spec for spec in builtin_providers()}
        self._plugins: dict[str, ProviderSpec] | None = None
        self._plugin_errors: list[str] = []
        self._registered: dict[str, ProviderSpec] = {}

    def register(self, spec: ProviderSpec) -> None:
        self._registered[_normal(spec.name)] = spec

    def specs(self) -> dict[str, ProviderSpec]:
        """Every known provider by name; registered ones win over plugins, plugins over built-ins."""
        specs = {**self._builtins, **self._load_plugins(), **self._registered}
        for spec in specs.values():
            if spec.api_key_env:
                note_key_env(spec.api_key_env)  # its value is never shown
        return specs

    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self.specs()))

    def get(self, name: str) -> ProviderSpec:
        specs = self.specs()
        try:
            return specs[_normal(name)]
        except KeyError:
            raise ConfigError(self.unknown(name)) from None

    def unknown(self, name: str, given_to: str = "") -> str:
        """``unknown provider 'NAME'`` (``given_to``: where it was given, e.g. `` given to --provider``), the
        nearest known name and the known ones: the one wording of this refusal."""
        suggestion = did_you_mean(nearest(name.strip(), self.names()))
        return f"unknown provider '{name}'{given_to}{suggestion} ({self.describe_known()})"

    def describe_known(self) -> str:
        """``known: a, b, c`` plus any plugin that failed to load, for error messages."""
        text = f"known: {', '.join(self.names())}"
        if self._plugin_errors:
            text += f"; plugins that failed to load: {'; '.join(self._plugin_errors)}"
        return text

    def _load_plugins(self) -> dict[str, ProviderSpec]:
        if self._plugins is None:
            self._plugins = {}
            for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
                try:
                    spec = _spec_from(entry.load())
                except Exception as exc:  # a broken third-party package must not break every command
                    self._plugin_errors.append(f"{entry.name} ({entry.value}): {type(exc).__name__}: {exc}")
                    continue
                self._plugins[_normal(spec.name)] = spec
        return self._plugins


def _spec_from(loaded: object) -> ProviderSpec:
    """An entry point's object: a ``ProviderSpec``, or a callable that returns one."""
    spec = loaded() if callable(loaded) and not isinstance(loaded, ProviderSpec) else loaded
    if not isinstance(spec, ProviderSpec):
        raise TypeError(f"expected a ProviderSpec, got {type(spec).__name__}")
    return spec


def _normal(name: str) -> str:
    return name.strip().lower()


_DEFAULT_REGISTRY = ProviderRegistry()
_KEY_ENVS_USED: set[str] = set()
"""``apiKeyEnv`` names that configurations pointed at, so their values can be redacted from output."""


def registry() -> ProviderRegistry:
    """The process-wide registry used by the functions below."""
    return _DEFAULT_REGISTRY


def register_provider(spec: ProviderSpec) -> None:
    """Add (or replace) a provider; the built-ins and plugins stay available."""
    registry().register(spec)


def provider_spec(name: str) -> ProviderSpec:
    """The spec for ``name``; an unknown name is a ``ConfigError`` listing the known providers."""
    return registry().get(name)


def known_providers() -> tuple[str, ...]:
    """Names of every provider: built-ins, plugins and registered ones, sorted."""
    return registry().names()


def describe_known_providers() -> str:
    return registry().describe_known()


def unknown_provider(name: str, given_to: str = "") -> str:
    """The refusal of provider ``name``: ``unknown provider 'opneai' — did you mean `openai`? (known: …)``."""
    return registry().unknown(name, given_to)


def default_model_for(name: str) -> str | None:
    """The model used when a configuration names provider ``name`` but no model."""
    spec = provider_spec(name)
    return spec.default_model or DEFAULT_MODELS.get(spec.name)


def key_env_names() -> frozenset[str]:
    """Environment variables that hold API keys: every provider's and every ``apiKeyEnv`` seen so far."""
    names = {spec.api_key_env for spec in registry().specs().values() if spec.api_key_env}
    return frozenset(names | _KEY_ENVS_USED)


def base_url_for(agent: AgentConfig, env: Mapping[str, str] | None = None) -> str | None:
    """The base URL an agent's calls go to: its ``baseUrl``, else its provider's ``*_BASE_URL`` variable,
    else the provider's usual address; ``None`` where the adapter's own default applies (or none exists)."""
    environ = os.environ if env is None else env
    spec = provider_spec(agent.provider)
    return agent.base_url or (environ.get(spec.base_url_env) if spec.base_url_env else None) or spec.default_base_url


def resolve_settings(agent: AgentConfig, env: Mapping[str, str] | None = None) -> ProviderSettings:
    """The endpoint and key an agent will use; raises ``MissingApiKeyError`` (exit 4) if a key is missing.

    A key is not required when the agent names its own ``baseUrl`` (local servers such as
    Ollama or a llama.cpp server accept any key), unless the agent also names ``apiKeyEnv``:
    a variable the user named must be set. The local-server presets never require one
    (``key_optional``): their variable's key is sent when it is set.
    """
    environ = os.environ if env is None else env
    spec = provider_spec(agent.provider)
    base_url = base_url_for(agent, environ)
    key_env = agent.api_key_env or spec.api_key_env
    if key_env:
        _KEY_ENVS_USED.add(key_env)
        note_key_env(key_env)
    api_key = environ.get(key_env) if key_env else None
    if key_env and not api_key and (agent.api_key_env or not (agent.base_url or spec.key_optional)):
        raise MissingApiKeyError(agent.provider, key_env)
    timeout_s = agent.timeout / 1000 if agent.timeout else None
    prompt_cache = environment.prompt_cache(environ)
    return ProviderSettings(
        provider=spec.name,
        api_key=api_key,
        base_url=base_url,
        timeout_s=timeout_s,
        api=agent.api,
        prompt_cache=prompt_cache,
    )


class ProviderPool:
    """Builds each distinct endpoint once and hands the same instance to every agent using it."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        overrides: Mapping[str, LLMProvider] | None = None,
        *,
        shared_limits: Callable[[str], SharedLimit | None] | None = None,
    ) -> None:
        self._env = env
        self._instances: dict[tuple[str, str | None, str | None, float | None, str], LLMProvider] = {}
        self._overrides = dict(overrides or {})
        self._shared_limits = shared_limits

    def shared_limit(self, key: str) -> SharedLimit | None:
        """The limit the endpoint ``key`` (:meth:`key_for`) shares with other processes, when the pool was
        given one (``dialectic batch --ray``); ``None``: each debate keeps its own (``debate.maxConcurrency``)."""
        return self._shared_limits(key) if self._shared_limits is not None else None

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
        key = (settings.provider, settings.base_url, settings.api_key, settings.timeout_s, settings.api)
        if key not in self._instances:
            self._instances[key] = provider_spec(settings.provider).factory(settings)
        return self._instances[key]

    def prepare(self, agents: list[AgentConfig]) -> None:
        """Build the providers ``agents`` use now, and import what their first calls would.

        For a long-lived process (``dialectic serve``) before it serves: building a client (its TLS
        context) and the imports take tenths of a second, which on the event loop would hold up every
        debate running at the time."""
        kinds: set[str] = set()
        for agent in agents:
            self.get(agent)
            spec = provider_spec(agent.provider)
            if spec.preload is not None and spec.name not in kinds and agent.provider not in self._overrides:
                kinds.add(spec.name)
                spec.preload()

    def check(self, agents: list[AgentConfig]) -> None:
        """Validate every agent's provider and key up front (before any debate is created)."""
        for agent in agents:
            if agent.provider not in self._overrides:
                resolve_settings(agent, self._env)

    async def aclose(self) -> None:
        for provider in self._instances.values():
            await provider.aclose()
        self._instances.clear()
