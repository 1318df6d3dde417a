"""A new debate asked for over the API: the request's shape, and how it becomes an engine request.

The server's own configuration (``dialectic serve -c``, or the defaults the CLI would use) is
the starting point. A request may pick roles, edit agents (provider, model, temperature),
choose the format, rounds and termination, turn clarifications on, or send a whole
configuration. Each field is checked with the CLI's own rules and messages, and every field's
message is returned at once.

What a request may never do: name files on the server's disk (prompt files; the server's own
configuration may), set or name API keys (they stay in the server's environment), send the
server's keys to an endpoint of its choosing (only the endpoints the server's configuration
uses), or raise the server's limits.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from dialectic.agents.participants import ROLE_TITLES
from dialectic.config import AgentConfig, LimitsConfig, SystemConfig, TerminationCondition, TerminationType
from dialectic.config_loader import (
    apply_overrides,
    check_prompt_files,
    describe_validation_error,
    with_local_limits,
)
from dialectic.engine import DebateRequest
from dialectic.errors import ConfigError, DialecticError, InvalidArgumentsError
from dialectic.llm.registry import ProviderPool, default_model_for, describe_known_providers, known_providers
from dialectic.web.errors import fields_error
from dialectic.web.validation import encodable


class ApiModel(BaseModel):
    """A request body. Text with a lone surrogate (JSON's ``"\\ud800"``) is refused (422 naming the field):
    it could be neither saved nor sent back."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _utf8_text(cls, value: Any) -> Any:
        return encodable(value)


class AgentChoice(ApiModel):
    """An agent to take part: one of the server's (by ``id``) or a new one with ``role``, edited."""

    role: str = Field(min_length=1)
    id: str | None = Field(default=None, description="An agent of the server's configuration to start from.")
    name: str | None = None
    provider: str | None = Field(default=None, description="A known provider; its key must be in the server's env.")
    model: str | None = None
    temperature: float | None = None


class TerminationChoice(ApiModel):
    type: TerminationType
    threshold: int | None = None


class NewDebate(ApiModel):
    """``POST /api/debates``: the problem, and overrides of the server's configuration (or a configuration)."""

    problem: str = Field(description="The problem to debate (a file's text, for an upload).")
    roles: list[str] | None = Field(default=None, description="Keep only the server's agents with these roles.")
    agents: list[AgentChoice] | None = Field(default=None, description="The agents taking part, in order.")
    format: str | None = Field(default=None, description="The deliberation protocol.")
    rounds: int | None = None
    termination: TerminationChoice | None = None
    clarify: bool = Field(default=False, description="Let the agents ask clarifying questions first.")
    config: dict[str, Any] | None = Field(
        default=None,
        description="A whole configuration (agents, judge, debate) instead of the server's; no prompt files, "
        "no keys, only the server's endpoints.",
    )


@dataclass(frozen=True)
class ServerConfig:
    """The configuration the server started with, and the directory its prompt paths resolve in."""

    config: SystemConfig
    directory: Path

    @property
    def limits(self) -> LimitsConfig:
        return self.config.limits

    def endpoints(self) -> set[tuple[str, str]]:
        """``(provider, baseUrl)`` of every agent and the judge that names a base URL."""
        speakers = [*self.config.agents, self.config.judge]
        return {(a.provider, a.base_url) for a in speakers if a.base_url}


@dataclass(frozen=True)
class ResolvedDebate:
    request: DebateRequest
    warnings: list[str]


def problem_text(problem: str, limits: LimitsConfig) -> str:
    """The problem, trimmed and within the limit, with the messages ``dialectic debate`` gives."""
    text = problem.strip()
    if not text:
        raise InvalidArgumentsError("the problem is empty")
    if len(text) > limits.max_problem_chars:
        raise InvalidArgumentsError(
            f"the problem has {len(text):,} characters, more than the limit of {limits.max_problem_chars:,}; "
            "shorten it, or raise limits.maxProblemChars in the config file"
        )
    return text


def resolve(body: NewDebate, server: ServerConfig) -> ResolvedDebate:
    """The engine request for ``body``; an :class:`ApiError` naming every field that is wrong."""
    errors: dict[str, str] = {}
    text = _checked(errors, "problem", lambda: problem_text(body.problem, server.limits))
    base = server.config
    if body.config is not None:
        try:
            base = submitted_config(body.config, server)
        except DialecticError as exc:
            raise fields_error({"config": exc.message}) from None
    if body.agents is not None:
        base = _checked(errors, "agents", lambda: with_agents(base, body.agents or [])) or base
    roles = ",".join(body.roles) if body.roles is not None else None
    if body.format is not None:
        _checked(errors, "format", lambda: apply_overrides(base, debate_format=body.format))
    if body.rounds is not None:
        _checked(errors, "rounds", lambda: apply_overrides(base, rounds=body.rounds))
    if roles is not None:
        _checked(errors, "roles", lambda: apply_overrides(base, roles=roles))
    termination = _checked(errors, "termination", lambda: _termination(body.termination))
    if errors or text is None:
        raise fields_error(errors)
    try:
        resolved, warnings = apply_overrides(base, rounds=body.rounds, roles=roles, debate_format=body.format)
    except DialecticError as exc:
        raise fields_error({"agents" if body.agents is not None else "roles": exc.message}) from None
    if termination is not None:
        debate = resolved.debate.model_copy(update={"termination_condition": termination})
        resolved = resolved.model_copy(update={"debate": debate})
    resolved = with_local_limits(resolved)
    check_prompt_files(resolved, server.directory)
    try:
        ProviderPool().check([*resolved.participants(), resolved.judge])
    except ConfigError as exc:
        raise fields_error({"agents": exc.message}) from None
    request = DebateRequest(problem=text, config=resolved, config_dir=server.directory, clarify=body.clarify)
    return ResolvedDebate(request, warnings)


def _checked(errors: dict[str, str], name: str, check: Any) -> Any:
    """``check()``'s value; on a dialectic error, its message is recorded for ``name`` and ``None`` returned."""
    try:
        return check()
    except DialecticError as exc:
        errors.setdefault(name, exc.message)
        return None


def _termination(choice: TerminationChoice | None) -> TerminationCondition | None:
    if choice is None:
        return None
    values: dict[str, Any] = {"type": choice.type}
    if choice.threshold is not None:
        values["threshold"] = choice.threshold
    try:
        return TerminationCondition.model_validate(values)
    except ValidationError as exc:
        raise InvalidArgumentsError(f"termination.{describe_validation_error(exc)}") from None


PROMPT_KEYS = ("systemPromptPath", "summaryPromptPath", "clarificationPromptPath")
TOP_LEVEL_KEYS = ("agents", "judge", "debate")


def submitted_config(data: dict[str, Any], server: ServerConfig) -> SystemConfig:
    """A configuration sent with the request, held to what a request may do (see the module's docstring)."""
    for key in data:
        if key not in TOP_LEVEL_KEYS:
            server_owned = {"limits": "the limits are the server's", "pricing": "the prices are the server's"}
            what = server_owned.get(key, "it may have agents, judge and debate")
            raise ConfigError(f"config.{key}: not accepted over the API ({what})")
    debate = data.get("debate")
    context = debate.get("context") if isinstance(debate, dict) else None
    if context is not None and (not isinstance(context, dict) or context.get("dir") is not None):
        # A request must not point the agents at a directory of the server's to read and send on.
        raise ConfigError("config.debate.context: not accepted over the API (a context directory is the server's)")
    speakers: list[tuple[str, Any]] = [(f"agents[{i}]", a) for i, a in enumerate(data.get("agents") or [])]
    if data.get("judge") is not None:
        speakers.append(("judge", data["judge"]))
    endpoints = server.endpoints()
    for where, agent in speakers:
        if not isinstance(agent, dict):
            continue
        _check_speaker(f"config.{where}", agent, endpoints)
    try:
        config = SystemConfig.model_validate({**data, "limits": server.limits.model_dump()})
    except ValidationError as exc:
        raise ConfigError(f"invalid configuration: {describe_validation_error(exc)}") from None
    known = known_providers()
    for index, agent in enumerate([*config.agents, config.judge]):
        if agent.provider not in known:
            where = f"agents[{index}]" if index < len(config.agents) else "judge"
            raise ConfigError(
                f"invalid configuration: {where}.provider: unknown provider '{agent.provider}' "
                f"({describe_known_providers()})"
            )
    return config


def _check_speaker(where: str, agent: dict[str, Any], endpoints: set[tuple[str, str]]) -> None:
    for key in agent:
        normal = key.replace("_", "").lower()
        if any(normal == p.lower() for p in PROMPT_KEYS):
            raise ConfigError(
                f"{where}.{key}: a configuration sent over the API may not name prompt files on the server; "
                "only the server's own configuration may"
            )
        if "apikey" in normal:
            raise ConfigError(
                f"{where}.{key}: API keys cannot be set over the API; they stay in the server's environment"
            )
    base_url = agent.get("baseUrl", agent.get("base_url"))
    if base_url is not None:
        provider = str(agent.get("provider") or "openai").strip().lower()
        if (provider, base_url) not in endpoints:
            raise ConfigError(
                f"{where}.baseUrl: a request may only use the endpoints of the server's configuration "
                "(the server's keys must not go anywhere else)"
            )


def with_agents(config: SystemConfig, choices: list[AgentChoice]) -> SystemConfig:
    """``config`` with ``choices`` as its agents: each starts from the server's agent it names (or one
    of the server's endpoint for a new role) and takes the provider, model and temperature chosen."""
    if not choices:
        raise InvalidArgumentsError("agents: choose at least one agent")
    by_id = {a.id: a for a in config.agents}
    template = (config.participants() or [config.judge])[0]
    taken: set[str] = set()
    agents: list[AgentConfig] = []
    for index, choice in enumerate(choices):
        base = by_id.get(choice.id) if choice.id else None
        if choice.id and base is None:
            raise InvalidArgumentsError(
                f"agents[{index}].id: no agent '{choice.id}' in the server's configuration "
                f"(agents: {', '.join(by_id) or 'none'})"
            )
        agent = _edited(index, base or _new_agent(choice.role, template), choice)
        agent = agent.model_copy(update={"id": _unique(agent.id, taken), "enabled": True})
        taken.add(agent.id)
        agents.append(agent)
    return config.model_copy(update={"agents": agents})


def _new_agent(role: str, template: AgentConfig) -> AgentConfig:
    normal = role.strip().lower()
    return template.model_copy(
        update={
            "id": f"agent-{normal}",
            "name": ROLE_TITLES.get(normal, normal.title()),
            "role": normal,
            "system_prompt_path": None,
            "summary_prompt_path": None,
            "clarification_prompt_path": None,
            "position": None,
            "persona": None,
        }
    )


def _edited(index: int, base: AgentConfig, choice: AgentChoice) -> AgentConfig:
    values = base.model_dump()
    if choice.id is None or choice.role.strip().lower() != base.role:
        values["role"] = choice.role
    if choice.name is not None:
        values["name"] = choice.name
    if choice.provider is not None and choice.provider.strip().lower() != base.provider:
        provider = choice.provider.strip().lower()
        if provider not in known_providers():
            raise InvalidArgumentsError(
                f"agents[{index}].provider: unknown provider '{choice.provider}' ({describe_known_providers()})"
            )
        values.update(provider=provider, base_url=None, api_key_env=None, model=default_model_for(provider))
    if choice.model is not None:
        if not choice.model.strip():
            raise InvalidArgumentsError(f"agents[{index}].model: must not be empty")
        values["model"] = choice.model.strip()
    if choice.temperature is not None:
        values["temperature"] = choice.temperature
    try:
        return AgentConfig.model_validate(values)
    except ValidationError as exc:
        raise InvalidArgumentsError(f"agents[{index}].{describe_validation_error(exc)}") from None


def _unique(agent_id: str, taken: set[str]) -> str:
    if agent_id not in taken:
        return agent_id
    number = 2
    while f"{agent_id}-{number}" in taken:
        number += 1
    return f"{agent_id}-{number}"
