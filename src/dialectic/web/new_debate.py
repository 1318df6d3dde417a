"""A new debate asked for over the API: the request's shape, and how it becomes an engine request.

The server's own configuration (``dialectic serve -c``, or the defaults the CLI would use) is
the starting point. A request may pick roles, edit agents (provider, model, temperature),
choose the format, rounds and termination, turn clarifications on, or send a whole
configuration. Each field is checked with the CLI's own rules and messages, and every field's
message is returned at once.

What a request may never do: name files on the server's disk (prompt files; the server's own
configuration may), set or name API keys (they stay in the server's environment), send the
server's keys to an endpoint of its choosing (only the endpoints the server's configuration
uses), or raise the server's limits (see :mod:`dialectic.loading.client_config`).

Sizes are checked before any work: the schema caps every list and short text
(:data:`MAX_LIST_ITEMS`, :data:`MAX_NAME_CHARS`), then the number of agents is held to the
server's ``limits.maxAgents`` before an agent is built; nothing done per agent looks at the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from dialectic.agents.participants import ROLE_TITLES
from dialectic.core.config import (
    ANSWER_BUDGET,
    AgentConfig,
    LimitsConfig,
    SystemConfig,
    TerminationCondition,
    TerminationType,
    problem_text,
)
from dialectic.core.errors import ConfigError, DialecticError, InvalidArgumentsError
from dialectic.engine import DebateRequest
from dialectic.llm.registry import default_model_for, known_providers, unknown_provider
from dialectic.loading.client_config import Endpoint, check_endpoints, check_settings, endpoints_of, url_for
from dialectic.loading.config import (
    FIELD_NAMES,
    apply_overrides,
    check_prompt_files,
    describe_validation_error,
    with_local_limits,
)
from dialectic.loading.keys import KnownKeysModel
from dialectic.loading.setup import check_providers
from dialectic.web.endpoint_models import EndpointBook, endpoint_book
from dialectic.web.errors import fields_error
from dialectic.web.validation import encodable

MAX_LIST_ITEMS = 256
"""The most items a list in a request may have (agents, roles), whatever the server's limits: the schema
refuses more before anything is built from them."""
MAX_NAME_CHARS = 200
"""The most characters of a short text in a request (a role, an id, a name, a provider, a model)."""


class ApiModel(KnownKeysModel):
    """A request body. Text with a lone surrogate (JSON's ``"\\ud800"``) is refused (422 naming the field):
    it could be neither saved nor sent back. An unknown key is refused with the nearest known one."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _utf8_text(cls, value: Any) -> Any:
        return encodable(value)


class AgentChoice(ApiModel):
    """An agent to take part: one of the server's (by ``id``) or a new one with ``role``, edited."""

    role: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    id: str | None = Field(
        default=None, max_length=MAX_NAME_CHARS, description="An agent of the server's configuration to start from."
    )
    name: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    provider: str | None = Field(
        default=None,
        max_length=MAX_NAME_CHARS,
        description="A provider with an endpoint in the server's configuration (or --allow-endpoint).",
    )
    model: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    temperature: float | None = None
    endpoint: str | None = Field(
        default=None,
        max_length=MAX_NAME_CHARS,
        description="An endpoint of GET /api/models (its id): the agent calls it, with the model chosen.",
    )


class JudgeChoice(ApiModel):
    """The judge: the server's, on the endpoint and model chosen (``GET /api/models``), with its fallback."""

    endpoint: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    model: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    temperature: float | None = None
    fallback: str | None = Field(
        default=None,
        max_length=MAX_NAME_CHARS,
        description="Who writes the synthesis when the judge fails: an agent's id, auto or off (judge.fallback).",
    )


class TerminationChoice(ApiModel):
    type: TerminationType
    threshold: int | None = None


class NewDebate(ApiModel):
    """``POST /api/debates``: the problem, and overrides of the server's configuration (or a configuration)."""

    problem: str = Field(description="The problem to debate (a file's text, for an upload).")
    roles: list[str] | None = Field(
        default=None, max_length=MAX_LIST_ITEMS, description="Keep only the server's agents with these roles."
    )
    agents: list[AgentChoice] | None = Field(
        default=None, max_length=MAX_LIST_ITEMS, description="The agents taking part, in order."
    )
    judge: JudgeChoice | None = Field(default=None, description="The judge's endpoint, model and fallback.")
    format: str | None = Field(default=None, max_length=MAX_NAME_CHARS, description="The deliberation protocol.")
    rounds: int | None = None
    max_answers: int | None = Field(
        default=None,
        description="The adaptive protocol's most blind answers before its vote "
        f"({ANSWER_BUDGET[0]}-{ANSWER_BUDGET[1]}).",
    )
    termination: TerminationChoice | None = None
    clarify: bool = Field(default=False, description="Let the agents ask clarifying questions first.")
    config: dict[str, Any] | None = Field(
        default=None,
        description="A whole configuration (agents, judge, debate) instead of the server's: only the settings "
        "GET /api/options lists under 'configurable' (no prompt files, no keys, no limits, no prices), "
        "and only the server's endpoints.",
    )


@dataclass(frozen=True)
class NamedConfig:
    """A configuration ``dialectic serve --model NAME=CONFIG`` offers as the model ``dialectic/NAME``."""

    name: str
    config: SystemConfig
    directory: Path


@dataclass(frozen=True)
class ServerConfig:
    """The configuration the server started with, and the directory its prompt paths resolve in."""

    config: SystemConfig
    directory: Path
    extra_endpoints: frozenset[Endpoint] = frozenset()
    """Endpoints ``dialectic serve --allow-endpoint`` adds to those of the configuration."""
    named: tuple[NamedConfig, ...] = ()
    """The configurations ``--model NAME=CONFIG`` offers on the OpenAI-compatible API (:mod:`.openai_api`)."""

    @property
    def limits(self) -> LimitsConfig:
        return self.config.limits

    def endpoints(self) -> frozenset[Endpoint]:
        """Where a debate started over the API may send calls: the endpoints every agent and the judge
        of the server's configuration (and of the configurations named with ``--model``) use, and the
        ones added."""
        return endpoints_of(self.speakers()) | self.extra_endpoints

    def speakers(self) -> list[AgentConfig]:
        """Every agent and judge of the server's configurations."""
        configs = [self.config, *(n.config for n in self.named)]
        return [a for c in configs for a in (*c.agents, c.judge)]

    def book(self) -> EndpointBook:
        """The allowed endpoints by the ids the page and ``GET /api/models`` name them by."""
        return endpoint_book(self.endpoints(), self.speakers())


@dataclass(frozen=True)
class ResolvedDebate:
    request: DebateRequest
    warnings: list[str]


def resolve(body: NewDebate, server: ServerConfig) -> ResolvedDebate:
    """The engine request for ``body``; an :class:`ApiError` naming every field that is wrong."""
    _check_counts(body, server.limits)
    errors: dict[str, str] = {}
    text = _checked(errors, "problem", lambda: problem_text(body.problem, server.limits))
    base = server.config
    if body.config is not None:
        try:
            base = submitted_config(body.config, server)
        except DialecticError as exc:
            raise fields_error({"config": exc.message}) from None
    if body.agents is not None:
        base = (
            _checked(errors, "agents", lambda: with_agents(base, body.agents or [], server.endpoints(), server.book()))
            or base
        )
    if body.judge is not None:
        judge = body.judge
        base = _checked(errors, "judge", lambda: with_judge(base, judge, server.book())) or base
    roles = ",".join(body.roles) if body.roles is not None else None
    if body.format is not None:
        _checked(errors, "format", lambda: apply_overrides(base, debate_format=body.format, names=FIELD_NAMES))
    if body.rounds is not None:
        _checked(errors, "rounds", lambda: apply_overrides(base, rounds=body.rounds, names=FIELD_NAMES))
    if body.max_answers is not None:
        _checked(errors, "maxAnswers", lambda: apply_overrides(base, max_answers=body.max_answers, names=FIELD_NAMES))
    if roles is not None:
        _checked(errors, "roles", lambda: apply_overrides(base, roles=roles, names=FIELD_NAMES))
    termination = _checked(errors, "termination", lambda: _termination(body.termination))
    if errors or text is None:
        raise fields_error(errors)
    try:
        resolved, warnings = apply_overrides(
            base,
            rounds=body.rounds,
            roles=roles,
            debate_format=body.format,
            max_answers=body.max_answers,
            names=FIELD_NAMES,
        )
    except DialecticError as exc:
        raise fields_error({"agents" if body.agents is not None else "roles": exc.message}) from None
    if termination is not None:
        debate = resolved.debate.model_copy(update={"termination_condition": termination})
        resolved = resolved.model_copy(update={"debate": debate})
    resolved = with_local_limits(resolved)
    check_prompt_files(resolved, server.directory)
    try:
        check_endpoints(_speakers(resolved), server.endpoints())
    except ConfigError as exc:
        raise fields_error({"config" if body.config is not None else "agents": exc.message}) from None
    try:
        check_providers(resolved)
    except ConfigError as exc:
        raise fields_error({"agents": exc.message}) from None
    request = DebateRequest(problem=text, config=resolved, config_dir=server.directory, clarify=body.clarify)
    return ResolvedDebate(request, warnings)


def _check_counts(body: NewDebate, limits: LimitsConfig) -> None:
    """The number of agents against the server's limit, before one is built (the schema capped the lists)."""
    sent = body.config.get("agents") if body.config is not None else None
    for name, items in (("agents", body.agents), ("config", sent)):
        if isinstance(items, list) and len(items) > limits.max_agents:
            where = "agents" if name == "agents" else "config.agents"
            raise fields_error(
                {name: f"{where}: {len(items):,} agents, more than the server's limit of {limits.max_agents}"}
            )


def _speakers(config: SystemConfig) -> list[tuple[str, AgentConfig]]:
    return [*((f"agents[{i}]", a) for i, a in enumerate(config.agents) if a.enabled), ("judge", config.judge)]


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


def submitted_config(data: dict[str, Any], server: ServerConfig) -> SystemConfig:
    """A configuration sent with the request, held to what a client may set
    (:data:`~dialectic.loading.client_config.CLIENT_SETTINGS`), on the server's limits, prices and hooks."""
    check_settings(data)
    try:
        config = SystemConfig.model_validate(
            {
                **data,
                "limits": server.limits.model_dump(),
                "pricing": server.config.pricing,
                "hooks": server.config.hooks.model_dump(),
            }
        )
    except ValidationError as exc:
        raise ConfigError(f"invalid configuration: {describe_validation_error(exc)}") from None
    known = known_providers()
    for index, agent in enumerate([*config.agents, config.judge]):
        if agent.provider not in known:
            where = f"agents[{index}]" if index < len(config.agents) else "judge"
            raise ConfigError(f"invalid configuration: {where}.provider: {unknown_provider(agent.provider)}")
    return config


def with_judge(config: SystemConfig, choice: JudgeChoice, book: EndpointBook) -> SystemConfig:
    """``config`` with its judge on the endpoint, model and temperature chosen, and the fallback chosen."""
    values = config.judge.model_dump()
    if choice.endpoint is not None:
        values.update(book.settings(book.endpoint(choice.endpoint, "judge")))
    if choice.model is not None:
        if not choice.model.strip():
            raise InvalidArgumentsError("judge.model: must not be empty")
        values["model"] = choice.model.strip()
    if choice.temperature is not None:
        values["temperature"] = choice.temperature
    if choice.fallback is not None:
        values["fallback"] = choice.fallback.strip() or None
    try:
        judge = AgentConfig.model_validate(values)
        return SystemConfig.model_validate({**config.model_dump(), "judge": judge})
    except ValidationError as exc:
        raise InvalidArgumentsError(describe_validation_error(exc)) from None


def with_agents(
    config: SystemConfig, choices: list[AgentChoice], endpoints: frozenset[Endpoint], book: EndpointBook | None = None
) -> SystemConfig:
    """``config`` with ``choices`` as its agents: each starts from the server's agent it names (or one
    of the server's endpoint for a new role) and takes the provider, model and temperature chosen
    (a new provider at the one of its ``endpoints``), or the endpoint of ``book`` it names."""
    if not choices:
        raise InvalidArgumentsError("agents: choose at least one agent")
    book = book or endpoint_book(endpoints, config.agents)
    by_id = {a.id: a for a in config.agents}
    template = config.template_agent()
    taken: dict[str, int] = {}
    agents: list[AgentConfig] = []
    for index, choice in enumerate(choices):
        base = by_id.get(choice.id) if choice.id else None
        if choice.id and base is None:
            raise InvalidArgumentsError(
                f"agents[{index}].id: no agent '{choice.id}' in the server's configuration "
                f"(agents: {', '.join(by_id) or 'none'})"
            )
        agent = _edited(index, base or _new_agent(choice.role, template), choice, endpoints, book)
        agent = agent.model_copy(update={"id": _unique(agent.id, taken), "enabled": True})
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


def _edited(
    index: int, base: AgentConfig, choice: AgentChoice, endpoints: frozenset[Endpoint], book: EndpointBook
) -> AgentConfig:
    values = base.model_dump()
    if choice.id is None or choice.role.strip().lower() != base.role:
        values["role"] = choice.role
    if choice.name is not None:
        values["name"] = choice.name
    if choice.endpoint is not None:
        values.update(book.settings(book.endpoint(choice.endpoint, f"agents[{index}]")))
        values.update(deadline=None, fallback=None)
    elif choice.provider is not None and choice.provider.strip().lower() != base.provider:
        provider = choice.provider.strip().lower()
        if provider not in known_providers():
            raise InvalidArgumentsError(f"agents[{index}].provider: {unknown_provider(choice.provider)}")
        values.update(
            provider=provider,
            base_url=url_for(provider, endpoints),
            api_key_env=None,
            model=default_model_for(provider),
        )
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


def _unique(agent_id: str, taken: dict[str, int]) -> str:
    """``agent_id``, or ``agent_id-N`` with the first N not taken; recorded in ``taken`` (id → the last
    N tried), so a run of repeats costs one step each."""
    if agent_id not in taken:
        taken[agent_id] = 1
        return agent_id
    number = taken[agent_id]
    while True:
        number += 1
        candidate = f"{agent_id}-{number}"
        if candidate not in taken:
            taken[agent_id] = number
            taken[candidate] = 1
            return candidate
