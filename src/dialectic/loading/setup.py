"""The front door to a configuration: one call that loads, resolves and checks it, for every entry point.

``dialectic debate``, ``dialectic serve``, the MCP server and the Python API all start a debate
from a configuration the same way: the file (or the defaults, with a provider chosen as the CLI
chooses it when there is no file), the caller's overrides, the local model's limits, and then
the checks that must pass before anything is created: the prompt files, the providers and their
keys, the prices a cost budget needs. :func:`prepare_config` does that; :func:`check_ready`
does the checks alone, for a saved configuration about to be resumed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from dialectic.core.config import AgentConfig, CacheMode, SystemConfig, with_cache
from dialectic.core.pricing import PriceTable
from dialectic.engine.budget import check_budget_prices, with_limits
from dialectic.llm.local_models import LARGER_MODEL, is_local_available
from dialectic.llm.registry import ProviderPool
from dialectic.loading.config import (
    DEFAULT_CONFIG_FILENAME,
    FLAG_NAMES,
    OverrideNames,
    apply_overrides,
    check_prompt_files,
    choose_default_provider,
    load_config,
    size_local_debate,
    with_context_flags,
    with_local_limits,
    with_local_panel,
)
from dialectic.loading.pool import with_team


@dataclass(frozen=True)
class Overrides:
    """What a caller lays over the configuration (the CLI's flags, an API call's arguments)."""

    rounds: int | None = None
    roles: str | None = None
    """Comma-separated roles: keep only the agents with these."""
    provider: str | None = None
    model: str | None = None
    debate_format: str | None = None
    problem_kind: str | None = None
    max_answers: int | None = None
    """``--max-answers``: the adaptive protocol's budget (``debate.answers.maxAnswers``)."""
    allow_outside_prompts: bool = False
    budget_usd: float | None = None
    budget_tokens: int | None = None
    context_dir: Path | None = None
    context_mode: str | None = None
    cache: CacheMode | None = None
    """``debate.cache`` (``--cache``: ``read``); ``None`` keeps the configured one."""
    team_pool: Path | None = None
    """``--pool``: the pool file the team is picked from (``debate.team.pool``)."""
    team_size: int | None = None
    """``--team``: how many agents of the pool take part (``debate.team.size``)."""
    names: OverrideNames = FLAG_NAMES
    """How the errors spell the overrides: the CLI's flags, or a front door's arguments."""
    lenient: bool = False
    """``--lenient``: unknown keys in the file (and its pool) are warnings, not an error (never under
    ``budget`` or ``limits``)."""


@dataclass(frozen=True)
class PreparedConfig:
    """A configuration ready to start debates from."""

    config: SystemConfig
    directory: Path
    """Where its prompt and context paths resolve."""
    from_file: Path | None
    """The file it was read from; ``None`` for the defaults."""
    warnings: list[str] = field(default_factory=list)
    """Things the user should know and may fix (unknown keys, an override that changed nothing)."""
    notes: list[str] = field(default_factory=list)
    """What was chosen for the user (the provider, a local debate's size), one line each."""


def prepare_config(
    path: Path | None = None, overrides: Overrides | None = None, *, size_local: bool = False, check: bool = True
) -> PreparedConfig:
    """Load ``path`` (else ``./debate-config.json`` if it exists, else the defaults), apply ``overrides``, check.

    Without a file and without a provider, the provider is chosen as ``dialectic debate`` chooses
    it (a key in the environment, else the embedded local model), and said in ``notes``. With
    ``size_local`` a debate on the local model without a file is sized to a few minutes on a CPU
    (unless the overrides chose rounds or roles). Raises the configuration's errors (exit 2 or 4):
    nothing is created before they pass. ``check=False`` leaves :func:`check_ready` to the caller
    (the CLI checks the problem first, so that a mistake in it is the first thing said)."""
    wanted = overrides or Overrides()
    loaded = load_config(path or Path(DEFAULT_CONFIG_FILENAME), explicit=path is not None, lenient=wanted.lenient)
    # With no file and a provider given, the built-in defaults are what was asked for: no "no config file" warning.
    warnings = [] if loaded.path is None and wanted.provider is not None else list(loaded.warnings)
    notes: list[str] = []
    provider, model = wanted.provider, wanted.model
    if loaded.path is None and provider is None:
        choice = choose_default_provider(os.environ, local_available=is_local_available())
        provider, model = choice.provider, model or choice.model
        notes.append(f"using provider '{choice.provider}' ({model}): {choice.reason}")
    resolved, override_warnings = apply_overrides(
        loaded.config,
        rounds=wanted.rounds,
        roles=wanted.roles,
        provider=provider,
        model=model,
        allow_outside_prompts=wanted.allow_outside_prompts,
        debate_format=wanted.debate_format,
        problem_kind=wanted.problem_kind,
        max_answers=wanted.max_answers,
        names=wanted.names,
    )
    if size_local and loaded.path is None:
        resolved, sizing = size_local_debate(
            resolved, rounds_given=wanted.rounds is not None, agents_given=wanted.roles is not None
        )
        notes += [sizing] if sizing else []
        if wanted.model is None:
            larger = LARGER_MODEL if is_local_available(LARGER_MODEL) else None
            resolved, panel = with_local_panel(resolved, larger=larger)
            notes += [panel] if panel else []
    resolved = with_limits(with_local_limits(resolved), wanted.budget_usd, wanted.budget_tokens)
    resolved = with_context_flags(resolved, wanted.context_dir, wanted.context_mode, config_dir=loaded.directory)
    if wanted.cache is not None:
        resolved = with_cache(resolved, wanted.cache)
    resolved = with_team(
        resolved, loaded.directory, pool=wanted.team_pool, size=wanted.team_size, lenient=wanted.lenient
    )
    if check:
        check_ready(resolved, loaded.directory)
    return PreparedConfig(resolved, loaded.directory, loaded.path, warnings + override_warnings, notes)


def check_ready(config: SystemConfig, directory: Path) -> None:
    """What must hold before a debate starts or resumes on ``config``: its prompt files are readable
    (relative to ``directory``), its providers are known and have their keys, and a cost budget has
    every participant's price."""
    check_prompt_files(config, directory)
    check_providers(config)
    check_budget_prices(config, PriceTable.of(config.pricing))


def check_providers(config: SystemConfig) -> None:
    """Every provider is known and has its API key (``MissingApiKeyError`` names the variable), the human
    seats' fallback models' and a team's whole pool included (any of its agents may be picked)."""
    participants: list[AgentConfig] = [*config.eligible(), config.judge, *config.fallbacks()]
    ProviderPool().check(participants)
