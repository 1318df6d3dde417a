"""The team's pool (``debate.team``, ``--pool POOL.json --team N``): read, checked, laid into the configuration.

A pool file is JSON: a list of agent configurations exactly like the configuration's ``agents``
entries, or the same list as ``{"agents": [...]}``. Every mistake is a one-line ``ConfigError``
naming the file (exit 4); a bad ``--team`` or a flag without its partner is an ``InvalidArgumentsError``
(exit 2). The pool's agents are kept in the configuration (``debate.team.agents``), so the engine picks
from what was checked here, with the store's ratings, when the debate starts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from dialectic.core.config import MIN_TEAM_SIZE, AgentConfig, SystemConfig, TeamSettings, unique_ids
from dialectic.core.errors import ConfigError, InvalidArgumentsError
from dialectic.core.files import POOL_FILE, parse_json, read_user_text
from dialectic.loading.config import check_unknown_keys, describe_validation_error, known_provider_agent
from dialectic.loading.keys import unknown_keys

_AGENTS: TypeAdapter[list[AgentConfig]] = TypeAdapter(list[AgentConfig])


def parse_pool(path: Path | str, text: str, *, lenient: bool = False) -> list[AgentConfig]:
    """The pool file's agents (``path`` only names the file in messages); a key an agent configuration does not
    know is an error, as in a configuration file, unless ``lenient`` (then it is ignored)."""
    try:
        data: Any = parse_json(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"invalid JSON in pool file {path} at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    if isinstance(data, dict) and "agents" in data:
        data = data["agents"]
    if not isinstance(data, list) or not data:
        raise ConfigError(f'pool file {path} must hold a list of agents, or {{"agents": [...]}}')
    if not lenient:
        unknown = [
            key
            for index, item in enumerate(data)
            if isinstance(item, dict)
            for key in unknown_keys(AgentConfig, item, f"agents[{index}].")
        ]
        check_unknown_keys(unknown, f"invalid pool file {path}")
    try:
        agents = _AGENTS.validate_python(data)
    except ValidationError as exc:
        raise ConfigError(f"invalid pool file {path}: agents{describe_validation_error(exc)}") from None
    try:
        unique_ids(agents, "agent")
    except ValueError as exc:
        raise ConfigError(f"invalid pool file {path}: {exc}") from None
    return [known_provider_agent(agent, f"invalid pool file {path}: agents[{i}]") for i, agent in enumerate(agents)]


def read_pool(path: Path, shown: str | None = None, *, lenient: bool = False) -> list[AgentConfig]:
    """The agents of the pool file ``path`` (``shown``: how messages name it, default ``path``)."""
    return parse_pool(shown or path, read_user_text(path, POOL_FILE), lenient=lenient)


def with_team(
    config: SystemConfig,
    config_dir: Path,
    *,
    pool: Path | None = None,
    size: int | None = None,
    lenient: bool = False,
) -> SystemConfig:
    """``config`` with ``debate.team`` set from the flags (``--pool``, ``--team``) over the file's, its pool read.

    A relative ``pool`` flag is relative to the working directory, ``debate.team.pool`` to ``config_dir``."""
    team = config.debate.team
    if pool is None and size is None and team is None:
        return config
    if size is not None and size < MIN_TEAM_SIZE:
        raise InvalidArgumentsError(f"--team {size}: a team has at least {MIN_TEAM_SIZE} agents")
    if pool is None and (team is None or (team.pool is None and not team.agents)):
        raise InvalidArgumentsError("--team N picks the agents from a pool: give --pool POOL.json too")
    if size is None and team is None:
        raise InvalidArgumentsError("--pool POOL.json needs --team N: how many of its agents take part")
    wanted = size if size is not None else team.size if team is not None else MIN_TEAM_SIZE
    named = str(pool) if pool is not None else team.pool if team is not None else None
    if pool is not None:
        agents = read_pool(pool, named, lenient=lenient)
    elif team is not None and team.pool is not None:
        agents = read_pool(config_dir / team.pool, named, lenient=lenient)
    else:
        inline = team.agents if team is not None else []
        agents = [known_provider_agent(a, f"debate.team.agents[{i}]") for i, a in enumerate(inline)]
    enabled = sum(agent.enabled for agent in agents)
    if wanted > enabled:
        where = f"the pool {named}" if named else "the pool"
        if size is not None:
            raise InvalidArgumentsError(f"--team {wanted}: {where} has only {enabled} enabled agent(s)")
        raise ConfigError(f"debate.team.size: {wanted} is more than the {enabled} enabled agent(s) of {where}")
    if wanted > config.limits.max_agents:
        raise ConfigError(
            f"a team of {wanted} is more than the limit of {config.limits.max_agents} agents; "
            "raise limits.maxAgents in the config file if it really needs more"
        )
    settings = TeamSettings(pool=named, size=wanted, agents=agents)
    return config.model_copy(update={"debate": config.debate.model_copy(update={"team": settings})})
