"""What a ``start_debate`` call may change, and the configuration it gives.

The server starts every debate from its own configuration (``dialectic mcp -c FILE``, loaded
through :func:`dialectic.loading.setup.prepare_config`). A call may lay over it ``rounds``,
``format``, ``max_answers``, ``roles`` (keep only the agents with these roles) or ``agents``
(the participants, each a role with an optional provider, model and temperature). Over stdio, where the client
is the user's own process, a call may also bring a whole configuration (``config``): it is
validated and checked like a file, its prompt paths resolving in the server's configuration
directory.

Over HTTP, which other local processes can reach, a call may not bring a configuration (it
could name files, endpoints and key variables), an agent takes no endpoint, and an agent's
provider must be one the server's configuration already uses: a client cannot make the
server spend a key it was not set up to spend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, ValidationError

from dialectic.core.config import HUMAN_PROVIDER, AgentConfig, SystemConfig
from dialectic.core.errors import ConfigError, InvalidArgumentsError
from dialectic.front.debate import Agent
from dialectic.loading.client_config import check_endpoints, check_settings, endpoints_of
from dialectic.loading.config import ARGUMENT_NAMES, apply_overrides, describe_validation_error, with_local_limits
from dialectic.loading.keys import KnownKeysModel

Transport = Literal["stdio", "http"]


class AgentChoice(KnownKeysModel):
    """A participant a call asks for: what it leaves out comes from the server's first agent."""

    role: str = Field(min_length=1, description="The agent's role, e.g. architect, security, performance, kiss.")
    provider: str | None = Field(
        default=None, description="The provider (default: the one of the server's first agent)."
    )
    model: str | None = Field(default=None, description="The model (default: the provider's default model).")
    temperature: float | None = Field(default=None, ge=0, le=2, description="Sampling temperature.")


@dataclass(frozen=True)
class CallOptions:
    """A ``start_debate`` call's changes to the server's configuration (``None``: keep it)."""

    config: Mapping[str, Any] | None = None
    agents: Sequence[AgentChoice] | None = None
    rounds: int | None = None
    format: str | None = None
    roles: Sequence[str] | None = None
    max_answers: int | None = None


@dataclass(frozen=True)
class CallConfig:
    """The configuration a call's debate runs with, and what the user should know about it."""

    config: SystemConfig
    warnings: list[str]


def call_config(base: SystemConfig, options: CallOptions, transport: Transport) -> CallConfig:
    """``base`` (the server's configuration) with ``options`` applied and the result's shape checked.

    The checks that need the environment (prompt files, providers and their keys, prices) are
    :func:`dialectic.loading.setup.check_ready`'s, made when the debate is built."""
    config = base
    if options.config is not None:
        if transport != "stdio":
            raise InvalidArgumentsError(
                "config: a whole configuration is accepted over stdio only; over HTTP give rounds, format, "
                "roles or agents (the server's configuration gives the rest)"
            )
        check_settings(options.config)  # what an assistant may set: no prompt files, keys, limits or prices
        config = _submitted(options.config, base)
    if options.agents is not None and options.roles is not None:
        raise InvalidArgumentsError("give agents or roles, not both (roles keeps some of the configured agents)")
    if options.roles is not None and not [r for r in options.roles if r.strip()]:
        raise InvalidArgumentsError("roles: give at least one role")
    roles = ",".join(r.strip() for r in options.roles) if options.roles is not None else None
    config, warnings = apply_overrides(
        config,
        rounds=options.rounds,
        roles=roles,
        debate_format=options.format,
        max_answers=options.max_answers,
        names=ARGUMENT_NAMES,
    )
    if options.agents is not None:
        allowed = _providers_of(base) if transport != "stdio" else None
        config = _with_agents(config, options.agents, allowed)
    speakers = [*((f"agents[{i}]", a) for i, a in enumerate(config.participants())), ("judge", config.judge)]
    # An assistant's call (a prompt it read may have written it) never sends the server's keys elsewhere.
    check_endpoints(speakers, endpoints_of([*base.agents, base.judge]))
    return CallConfig(with_local_limits(config), warnings)


def _submitted(data: Mapping[str, Any], base: SystemConfig) -> SystemConfig:
    """A whole configuration sent with a call, on the server's limits, prices and hooks."""
    try:
        return SystemConfig.model_validate(
            {**data, "limits": base.limits.model_dump(), "pricing": base.pricing, "hooks": base.hooks.model_dump()}
        )
    except ValidationError as exc:
        raise ConfigError(f"invalid configuration: {describe_validation_error(exc)}") from None


def _providers_of(config: SystemConfig) -> frozenset[str]:
    return frozenset(agent.provider for agent in [*config.participants(), config.judge])


def _with_agents(config: SystemConfig, choices: Sequence[AgentChoice], allowed: frozenset[str] | None) -> SystemConfig:
    """``config`` with ``choices`` as its agents (``allowed``: the providers they may use; ``None``: any)."""
    if not choices:
        raise InvalidArgumentsError("agents: give at least one agent")
    if len(choices) > config.limits.max_agents:
        raise InvalidArgumentsError(
            f"agents: {len(choices)} agents is more than the limit of {config.limits.max_agents}"
        )
    template = config.template_agent()
    taken: set[str] = set()
    agents: list[AgentConfig] = []
    for index, choice in enumerate(choices):
        provider = choice.provider.strip().lower() if choice.provider else None
        if provider is not None and allowed is not None and provider not in allowed and provider != HUMAN_PROVIDER:
            raise InvalidArgumentsError(
                f"agents[{index}].provider: over HTTP an agent may use only the providers of the server's "
                f"configuration ({', '.join(sorted(allowed))})"
            )
        wanted = Agent(role=choice.role, provider=provider, model=choice.model, temperature=choice.temperature)
        try:
            agents.append(wanted.config(template, taken))
        except ValidationError as exc:
            raise InvalidArgumentsError(f"agents[{index}].{describe_validation_error(exc)}") from None
    try:
        return SystemConfig.model_validate({**config.model_dump(), "agents": agents})
    except ValidationError as exc:
        raise InvalidArgumentsError(f"agents: {describe_validation_error(exc)}") from None
