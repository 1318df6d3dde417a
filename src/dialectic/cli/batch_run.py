"""``dialectic batch``: the flags are described in :func:`dialectic.cli.batch_command.batch`.

Everything that can be wrong with the input (the problems file, the configuration, the flags) is
reported before the run is created and before any model call. The run's problems and which debate
each has are kept in ``batch.sqlite3`` beside the debate store; ``--resume RUN_ID`` continues it.
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import typer

from dialectic.batch.problems import check_problems, read_problems
from dialectic.batch.runner import DEFAULT_CONCURRENCY, FAILED, BatchRun, ResultsFile, summary_lines
from dialectic.batch.store import BATCH_FILENAME, BatchItem, BatchStore, new_run_id
from dialectic.cli.command_setup import load_environment
from dialectic.cli.hook_flags import HookFlags, checked_hook_flags
from dialectic.cli.interruptions import Terminated
from dialectic.cli.output import check_output
from dialectic.cli.ray_cluster import check_ray_address, joined_cluster
from dialectic.cli.signals import StopSignals
from dialectic.core.bounds import MAX_CONCURRENCY, check_range
from dialectic.core.errors import EXIT_GENERAL_ERROR, InvalidArgumentsError
from dialectic.front.debate import Debate
from dialectic.llm.registry import ProviderPool
from dialectic.loading.setup import Overrides, PreparedConfig, prepare_config
from dialectic.store import MEMORY_LOCATION, resolve_data_dir

PROGRESS_INTERVAL_S = 10.0
"""How often the progress line is printed when stderr is not a terminal."""
_DATABASE_SUFFIXES = (".sqlite3", ".db")


def batch_database(location: Path) -> Path:
    """``batch.sqlite3`` in the store's directory (beside the database when ``location`` names one)."""
    if location.suffix.lower() in _DATABASE_SUFFIXES or location.is_file():
        return location.parent / BATCH_FILENAME
    return location / BATCH_FILENAME


@dataclass(frozen=True)
class BatchFlags:
    """``dialectic batch``'s flags, built once by :func:`dialectic.cli.batch_command.batch` and passed whole."""

    problems: Path | None = None
    config: Path | None = None
    output: Path | None = None
    concurrency: int | None = None
    resume: str | None = None
    store: str | None = None
    env_file: Path | None = None
    ray: str | None = None
    notify: list[str] | None = None
    on_complete: str | None = None
    lenient: bool = False


def run_batch_command(run: BatchFlags) -> None:
    """``dialectic batch``: the flags are described in :func:`dialectic.cli.batch_command.batch`. A resumed run
    takes what its first run saved (configuration, output, concurrency, hooks) where a flag does not say."""
    load_environment(run.env_file)
    checked_hook_flags(run.notify, run.on_complete)  # a bad URL is a usage error before anything is created
    if run.concurrency is not None:
        check_range("--concurrency", run.concurrency, 1, MAX_CONCURRENCY)
    if run.ray is not None:
        check_ray_address(run.ray)
    if (run.problems is None) == (run.resume is None):
        raise InvalidArgumentsError("give either PROBLEMS.jsonl or --resume RUN_ID")
    data_dir = resolve_data_dir(run.store, os.environ)
    if str(data_dir) == MEMORY_LOCATION:
        raise InvalidArgumentsError("batch runs need a store that lasts: give --store a directory")
    items = read_problems(run.problems) if run.problems is not None else None
    with BatchStore(batch_database(data_dir)) as batch_store:
        if run.resume is not None:
            run_id, run = run.resume, _with_saved_settings(run, batch_store.settings(run.resume))
        else:
            run_id = new_run_id()
        concurrency = run.concurrency or DEFAULT_CONCURRENCY
        # a bad configuration stops here, before any call
        prepared = prepare_config(run.config, Overrides(lenient=run.lenient))
        prepared = with_hook_flags(prepared, checked_hook_flags(run.notify, run.on_complete))
        if items is not None and run.problems is not None:
            check_problems(run.problems, items, prepared.config.limits)  # debate's rule, before the run exists
        settings = _settings(prepared, run, concurrency)
        results = _results_file(run.output)
        if items is not None:
            batch_store.create(run_id, items, settings)
        else:
            batch_store.update_settings(run_id, settings)
        saved = batch_store.items(run_id)
        if results is not None:
            results.catch_up(saved)
        hint = _resume_hint(run_id, data_dir, run.store)
        done = sum(1 for item in saved if item.finished)
        at_once = max(1, min(concurrency, len(saved) - done))  # the workers: never more than the debates left
        _note(f"batch {run_id}: {len(saved)} problems ({done} finished), {at_once} at a time; resume with: {hint}")
        progress = BatchProgress(len(saved), done)
        began = time.monotonic()
        signals = StopSignals()
        try:
            with ExitStack() as cluster:
                if run.ray is not None:
                    cluster.enter_context(
                        joined_cluster(run.ray, _note)
                    )  # before our signal handlers: Ray sets its own
                    work = _execute_on_ray(run_id, batch_store, prepared, data_dir, concurrency, results, progress)
                else:
                    work = _execute(run_id, batch_store, prepared, str(data_dir), concurrency, results, progress)
                with signals.installed():
                    signals.run(work)
        except (KeyboardInterrupt, Terminated):
            progress.clear()
            finished = sum(1 for item in batch_store.items(run_id) if item.finished)
            _note(f"batch {run_id} stopped with {finished} of {len(saved)} debates finished; resume with: {hint}")
            raise
        progress.clear()
        records = [item.record for item in batch_store.items(run_id) if item.record is not None]
    _summarize(run_id, records, len(saved), time.monotonic() - began, run.output)


def _with_saved_settings(run: BatchFlags, settings: dict[str, Any]) -> BatchFlags:
    """A resumed run's flags: what its first run saved where a flag does not say."""
    return replace(
        run,
        config=run.config or (Path(settings["config"]) if settings.get("config") else None),
        output=run.output or (Path(settings["output"]) if settings.get("output") else None),
        concurrency=run.concurrency or int(settings.get("concurrency") or DEFAULT_CONCURRENCY),
        notify=run.notify or settings.get("notify") or None,
        on_complete=run.on_complete or settings.get("on_complete"),
    )


def _settings(prepared: PreparedConfig, run: BatchFlags, concurrency: int) -> dict[str, Any]:
    """What the run saves for a later ``--resume``: absolute paths, so it resumes from any directory."""
    return {
        "config": str(prepared.from_file.absolute()) if prepared.from_file is not None else None,
        "output": str(run.output.absolute()) if run.output is not None else None,
        "concurrency": concurrency,
        "notify": list(run.notify or []),
        "on_complete": run.on_complete,
    }


def _summarize(run_id: str, records: list[dict[str, Any]], total: int, elapsed_s: float, output: Path | None) -> None:
    """The summary on stdout; exit status 1 when a debate failed."""
    lines = summary_lines(run_id, records, total, elapsed_s)
    if output is not None:
        lines.append(f"results: {output}")
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
    if any(record["status"] == FAILED for record in records):
        raise typer.Exit(EXIT_GENERAL_ERROR)


def with_hook_flags(prepared: PreparedConfig, flags: HookFlags) -> PreparedConfig:
    """``prepared`` with ``--notify`` and ``--on-complete`` added to its hooks: each debate of the batch runs
    them when it finishes (its saved configuration holds them, on a Ray worker too)."""
    hooks = flags.over(prepared.config.hooks)
    if hooks is prepared.config.hooks:
        return prepared
    return replace(prepared, config=prepared.config.model_copy(update={"hooks": hooks}))


async def _execute(
    run_id: str,
    batch_store: BatchStore,
    prepared: PreparedConfig,
    location: str,
    concurrency: int,
    results: ResultsFile | None,
    progress: BatchProgress,
) -> None:
    pool = ProviderPool()
    try:
        debate = Debate(prepared.config, config_dir=prepared.directory, store=location, providers=pool)
        run = BatchRun(
            run_id,
            batch_store,
            debate,
            concurrency=concurrency,
            on_finished=results.append if results is not None else lambda record: None,
            progress=progress,
        )
        await run.run()
    finally:
        await pool.aclose()


async def _execute_on_ray(
    run_id: str,
    batch_store: BatchStore,
    prepared: PreparedConfig,
    data_dir: Path,
    concurrency: int,
    results: ResultsFile | None,
    progress: BatchProgress,
) -> None:
    """The debates on the Ray cluster joined (:func:`~dialectic.cluster.connection.connect`); this process keeps the
    run, the results and the progress."""
    from dialectic.batch.ray_run import RayBatchRun, RayJob

    location = str(data_dir) if "://" in str(data_dir) else str(data_dir.absolute())
    job = RayJob(
        run_id=run_id,
        batch_path=str(batch_database(data_dir).absolute()),
        config=prepared.config,
        config_dir=str(prepared.directory.absolute()),
        location=location,
    )

    def note(text: str) -> None:
        progress.clear()
        _note(text)

    run = RayBatchRun(
        run_id,
        batch_store,
        job,
        concurrency,
        on_finished=results.append if results is not None else lambda record: None,
        progress=progress,
        note=note,
    )
    await run.run()


def _results_file(output: Path | None) -> ResultsFile | None:
    """The ``-o`` file, checked as every output path is (:func:`~dialectic.cli.output.check_output`: not a
    directory, a device or a system path) before the run is created, not when the first debate finishes."""
    if output is None:
        return None
    target = check_output(output, "--output")
    if target.discard:
        return None
    try:
        return ResultsFile(target.path)
    except OSError as exc:
        raise InvalidArgumentsError(f"cannot write --output {output}: {exc.strerror or exc}") from None


def _resume_hint(run_id: str, data_dir: Path, store: str | None) -> str:
    default_dir = resolve_data_dir(None, os.environ)
    flag = "" if store is None or data_dir.absolute() == default_dir.absolute() else f" --store {data_dir}"
    return f"dialectic batch --resume {run_id}{flag}"


def _note(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


class BatchProgress:
    """One progress line on stderr: rewritten in place on a terminal, else printed every few seconds.

    A failed debate is always reported on a line of its own."""

    def __init__(self, total: int, done: int, *, interval_s: float = PROGRESS_INTERVAL_S) -> None:
        self.total, self.done, self.failed, self.running = total, done, 0, 0
        self.tty = sys.stderr.isatty()
        self.began = time.monotonic()
        self.interval_s = interval_s
        self._last_line = 0.0
        self._shown = False

    def started(self, item: BatchItem) -> None:
        self.running += 1
        self._show()

    def finished(self, record: dict[str, Any]) -> None:
        self.running -= 1
        self.done += 1
        if record["status"] == FAILED:
            self.failed += 1
            self.clear()
            _note(f"{record['id']}: failed: {record['error']}")
        self._show(force=self.done == self.total)

    def clear(self) -> None:
        if self.tty and self._shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self._shown = False

    def _show(self, *, force: bool = False) -> None:
        now = time.monotonic()
        width = 24
        filled = width * self.done // max(1, self.total)
        bar = "#" * filled + "-" * (width - filled)
        failed = f", {self.failed} failed" if self.failed else ""
        text = f"[{bar}] {self.done}/{self.total} done{failed}, {self.running} running, {now - self.began:.0f} s"
        if self.tty:
            sys.stderr.write(f"\r\x1b[K{text}")
            sys.stderr.flush()
            self._shown = True
        elif force or now - self._last_line >= self.interval_s:
            self._last_line = now
            _note(text)
