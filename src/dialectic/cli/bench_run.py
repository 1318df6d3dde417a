"""What ``dialectic bench`` does: plan the run, check it, run every arm on every item, report.

The command checks everything it can before the first call (arguments, dataset, config,
API keys, ``--plot``'s matplotlib), prints the run id with the command that resumes it,
then runs every arm on every item with a progress bar on stderr, saving each result as it
finishes. ``-o`` is rewritten as results finish (every few seconds, :mod:`dialectic.bench.checkpoint`)
and when the run stops, so that a committed results file can resume the run on another machine
(``--resume results.json`` imports its finished items into the store first). The Markdown summary
goes to stdout; ``-o``, ``--report`` and ``--plot`` write files.
Errors are raised as ``dialectic.core.errors`` exceptions; the app turns them into exit codes.
Imported by :mod:`dialectic.cli.bench_command` when the command runs, never while the app is
built: no other command loads the bench harness.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from dialectic.bench.arms import ArmEnv, ArmSpec
from dialectic.bench.checkpoint import CHECKPOINT_INTERVAL_S, Checkpoint
from dialectic.bench.plan import BenchOptions, check_resume, new_spec, resume_from_results, same_run
from dialectic.bench.plot import pareto_path, require_matplotlib, write_plot
from dialectic.bench.progress import RichProgress
from dialectic.bench.records import ItemResult, RunSpec
from dialectic.bench.report import to_json, to_markdown
from dialectic.bench.results_file import ResultsFile, names_results_file, read_results
from dialectic.bench.runner import ProgressSink, arms_for, calling_agents, env_for, run_bench, task_for
from dialectic.bench.store import BenchStore, bench_database
from dialectic.bench.summary import BenchSummary, summarize
from dialectic.bench.tasks import Task
from dialectic.cli.command_setup import load_environment
from dialectic.cli.console import Terminal
from dialectic.cli.interruptions import Terminated
from dialectic.cli.output import OutputTarget, check_output, write_output
from dialectic.cli.ray_cluster import check_ray_address, joined_cluster
from dialectic.cli.signals import StopSignals
from dialectic.core.bounds import MAX_CONCURRENCY, check_range
from dialectic.core.config import AgentConfig
from dialectic.core.errors import DialecticError, InvalidArgumentsError
from dialectic.llm.registry import ProviderPool
from dialectic.llm.retry import RetryPolicy
from dialectic.store import resolve_data_dir

make_pool: Callable[[], ProviderPool] = ProviderPool
"""How the command gets its providers; tests and embedders replace it to inject a provider."""


@dataclass(frozen=True)
class BenchFlags:
    """``dialectic bench``'s flags, built once by :func:`dialectic.cli.bench_command.bench` and passed whole:
    what to ask (``options``, the bench's own) and how to run it here."""

    options: BenchOptions
    concurrency: int | None = None
    output: Path | None = None
    report: Path | None = None
    plot: Path | None = None
    resume: str | None = None
    store: str | None = None
    env_file: Path | None = None
    ray: str | None = None


def run_bench_command(run: BenchFlags) -> None:
    """``dialectic bench``: the flags are described in :func:`dialectic.cli.bench_command.bench`."""
    term = Terminal()
    load_environment(run.env_file)
    _check_flags(run)
    resume, ray, output = run.resume, run.ray, run.output
    resume_file = read_results(Path(resume).expanduser()) if resume and names_results_file(resume) else None
    if resume_file is not None and output is None:
        output = resume_file.path  # the file the run came from is kept current as the run goes on
    data_dir = resolve_data_dir(run.store, os.environ)
    with BenchStore(bench_database(data_dir)) as bench_store:
        spec, bench_task = _plan(bench_store, run.options, resume, resume_file, term)
        pool = make_pool()
        env = env_for(spec, pool, RetryPolicy())
        pool.check(calling_agents(spec, env))
        concurrency = run.concurrency
        if concurrency is None:
            concurrency = default_concurrency(calling_agents(spec, env))
        output_target, report_target, plot_target = _targets(output, run.report, run.plot)
        if resume_file is not None:
            added = bench_store.import_run(spec, resume_file.results)
            term.line(f"imported {added} finished results of run {spec.id} from {resume_file.path}", style="dim")
        elif resume is None:
            bench_store.create_run(spec)
        hint = _resume_hint(spec.id, data_dir, output_target)
        term.line(
            f"bench run {spec.id}: {len(bench_task.items)} items × {len(spec.arms)} arms, saved in "
            f"{bench_store.path} (resume with: {hint})",
            style="dim",
        )
        outputs = _ResultsOutput(spec, bench_task, arms_for(spec), output, output_target)
        signals = StopSignals()
        try:
            with ExitStack() as cluster:
                if ray is not None:  # joined before our signal handlers are installed: Ray sets its own
                    cluster.enter_context(joined_cluster(ray, lambda text: term.line(text, style="dim")))
                with signals.installed(), RichProgress(term.console) as progress:
                    checkpoint = Checkpoint(
                        progress, bench_store.results(spec.id), outputs.write, interval_s=CHECKPOINT_INTERVAL_S
                    )
                    work = _execute(spec, bench_task, env, bench_store, concurrency, checkpoint, on_ray=ray is not None)
                    signals.run(work)
        except (DialecticError, KeyboardInterrupt, Terminated):
            done = len(bench_store.done(spec.id))
            total = len(bench_task.items) * len(spec.arms)
            saved = outputs.write_on_stop(bench_store, spec.id)
            term.line(f"run {spec.id} stopped with {done} of {total} results saved{saved}; resume with: {hint}")
            raise
        results = bench_store.results(spec.id)
    summary = outputs.summary(results)
    outputs.write(results)
    _publish(summary, report_target, plot_target, run.plot)


def _check_flags(run: BenchFlags) -> None:
    """What the flags alone can get wrong, before anything is created or called."""
    if run.concurrency is not None:
        check_range("--concurrency", run.concurrency, 1, MAX_CONCURRENCY)
    if run.ray is not None:
        check_ray_address(run.ray)
    if run.plot is not None:
        require_matplotlib()


def _targets(
    output: Path | None, report: Path | None, plot: Path | None
) -> tuple[OutputTarget | None, OutputTarget | None, OutputTarget | None]:
    """``-o``, ``--report`` and ``--plot`` checked (and the Pareto plot beside ``--plot``) before the run."""
    output_target, report_target, plot_target = (
        check_output(path, flag) if path is not None else None
        for path, flag in ((output, "--output"), (report, "--report"), (plot, "--plot"))
    )
    if plot_target is not None and not plot_target.discard:
        check_output(pareto_path(plot_target.path), "--plot")
    return output_target, report_target, plot_target


@dataclass(frozen=True)
class _ResultsOutput:
    """The run's results as the ``-o`` file holds them (rewritten at checkpoints, on a stop and at the end)."""

    spec: RunSpec
    task: Task
    arm_specs: list[ArmSpec]
    output: Path | None
    target: OutputTarget | None

    def summary(self, results: list[ItemResult]) -> BenchSummary:
        return summarize(self.spec, self.task.description, len(self.task.items), self.arm_specs, results)

    def write(self, results: list[ItemResult]) -> None:
        if self.target is not None and not self.target.discard:
            write_output(self.target, to_json(self.summary(results), results))

    def write_on_stop(self, bench_store: BenchStore, run_id: str) -> str:
        """Write what the stopped run saved; the end of the line that says so (where, or why not)."""
        writes = self.target is not None and not self.target.discard
        saved = f"; {self.output} holds them" if writes else ""
        try:
            self.write(bench_store.results(run_id))
        except DialecticError as exc:
            saved = f"; could not write them to {self.output}: {exc}"
        return saved


def _publish(
    summary: BenchSummary, report: OutputTarget | None, plot: OutputTarget | None, plot_flag: Path | None
) -> None:
    """The Markdown summary to stdout and ``--report``, and the plots to ``--plot``."""
    markdown = to_markdown(summary)
    _write(report, markdown)
    if plot_flag is not None and plot is not None and not plot.discard:
        try:
            write_plot(summary, plot.path)
        except OSError as exc:
            raise InvalidArgumentsError(f"cannot write --plot {plot_flag}: {exc.strerror or exc}") from None
    sys.stdout.write(markdown)
    sys.stdout.flush()


def _plan(
    bench_store: BenchStore,
    options: BenchOptions,
    resume: str | None,
    resume_file: ResultsFile | None,
    term: Terminal,
) -> tuple[RunSpec, Task]:
    if resume_file is not None:
        spec, task = resume_from_results(resume_file, options)
        kept = bench_store.find_run(spec.id)
        if kept is not None and not same_run(kept, spec):
            raise InvalidArgumentsError(
                f"{bench_store.path} already holds a run {spec.id} that is not the run of {resume_file.path}; "
                "give another --store"
            )
        return spec, task
    if resume is None:
        if options.task is None:
            raise InvalidArgumentsError(
                "give a TASK (arithmetic, word-problems, boolean-logic, dates, or jsonl PATH), or --resume RUN_ID"
            )
        spec, task, warnings = new_spec(options)
        for warning in warnings:
            term.warning(warning)
        return spec, task
    spec = bench_store.load_run(resume)
    check_resume(spec, options)
    return spec, task_for(spec)


LOCAL_PROVIDER = "local"
DEFAULT_CONCURRENCY = 4
"""(arm, item) pairs worked on at once when the flag is not given and some agent is not on the local model."""


def default_concurrency(participants: list[AgentConfig]) -> int:
    """One (arm, item) pair at a time on the local model: it answers one call at a time, so pairs run at once
    would only queue — and a debate whose calls wait behind other items' would see its rounds make no progress.
    """
    if participants and all(agent.provider == LOCAL_PROVIDER for agent in participants):
        return 1
    return DEFAULT_CONCURRENCY


async def _execute(
    spec: RunSpec,
    task: Task,
    env: ArmEnv,
    bench_store: BenchStore,
    concurrency: int,
    progress: ProgressSink,
    *,
    on_ray: bool = False,
) -> None:
    """The pairs left, here or (``on_ray``) on the Ray cluster joined; the results are saved here either way."""
    try:
        if on_ray:
            from dialectic.bench.ray_run import RayBench

            def note(text: str) -> None:
                sys.stderr.write(text + "\n")
                sys.stderr.flush()

            await RayBench(spec, task, env, bench_store, concurrency, progress=progress, note=note).run()
        else:
            await run_bench(spec, task, env, bench_store, concurrency=concurrency, progress=progress)
    finally:
        await env.pool.aclose()


def _resume_hint(run_id: str, data_dir: Path, output: OutputTarget | None) -> str:
    """The command that resumes the run here, and, with ``-o``, the one that resumes it anywhere."""
    default_dir = resolve_data_dir(None, os.environ)
    flag = "" if data_dir.absolute() == default_dir.absolute() else f" --store {data_dir}"
    hint = f"dialectic bench --resume {run_id}{flag}"
    if output is not None and not output.discard:
        hint += f"; on another machine, from the results file: dialectic bench --resume {output.path}"
    return hint


def _write(target: OutputTarget | None, text: str) -> None:
    if target is not None:
        write_output(target, text)
