"""What ``dialectic eval`` does: check everything, then score the debate with the evaluator agents.

Everything that can be checked without a model is checked first (the output target, the
configuration, the debate, API keys), so a mistake never costs a paid call. The scores go to
stdout as a table, or to ``--output``; warnings, failures and progress go to stderr. Imported
by :mod:`dialectic.cli.eval_command` when the command runs, never while the app is built.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError
from rich.console import Console

from dialectic.cli.command_setup import load_environment, open_debate_store
from dialectic.cli.console import Terminal
from dialectic.cli.output import OutputTarget, check_output, write_output
from dialectic.core.bounds import MAX_SAMPLES, check_range
from dialectic.core.domain import DebateState
from dialectic.core.errors import InvalidArgumentsError
from dialectic.core.files import DEBATE_FILE, parse_json, read_user_text
from dialectic.eval.config import load_eval_config
from dialectic.eval.evaluator import EvaluationPlan, EvaluationReport, SampleFailure, plan_evaluation, run_evaluation
from dialectic.eval.output import (
    OutputFormat,
    append_csv,
    check_csv_target,
    output_format,
    pattern_warning,
    render_json,
    render_markdown,
    scores_table,
)
from dialectic.llm.registry import ProviderPool
from dialectic.loading.config import describe_validation_error


@dataclass(frozen=True)
class EvalFlags:
    """``dialectic eval``'s flags, built once by :func:`dialectic.cli.eval_command.evaluate` and passed whole."""

    config: Path
    debate: str
    output: Path | None = None
    verbose: bool = False
    samples: int = 1
    store: str | None = None
    env_file: Path | None = None


def run_eval(flags: EvalFlags) -> None:
    """``dialectic eval``: the flags are described in :func:`dialectic.cli.eval_command.evaluate`."""
    config, debate, output, verbose, samples = flags.config, flags.debate, flags.output, flags.verbose, flags.samples
    load_environment(flags.env_file)
    check_range("--samples", samples, 1, MAX_SAMPLES)
    fmt = output_format(output) if output is not None else None
    loaded = load_eval_config(config)
    state, source = load_debate(debate, flags.store)
    plan = plan_evaluation(state, loaded)
    term = Terminal()
    for warning in plan.warnings:
        term.warning(warning)
    pool = ProviderPool()
    pool.check([prepared.config.agent_config() for prepared in plan.evaluators])
    target = check_output(output, "--output") if output is not None else None
    if target is not None and fmt == "csv" and not target.discard:
        check_csv_target(target.path)
    if verbose:
        _describe_plan(plan, loaded.path, source, term)
    term.line(f"Evaluating debate {state.id} with {len(plan.evaluators)} evaluator(s), {samples} sample(s) each")
    report = asyncio.run(_run(plan, pool, samples, source, lambda failure: _report_failure(failure, samples, term)))
    if verbose:
        _describe_results(report, term)
    _warn_patterns(report, samples, term)
    _emit(report, target, fmt, term)


def load_debate(debate: str, store: str | None) -> tuple[DebateState, str]:
    """The debate ``-d`` names, and where it came from: an exported JSON file, else a stored id."""
    path = Path(debate).expanduser()
    if path.is_file() or path.suffix.lower() == ".json":
        return _read_debate_file(path), str(path)
    debate_store, _ = open_debate_store(store, create=False)
    try:
        return debate_store.load(debate), f"store:{debate_store.location}"
    finally:
        debate_store.close()


def _read_debate_file(path: Path) -> DebateState:
    try:
        data = parse_json(read_user_text(path, DEBATE_FILE))
    except json.JSONDecodeError as exc:
        raise InvalidArgumentsError(
            f"invalid JSON in debate file {path} at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    try:
        return DebateState.model_validate(data)
    except ValidationError as exc:
        raise InvalidArgumentsError(f"{path} is not an exported debate: {describe_validation_error(exc)}") from None


async def _run(
    plan: EvaluationPlan,
    pool: ProviderPool,
    samples: int,
    source: str,
    on_failure: Callable[[SampleFailure], None],
) -> EvaluationReport:
    try:
        return await run_evaluation(plan, pool, samples=samples, source=source, on_failure=on_failure)
    finally:
        await pool.aclose()


def _report_failure(failure: SampleFailure, samples: int, term: Terminal) -> None:
    which = f" (sample {failure.sample} of {samples})" if samples > 1 else ""
    term.line(
        f"error: evaluator '{failure.evaluator_id}' ({failure.evaluator_name}) failed{which}: {failure.error}",
        style="red",
    )


def _describe_plan(plan: EvaluationPlan, config_path: Path, source: str, term: Terminal) -> None:
    term.line(f"Eval config: {config_path}")
    term.line(f"Debate: {plan.state.id} ({source})")
    for prepared in plan.evaluators:
        cfg, prompts = prepared.config, prepared.prompts
        term.line(
            f"  evaluator '{cfg.id}' ({cfg.name}): {cfg.provider}/{cfg.model}, "
            f"system prompt: {prompts.system_source.describe()}, user prompt: {prompts.user_source.describe()}"
        )


def _describe_results(report: EvaluationReport, term: Terminal) -> None:
    for outcome in report.evaluators:
        for result in outcome.results:
            overall = result.output.scores()["overall"].score
            term.line(
                f"  evaluator '{result.evaluator_id}' sample {result.sample}: overall {overall:g}, "
                f"{result.latency_ms} ms, {result.usage.total_tokens} tokens ({result.model})"
            )


def _warn_patterns(report: EvaluationReport, samples: int, term: Terminal) -> None:
    for outcome in report.evaluators:
        for result in outcome.results:
            if result.score_pattern is None:
                continue
            which = f" sample {result.sample} of {samples}" if samples > 1 else ""
            term.warning(
                f"evaluator '{result.evaluator_id}' ({outcome.config.name}){which}: "
                f"{pattern_warning(result.score_pattern)}"
            )


def _emit(report: EvaluationReport, output: OutputTarget | None, fmt: OutputFormat | None, term: Terminal) -> None:
    if output is None:
        Console(highlight=False).print(scores_table(report))
    elif output.discard:
        return
    elif fmt == "csv":
        append_csv(output.path, report)
        term.line(f"Appended the evaluation of {report.debate_id} to {output.path}")
    else:
        write_output(output, render_json(report) if fmt == "json" else render_markdown(report))
        term.line(f"Wrote the evaluation of {report.debate_id} to {output.path}")
