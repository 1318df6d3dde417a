"""What a run will do: a new :class:`RunSpec` from the command line, or the stored one on ``--resume``.

Options the user did not give are ``None`` here, so on resume only what was given is
checked against the stored run — repeating the original command with ``--resume ID``
appended works, and changing the questions, arms or model of a run half-way is refused.
Resuming from a results file (``--resume results.json``, :func:`resume_from_results`) may
also extend the run with ``-n`` (the first items of a larger ``-n`` are the items of a
smaller one) and read a jsonl dataset from another path, as long as the questions the file
answered are the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from dialectic.bench.arms import DEFAULT_ARMS, DEFAULT_SAMPLING_TEMPERATURE, parse_arms
from dialectic.bench.options import BenchOptions
from dialectic.bench.records import RunSpec
from dialectic.bench.results_file import ResultsFile
from dialectic.bench.store import new_run_id
from dialectic.bench.tasks import (
    DEFAULT_ARITHMETIC_ITEMS,
    DEFAULT_GENERATED_ITEMS,
    MAX_OPERANDS,
    REASONING_GYM_PREFIX,
    TASK_NAMES,
    Task,
    TaskName,
    check_difficulty,
    generated_task,
    is_task_name,
    jsonl_task,
    parse_task_options,
    rg_task,
)
from dialectic.core.answers import MATCH_MODES, MatchMode
from dialectic.core.bounds import MAX_SEED, MAX_TOKENS, check_range
from dialectic.core.config import SystemConfig
from dialectic.core.errors import ConfigError, InvalidArgumentsError
from dialectic.loading.config import apply_overrides, load_config


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
        loaded = load_config(options.config, explicit=True, lenient=options.lenient)
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
    if options.max_tokens is not None:
        check_range("--max-tokens", options.max_tokens, 1, MAX_TOKENS)
    if options.seed is not None:
        check_range("--seed", options.seed, 0, MAX_SEED)
    arms = [a.name for a in parse_arms(options.arms or DEFAULT_ARMS)]
    seed = options.seed if options.seed is not None else 0
    operands = options.operands if options.operands is not None else MAX_OPERANDS
    difficulty: int | None = None
    task_options = parse_task_options(options.task_options)
    if task_options and not task_name.startswith(REASONING_GYM_PREFIX):
        raise InvalidArgumentsError(f"--task-option applies to reasoning-gym tasks (rg:NAME), not {task_name}")
    n: int | None
    if task_name.startswith(REASONING_GYM_PREFIX):
        n = options.n if options.n is not None else DEFAULT_GENERATED_ITEMS
        task = _rg_questions(task_name, options, n, seed, task_options)
        dataset = None
    elif task_name != "jsonl":
        if options.dataset is not None:
            raise InvalidArgumentsError(
                f"the {task_name} task takes no PATH (did you mean: dialectic bench jsonl PATH?)"
            )
        if match is not None:
            raise InvalidArgumentsError(
                f"--match applies to the jsonl task; {task_name} items are scored by their kind"
            )
        difficulty = _difficulty(task_name, options)
        if task_name == "arithmetic":
            operands = difficulty
        default_count = DEFAULT_ARITHMETIC_ITEMS if task_name == "arithmetic" else DEFAULT_GENERATED_ITEMS
        count = options.n if options.n is not None else default_count
        task = generated_task(task_name, count, seed, difficulty)
        n = count
        dataset = None
    else:
        if options.dataset is None:
            raise InvalidArgumentsError("the jsonl task needs the dataset's PATH: dialectic bench jsonl PATH")
        if options.operands is not None:
            raise InvalidArgumentsError("--operands applies to the arithmetic task only")
        if options.difficulty is not None:
            raise InvalidArgumentsError("--difficulty applies to the generated tasks; a jsonl dataset has none")
        n = options.n
        task = jsonl_task(options.dataset, n, match)
        dataset = str(options.dataset.expanduser().absolute())
    models = load_models(options)
    spec = RunSpec(
        id=new_run_id(),
        created_at=datetime.now(UTC),
        task=task_name,
        task_options=task_options,
        dataset=dataset,
        n=n,
        seed=seed,
        operands=operands,
        difficulty=difficulty,
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


def _rg_questions(task_name: str, options: BenchOptions, n: int, seed: int, task_options: dict[str, object]) -> Task:
    """A reasoning-gym dataset's questions; the flags of our own tasks' scoring and levels do not apply."""
    for flag, given in (("PATH", options.dataset), ("--match", options.match), ("--operands", options.operands)):
        if given is not None:
            raise InvalidArgumentsError(f"{flag} does not apply to {task_name}: its own scorer decides")
    if options.difficulty is not None:
        raise InvalidArgumentsError(
            f"--difficulty does not apply to {task_name}: set the dataset's own options with --task-option"
        )
    return rg_task(task_name, n, seed, task_options)


def check_resume(stored: RunSpec, options: BenchOptions, *, extendable: bool = False) -> None:
    """Refuse options that contradict the stored run (a resumed run keeps what it started with).

    ``extendable`` (resuming from a results file) lets ``-n`` and the dataset's PATH differ: the
    questions are then checked one by one (:func:`resume_from_results`)."""
    given: list[tuple[str, object, object]] = [
        ("TASK", options.task and _task_name(options.task), stored.task),
        ("PATH", options.dataset and str(options.dataset.expanduser().absolute()), stored.dataset),
        ("-n", options.n, stored.n),
        ("--seed", options.seed, stored.seed),
        ("--operands", options.operands, stored.operands),
        ("--difficulty", options.difficulty, stored_difficulty(stored)),
        ("--match", _match(options.match), stored.match),
        ("--task-option", options.task_options and parse_task_options(options.task_options), stored.task_options),
        ("--temperature", options.temperature, stored.temperature),
        ("--max-tokens", options.max_tokens, stored.max_tokens),
        ("--arms", options.arms and [a.name for a in parse_arms(options.arms)], stored.arms),
    ]
    if options.provider or options.model or options.config:
        given.append(("--provider/--model/-c", load_models(options).agent_dicts(), stored.agents))
    for flag, value, kept in given:
        if extendable and flag in ("-n", "PATH"):
            continue
        if value is not None and value != kept:
            shown = ",".join(kept) if isinstance(kept, list) and all(isinstance(k, str) for k in kept) else kept
            raise InvalidArgumentsError(
                f"run {stored.id} was started with {flag} {_describe(shown)}; drop {flag} or give the same value"
            )


def resume_from_results(loaded: ResultsFile, options: BenchOptions) -> tuple[RunSpec, Task]:
    """The run of a results file, to be continued here: its definition, with ``-n`` (and a jsonl
    dataset's PATH) as given now, and its questions rebuilt.

    Refused, in one line: options that contradict the run (as for ``--resume RUN_ID``), questions that
    changed (the same ``-n`` with another fingerprint), and a finished item the rebuilt questions do not
    ask in the same words and with the same answer, or by an arm the run does not have.
    """
    stored, where = loaded.spec, loaded.path
    check_resume(stored, options, extendable=True)
    n = options.n if options.n is not None else stored.n
    update: dict[str, object] = {"n": n}
    if stored.task != "jsonl":
        count = n if n is not None else DEFAULT_ARITHMETIC_ITEMS
        task = built_task(stored, count)
    else:
        if options.dataset is not None:
            dataset = options.dataset.expanduser().absolute()
        else:
            dataset = Path(stored.dataset or "")
            if not dataset.is_file():
                raise InvalidArgumentsError(
                    f"run {stored.id} read its questions from {dataset}, which is not here; "
                    f"give the dataset: dialectic bench jsonl PATH --resume {where}"
                )
        task = jsonl_task(dataset, n, stored.match)
        update["dataset"] = str(dataset)
    if n == stored.n and task.fingerprint != stored.fingerprint:
        raise InvalidArgumentsError(
            f"the questions of run {stored.id} have changed since {where} was written "
            f"({update.get('dataset') or stored.task}); start a new run instead of resuming"
        )
    check_results_fit(loaded, task)
    if options.config is not None:
        update["config_dir"] = str(load_models(options).directory)
    update["fingerprint"] = task.fingerprint
    return stored.model_copy(update=update), task


SAME_RUN_FIELDS = (
    "created_at",
    "task",
    "seed",
    "operands",
    "difficulty",
    "match",
    "arms",
    "temperature",
    "max_tokens",
    "agents",
)
"""What two definitions of one run id must share: all but what a resume from a file may change
(``n``, the dataset's path, the fingerprint that follows from them, the config's directory)."""


def same_run(kept: RunSpec, other: RunSpec) -> bool:
    """Whether ``other`` is ``kept`` (the same run, possibly extended or moved), not another run of the same id."""
    return kept.id == other.id and all(getattr(kept, key) == getattr(other, key) for key in SAME_RUN_FIELDS)


def check_results_fit(loaded: ResultsFile, task: Task) -> None:
    """Every finished result of the file is by an arm of its run, on an item ``task`` asks the same way."""
    arms = set(loaded.spec.arms)
    items = {item.id: item for item in task.items}
    for result in loaded.results:
        if result.arm not in arms:
            raise InvalidArgumentsError(
                f"{loaded.path} has results of arm {result.arm}, which run {loaded.spec.id} does not have "
                f"(its arms: {','.join(loaded.spec.arms)})"
            )
        item = items.get(result.item_id)
        if item is None:
            raise InvalidArgumentsError(
                f"{loaded.path} has a result for item {result.item_id}, which this run's {len(items)} items do "
                "not include; give a larger -n"
            )
        if (item.index, item.question, item.truth, item.match) != (
            result.index,
            result.question,
            result.truth,
            result.match,
        ):
            raise InvalidArgumentsError(
                f"item {result.item_id} of {loaded.path} is not the item {item.id} of these questions "
                "(another question or answer); start a new run instead of resuming"
            )


def built_task(spec: RunSpec, n: int) -> Task:
    """The ``n`` questions of a generated run (ours or reasoning-gym's), rebuilt from its definition."""
    if spec.task.startswith(REASONING_GYM_PREFIX):
        return rg_task(spec.task, n, spec.seed, spec.task_options)
    return generated_task(spec.task, n, spec.seed, stored_difficulty(spec))


def stored_difficulty(spec: RunSpec) -> int | None:
    """The run's level: stored since generated tasks other than arithmetic; before, arithmetic's operands."""
    if spec.difficulty is not None:
        return spec.difficulty
    return spec.operands if spec.task == "arithmetic" else None


def _difficulty(task_name: TaskName, options: BenchOptions) -> int:
    """The level of a generated task: ``--difficulty``, else arithmetic's ``--operands``, else the task's default."""
    if task_name != "arithmetic":
        if options.operands is not None:
            raise InvalidArgumentsError(
                f"--operands applies to the arithmetic task only; use --difficulty for {task_name}"
            )
        return check_difficulty(task_name, options.difficulty)
    if options.operands is not None and options.difficulty is not None and options.operands != options.difficulty:
        raise InvalidArgumentsError(
            f"--operands {options.operands} and --difficulty {options.difficulty} disagree: give one of them"
        )
    if options.operands is not None:
        return check_difficulty(task_name, options.operands, "--operands")
    return check_difficulty(task_name, options.difficulty)


def _describe(value: object) -> str:
    if isinstance(value, list):
        return "(" + ", ".join(f"{a.get('provider')}/{a.get('model')}" for a in value if isinstance(a, dict)) + ")"
    return str(value)


def _task_name(task: str | None) -> TaskName:
    name = (task or "").strip().lower()
    if not is_task_name(name):
        known = ", ".join(TASK_NAMES)
        raise InvalidArgumentsError(
            f"unknown task '{task or ''}' (known: {known}, or rg:NAME for a reasoning-gym dataset)"
        )
    return name


def _match(match: str | None) -> MatchMode | None:
    if match is None:
        return None
    mode = match.strip().lower()
    if mode not in MATCH_MODES:
        raise InvalidArgumentsError(f"--match must be one of {', '.join(MATCH_MODES)} (got {match})")
    return cast(MatchMode, mode)
