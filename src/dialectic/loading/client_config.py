"""What a web client may configure, and where the server's keys may go.

A debate request may carry a whole configuration (``config``), and the engine's configuration
models ignore keys they do not know. So what a client may set is not "everything but a few
dangerous keys" but an allow-list, :data:`CLIENT_SETTINGS`: every key of the configuration is
named there, either as one a client may set or with the reason it is the server's (a test
holds every field of the configuration models to it, so a new field is refused over the API
until someone decides). Unknown keys are refused, not ignored.

The endpoints a debate started over the API may call are the server's: those its own
configuration's agents and judge use (their ``baseUrl``, else the provider's ``*_BASE_URL``
variable, else its usual address), and those ``dialectic serve --allow-endpoint`` adds. Every
participant of the debate a request resolves to is checked against them, however it got its
provider (a whole configuration, an edited agent, a new role), so the server's keys never go
to an address a client chose.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from dialectic.core.config import AgentConfig
from dialectic.core.errors import ConfigError, InvalidArgumentsError
from dialectic.core.spelling import nearest
from dialectic.llm.registry import base_url_for, known_providers, unknown_provider
from dialectic.loading.keys import UnknownKey

SettingsSpec = Mapping[str, "SettingsSpec | str | None"]
"""Per key: ``None`` (a client may set it), a nested spec (a section, checked key by key), or the
reason the key is the server's."""

PROMPT_FILES = "prompt files are the server's: a configuration sent over the API may not name prompt files on it"
KEYS = "API keys cannot be set over the API; they stay in the server's environment"

SUMMARIZATION: SettingsSpec = {"enabled": None, "threshold": None, "maxLength": None, "method": None}
AGENT: SettingsSpec = {
    "id": None,
    "name": None,
    "role": None,
    "model": None,
    "provider": None,
    "temperature": None,
    "baseUrl": None,  # only the server's endpoints: see check_endpoints
    "apiKeyEnv": KEYS,
    "systemPromptPath": PROMPT_FILES,
    "summaryPromptPath": PROMPT_FILES,
    "clarificationPromptPath": PROMPT_FILES,
    "summarization": SUMMARIZATION,
    "enabled": None,
    "maxTokens": None,
    "timeout": None,
    "position": None,
    "persona": None,
    "voteWeight": None,
    "api": None,
    "contextWindow": None,
    "deadline": None,
    "fallback": {
        "provider": None,
        "model": None,
        "temperature": None,
        "baseUrl": None,  # only the server's endpoints: see check_endpoints
        "apiKeyEnv": KEYS,
        "maxTokens": None,
        "timeout": None,
        "api": None,
    },
}
DEBATE: SettingsSpec = {
    "rounds": None,
    "terminationCondition": {"type": None, "threshold": None},
    "synthesisMethod": None,
    "includeFullHistory": None,
    "timeoutPerRound": None,
    "summarization": SUMMARIZATION,
    "interactiveClarifications": None,
    "clarificationsMaxPerAgent": None,
    "clarificationsMaxIterations": None,
    "maxConcurrency": None,
    "minAgents": None,
    "maxContinuations": None,
    "retry": {"maxAttempts": None, "baseDelayMs": None, "maxDelayMs": None, "jitterMs": None, "maxRetryAfterMs": None},
    "format": None,
    "personas": None,
    "personaStrategy": None,
    "assessment": None,
    "consensusGuard": None,
    "rubricWeights": None,
    "neutralLabels": None,
    "verdict": None,
    "vote": {"rule": None, "threshold": None, "excludeOwn": None},
    "answers": {"maxAnswers": None},
    "problemKind": None,
    "budget": {"maxCostUsd": None, "maxTokens": None},
    "context": {
        "dir": "a context directory is the server's",
        "mode": None,
        "maxToolCalls": None,
        "judgeTools": None,
        "maxReadChars": None,
    },
    "contextStrategy": None,
    # A hit answers only a request with the very inputs the client sent: it learns no one else's prompt.
    "cache": None,
    # Recalled debates come from the server's store, which every client of the server may list already.
    "memory": None,
    "memoryCount": None,
    "memoryMaxChars": None,
    "memoryMinSimilarity": None,
    # The pool's agents would bring their own endpoints and keys past AGENT's checks, and its path is the server's.
    "team": "a team's pool is the server's: send the agents to take part",
}
CLIENT_SETTINGS: SettingsSpec = {
    "agents": AGENT,  # a list: each item is checked against AGENT
    "judge": AGENT,
    "debate": DEBATE,
    "limits": "the limits are the server's",
    "pricing": "the prices are the server's",
    "allowOutsidePrompts": PROMPT_FILES,
    "hooks": "hooks are the server's: a debate's webhooks and command are its configuration's",
}
LISTS = frozenset({"agents"})
"""The sections that are lists of items (each checked against the section's spec)."""


def check_settings(data: Mapping[str, Any], spec: SettingsSpec = CLIENT_SETTINGS, where: str = "config") -> None:
    """``ConfigError`` naming every key of ``data`` a client may not set (a ``null`` sets nothing): an unknown
    key with the nearest known one, a key of the server's with the reason.

    Only the keys are checked here, and only as deep as the spec goes: the values are the
    configuration models' to validate. The walk is linear in the keys sent."""
    refused = _refused(data, spec, where)
    if refused:
        raise ConfigError("; ".join(refused))


def _refused(data: Mapping[str, Any], spec: SettingsSpec, where: str) -> list[str]:
    refused: list[str] = []
    for key, value in data.items():
        path = f"{where}.{key}"
        rule = _rule(spec, key)
        if value is None or rule is None:
            continue
        if rule is _UNKNOWN:
            refused.append(_unknown(str(key), spec, where))
        elif isinstance(rule, str):
            refused.append(f"{path}: not accepted over the API ({rule})")
        elif isinstance(value, list) and key in LISTS and where == "config":
            for index, item in enumerate(value):
                if isinstance(item, Mapping):
                    refused += _refused(item, rule, f"{path}[{index}]")
        elif isinstance(value, Mapping):
            refused += _refused(value, rule, path)
    return refused


_UNKNOWN: SettingsSpec = {}


def _rule(spec: SettingsSpec, key: str) -> SettingsSpec | str | None:
    """The rule for ``key``, which may be spelled as in the file (``baseUrl``) or in Python (``base_url``)."""
    if key in spec:
        return spec[key]
    normal = key.replace("_", "").lower()
    for name, rule in spec.items():
        if name.lower() == normal:
            return rule
    return _UNKNOWN


def _unknown(key: str, spec: SettingsSpec, where: str) -> str:
    """An unknown key in the wording of a file's (:class:`~dialectic.loading.keys.UnknownKey`); without a close
    spelling, what a client may send there instead."""
    if "apikey" in key.replace("_", "").replace("-", "").lower():
        return f"{where}.{key}: not accepted over the API ({KEYS})"
    close = nearest(key, spec)
    described = UnknownKey(f"{where}.{key}", f"{where}.{close}" if close else None).describe()
    if close:
        return described
    settable = sorted(name for name, rule in spec.items() if not isinstance(rule, str))
    return f"{described} (a client may send: {', '.join(settable)})"


@dataclass(frozen=True, order=True)
class Endpoint:
    """Where a participant's calls go: a provider, and the base URL (``""``: the adapter's own default)."""

    provider: str
    url: str = ""

    def __str__(self) -> str:
        return f"{self.provider} at {self.url}" if self.url else self.provider


def endpoint_of(agent: AgentConfig) -> Endpoint:
    """The endpoint ``agent``'s calls would go to, as the registry resolves it."""
    url = base_url_for(agent) or ""
    return Endpoint(agent.provider.strip().lower(), url.rstrip("/"))


def endpoints_of(agents: Iterable[AgentConfig]) -> frozenset[Endpoint]:
    return frozenset(endpoint_of(agent) for agent in agents)


def parse_endpoint(text: str) -> Endpoint:
    """``--allow-endpoint``'s value: ``PROVIDER`` (its usual address) or ``PROVIDER=URL``."""
    provider, equals, url = text.strip().partition("=")
    provider = provider.strip().lower()
    if provider not in known_providers():
        raise InvalidArgumentsError(
            f"--allow-endpoint {text}: {unknown_provider(provider)}; give PROVIDER or PROVIDER=URL"
        )
    if not equals:
        return usual_endpoint(provider)
    parts = urlsplit(url.strip())
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise InvalidArgumentsError(f"--allow-endpoint {text}: the URL must start with http:// or https://")
    return Endpoint(provider, url.strip().rstrip("/"))


def check_endpoints(participants: Iterable[tuple[str, AgentConfig]], allowed: frozenset[Endpoint]) -> None:
    """``ConfigError`` naming the first participant whose calls would go to an endpoint not ``allowed``.

    A seat a person plays (``provider: human``) calls no endpoint; its fallback model is checked as
    ``WHERE.fallback``."""
    for where, agent in _callers(participants):
        endpoint = endpoint_of(agent)
        if endpoint not in allowed:
            offered = ", ".join(str(e) for e in sorted(allowed)) or "none"
            raise ConfigError(
                f"{where}: {endpoint} is not an endpoint of the server's configuration, and a request may only "
                f"use those (the server's keys must not go anywhere else): {offered}; "
                "dialectic serve --allow-endpoint adds one"
            )


def _callers(participants: Iterable[tuple[str, AgentConfig]]) -> Iterable[tuple[str, AgentConfig]]:
    for where, agent in participants:
        if not agent.is_human:
            yield where, agent
        fallback = agent.fallback_agent()
        if fallback is not None:
            yield f"{where}.fallback", fallback


def url_for(provider: str, allowed: frozenset[Endpoint]) -> str | None:
    """The base URL an agent moved to ``provider`` gets: the provider's own address when allowed, else
    the one allowed URL of that provider's (the first, sorted, if several); ``None`` if there is none."""
    if usual_endpoint(provider) in allowed:
        return None
    urls = sorted(e.url for e in allowed if e.provider == provider and e.url)
    return urls[0] if urls else None


def usual_endpoint(provider: str) -> Endpoint:
    """Where an agent of ``provider`` naming no ``baseUrl`` sends its calls."""
    return endpoint_of(AgentConfig(id="endpoint", name="endpoint", role="endpoint", provider=provider))
