"""``dialectic bench``: measure whether debating beats asking one model once, or several times.

Declarations only, imported while the app is built: what the command does is in
:mod:`dialectic.cli.bench_run`, imported when it runs, so no other command loads the bench
harness.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dialectic.cli.options import EnvFileOption, LenientOption

DEFAULT_ARMS = "single,majority:3,self-consistency,debate:3x2,dialectic"
"""The arms the help names as the default: the same as :data:`dialectic.bench.arms.DEFAULT_ARMS`
(a test holds them equal), written out so that the help does not load the bench harness."""
DIFFICULTY_HELP = (
    "arithmetic 2–6 operands, default 6; word-problems 1–5 steps, default 4; "
    "boolean-logic 1–8 and/or operators, default 2; dates 1–6 levels of offset size and steps, default 1"
)
"""The generated tasks' difficulty ranges and defaults: :func:`dialectic.bench.tasks.difficulty_help` (a test
holds them equal), written out so that the help does not load the bench harness."""
DEFAULT_CONCURRENCY = 4
"""As the help states it: :data:`dialectic.cli.bench_run.DEFAULT_CONCURRENCY` (a test holds them equal)."""


def bench(
    task: Annotated[
        str | None,
        typer.Argument(
            metavar="TASK",
            help="arithmetic, word-problems, boolean-logic, dates (generated from --seed at --difficulty), "
            "rg:NAME (a reasoning-gym dataset, scored by its own scorer; the 'tasks' extra), "
            "or jsonl followed by the dataset's PATH.",
        ),
    ] = None,
    dataset: Annotated[
        Path | None, typer.Argument(metavar="PATH", help='JSONL file of {"id", "question", "answer"} lines.')
    ] = None,
    arms: Annotated[
        str | None,
        typer.Option(
            "--arms",
            help=f"Comma-separated arms: single, majority:K, self-consistency[:K], debate:AxR, "
            f"adaptive[:M[:leader|beta|esc]], best-of:N, council[:N], correction[:N], confident:N, dialectic, "
            f"format:NAME (the engine running protocol NAME of `debate --format`, e.g. format:vote) "
            f"(default: {DEFAULT_ARMS}).",
        ),
    ] = None,
    n: Annotated[
        int | None, typer.Option("-n", "--items", help="Number of items (generated tasks: default 100; jsonl: all).")
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed of the task generator and the bootstrap (default 0).")
    ] = None,
    operands: Annotated[
        int | None,
        typer.Option("--operands", help="Arithmetic difficulty, 2–6 operands of a+b*c+d-e*f (default 6)."),
    ] = None,
    difficulty: Annotated[
        int | None,
        typer.Option("--difficulty", help=f"Level of a generated task: {DIFFICULTY_HELP}."),
    ] = None,
    match: Annotated[
        str | None,
        typer.Option("--match", help="jsonl scoring: exact or numeric (default: numeric when the answer is a number)."),
    ] = None,
    task_option: Annotated[
        list[str] | None,
        typer.Option(
            "--task-option",
            metavar="KEY=VALUE",
            help="An option of a reasoning-gym dataset (rg:NAME), e.g. --task-option min_numbers=3; repeatable.",
        ),
    ] = None,
    temperature: Annotated[
        float | None, typer.Option("--temperature", help="Sampling temperature of all arms but single (default 0.7).")
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", help="Token limit of each bench reply (default: the agent's).")
    ] = None,
    provider: Annotated[
        str | None, typer.Option("--provider", help="Provider of every agent (the dialectic arm's judge too).")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Model of every agent (the dialectic arm's judge too).")
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Config file: its agents answer; the dialectic arm runs it whole."),
    ] = None,
    lenient: LenientOption = False,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            help=f"(arm, item) pairs worked on at the same time (default {DEFAULT_CONCURRENCY}; 1 when every "
            "agent runs the embedded local model, which answers one call at a time).",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write every item's result as JSON here, rewritten as items finish (every 10 s at most) and "
            "when the run stops: commit it, and --resume FILE continues the run on any machine.",
        ),
    ] = None,
    report: Annotated[Path | None, typer.Option("--report", help="Write the Markdown summary here.")] = None,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot",
            help="Write a PNG of accuracy per arm with CIs here, and beside it <stem>-pareto.png: accuracy "
            "against mean calls and mean tokens per item, with the Pareto frontier (needs matplotlib).",
        ),
    ] = None,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume",
            metavar="RUN_ID|FILE.json",
            help="Continue an interrupted run; finished items are kept. RUN_ID: from the store. FILE.json: a "
            "results file written by -o (e.g. committed, on a fresh machine): its finished items are imported "
            "into the store, -n may extend the run, and FILE.json keeps being written unless -o says otherwise.",
        ),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(
            "--store", help="Directory of bench.sqlite3 (default: $DIALECTIC_HOME, else the user data directory)."
        ),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS|auto",
            help="Run the (arm, item) pairs on a Ray cluster: the one at ADDRESS (host:port), or with 'auto' the "
            "one running here, else a new local one; this process keeps the store, -o and the report. Needs the "
            "extra: pip install 'dialectic-debate[ray]'.",
        ),
    ] = None,
    env_file: EnvFileOption = None,
) -> None:
    """Compare single answers, majority votes, self-consistency and debates on the same questions."""
    from dialectic.bench.options import BenchOptions
    from dialectic.cli.bench_run import BenchFlags, run_bench_command

    options = BenchOptions(
        task=task,
        dataset=dataset,
        arms=arms,
        n=n,
        seed=seed,
        operands=operands,
        difficulty=difficulty,
        match=match,
        task_options=task_option,
        temperature=temperature,
        max_tokens=max_tokens,
        provider=provider,
        model=model,
        config=config,
        lenient=lenient,
    )
    run_bench_command(
        BenchFlags(
            options,
            concurrency=concurrency,
            output=output,
            report=report,
            plot=plot,
            resume=resume,
            store=store,
            env_file=env_file,
            ray=ray,
        )
    )
