"""``dialectic batch``: many debates on one configuration, a bounded number at a time, resumable.

Declarations only, imported while the app is built: the work is in :mod:`dialectic.cli.batch_run`,
imported when the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dialectic.cli.options import EnvFileOption, LenientOption, NotifyOption, OnCompleteOption, StoreOption

DEFAULT_CONCURRENCY = 4
"""As the help states it: :data:`dialectic.batch.runner.DEFAULT_CONCURRENCY` (a test holds them equal)."""


def batch(
    problems: Annotated[
        Path | None,
        typer.Argument(metavar="PROBLEMS.jsonl", help='JSONL file of {"id": ..., "problem": ...} lines, ids unique.'),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Configuration file every debate runs (default: ./debate-config.json)."),
    ] = None,
    lenient: LenientOption = False,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="RESULTS.jsonl",
            help="Append one JSON line per finished debate here, as each finishes (a resumed run adds only the "
            "lines it lacks).",
        ),
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option("--concurrency", "-k", help=f"Debates run at the same time (default {DEFAULT_CONCURRENCY})."),
    ] = None,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume",
            metavar="RUN_ID",
            help="Continue a stopped run: finished debates are kept, interrupted ones resume from their last "
            "saved step, the others start.",
        ),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS|auto",
            help="Run the debates on a Ray cluster: the one at ADDRESS (host:port), or with 'auto' the one "
            "running here, else a new local one. Needs the extra: pip install 'dialectic-debate[ray]'.",
        ),
    ] = None,
    notify: NotifyOption = None,
    on_complete: OnCompleteOption = None,
    store: StoreOption = None,
    env_file: EnvFileOption = None,
) -> None:
    """Run a debate on every problem of a JSONL file and write one result line per debate."""
    from dialectic.cli.batch_run import BatchFlags, run_batch_command

    run_batch_command(
        BatchFlags(
            problems=problems,
            config=config,
            lenient=lenient,
            output=output,
            concurrency=concurrency,
            resume=resume,
            ray=ray,
            notify=notify,
            on_complete=on_complete,
            store=store,
            env_file=env_file,
        )
    )
