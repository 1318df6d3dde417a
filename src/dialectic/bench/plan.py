"""What a run will do: a new :class:`RunSpec` from the command line, or the stored one on ``--resume``.

Options the user did not give are ``None`` here, so on resume only what was given is
checked against the stored run — repeating the original command with ``--resume ID``
appended works, and changing the questions, arms or model of a run half-way is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from dialectic.bench.arms import DEFAULT_ARMS, DEFAULT_SAMPLING_TEMPERATURE, parse_arms
from dialectic.bench.extract import MATCH_MODES, MatchMode
from dialectic.bench.records import RunSpec
from dialectic.bench.store import new_run_id
from dialectic.bench.tasks import (
    DEFAULT_ARITHMETIC_ITEMS,
    MAX_OPERANDS,
    TASK_NAMES,
    Task,
    TaskName,
    arithmetic_task,
    jsonl_task,
)
from dialectic.core.config import SystemConfig
from dialectic.core.errors import ConfigError, InvalidArgumentsError
from dialectic.loading.config import apply_overrides, load_config


@dataclass(frozen=True)
class BenchOptions:
    task: str | None = None
    dataset: Path | None = None
    arms: str | None = None
    n: int | None = None
    seed: int | None = None
    operands: int | None = None
    match: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    provider: str | None = None
    model: str | None = None
    config: Path | None = None


@dataclass(frozen=True)
class Models:
    config: SystemConfig
    """For the dialectic arm: the whole configuration (``--provider``/``--model`` applied)."""
    directory: Path
    warnings: list[str]

    def agent_dicts(self) -> list[dict[str, object]]:
        """The bench agents: the configuration's debating agents, as they would be written in a file."""
        return [a.to_json_dict() for a in self.config.participants()]


def load_models(options: BenchOptions) -> Models:
    """``-c`` gives the agents (and the whole flow for the dialectic arm); ``--provider``/``--model`` override."""
    warnings: list[str] = []
    if options.config is not None:
        if not options.config.exists():
            raise ConfigError(f"config file {options.config} not found")
        loaded = load_config(options.config, explicit=True)
        base, directory, warnings = loaded.config, loaded.directory, list(loaded.warnings)
    else:
        base, directory = SystemConfig(), Path.cwd()
    resolved, more = apply_overrides(base, provider=options.provider, model=options.model)
    return Models(resolved, directory, warnings + more)


def new_spec(options: BenchOptions) -> tuple[RunSpec, Task, list[str]]:
    task_name = _task_name(options.task)
    match = _match(options.match)
    if options.temperature is not None and not 0.0 <= options.temperature <= 2.0:
        raise InvalidArgumentsError(f"--temperature must be between 0 and 2 (got {options.temperature})")
    if options.max_tokens is not None and options.max_tokens < 1:
        raise InvalidArgumentsError(f"--max-tokens must be at least 1 (got {options.max_tokens})")
    arms = [a.name for a in parse_arms(options.arms or DEFAULT_ARMS)]
    seed = options.seed if options.seed is not None else 0
    operands = options.operands if options.operands is not None else MAX_OPERANDS
    if task_name == "arithmetic":
        if options.dataset is not None:
            raise InvalidArgumentsError("the arithmetic task takes no PATH (did you mean: dialectic bench jsonl PATH?)")
        if match is not None:
            raise InvalidArgumentsError("--match applies to the jsonl task; arithmetic answers are integers")
        count = options.n if options.n is not None else DEFAULT_ARITHMETIC_ITEMS
        task = arithmetic_task(count, seed, operands)
        n: int | None = count
        dataset = None
    else:
        if options.dataset is None:
            raise InvalidArgumentsError("the jsonl task needs the dataset's PATH: dialectic bench jsonl PATH")
        if options.operands is not None:
            raise InvalidArgumentsError("--operands applies to the arithmetic task only")
        n = options.n
        task = jsonl_task(options.dataset, n, match)
        dataset = str(options.dataset.expanduser().absolute())
    models = load_models(options)
    spec = RunSpec(
        id=new_run_id(),
        created_at=datetime.now(UTC),
        task=task_name,
        dataset=dataset,
        n=n,
        seed=seed,
        operands=operands,
        match=match,
        arms=arms,
        temperature=options.temperature if options.temperature is not None else DEFAULT_SAMPLING_TEMPERATURE,
        max_tokens=options.max_tokens,
        agents=models.agent_dicts(),
        dialectic_config=models.config.to_json_dict(),
        config_dir=str(models.directory),
        fingerprint=task.fingerprint,
    )
    return spec, task, models.warnings


def check_resume(stored: RunSpec, options: BenchOptions) -> None:
    """Refuse options that contradict the stored run (a resumed run keeps what it started with)."""
    given: list[tuple[str, object, object]] = [
        ("TASK", options.task and _task_name(options.task), stored.task),
        ("PATH", options.dataset and str(options.dataset.expanduser().absolute()), stored.dataset),
        ("-n", options.n, stored.n),
        ("--seed", options.seed, stored.seed),
        ("--operands", options.operands, stored.operands),
        ("--match", _match(options.match), stored.match),
        ("--temperature", options.temperature, stored.temperature),
        ("--max-tokens", options.max_tokens, stored.max_tokens),
        ("--arms", options.arms and [a.name for a in parse_arms(options.arms)], stored.arms),
    ]
    if options.provider or options.model or options.config:
        given.append(("--provider/--model/-c", load_models(options).agent_dicts(), stored.agents))
    for flag, value, kept in given:
        if value is not None and value != kept:
            shown = ",".join(kept) if isinstance(kept, list) and all(isinstance(k, str) for k in kept) else kept
            raise InvalidArgumentsError(
                f"run {stored.id} was started with {flag} {_describe(shown)}; drop {flag} or give the same value"
            )


def _describe(value: object) -> str:
    if isinstance(value, list):
        return "(" + ", ".join(f"{a.get('provider')}/{a.get('model')}" for a in value if isinstance(a, dict)) + ")"
    return str(value)


def _task_name(task: str | None) -> TaskName:
    name = (task or "").strip().lower()
    if name not in TASK_NAMES:
        raise InvalidArgumentsError(f"unknown task '{task or ''}' (known: {', '.join(TASK_NAMES)})")
    return cast(TaskName, name)


def _match(match: str | None) -> MatchMode | None:
    if match is None:
        return None
    mode = match.strip().lower()
    if mode not in MATCH_MODES:
        raise InvalidArgumentsError(f"--match must be one of {', '.join(MATCH_MODES)} (got {match})")
    return cast(MatchMode, mode)
