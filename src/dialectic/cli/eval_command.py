"""The ``dialectic eval`` command: score a finished debate with independent evaluator agents.

Declarations only, imported while the app is built: what the command does is in
:mod:`dialectic.cli.eval_run`, imported when it runs, so no other command loads the
evaluation code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dialectic.cli.options import EnvFileOption

ConfigOption = Annotated[
    Path, typer.Option("--config", "-c", help='Evaluator configuration (JSON with an "agents" list).')
]
DebateOption = Annotated[
    str,
    typer.Option("--debate", "-d", metavar="DEBATE", help="A stored debate's id, or a debate exported as a JSON file."),
]
EvalOutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", help="Write .json, .md, or .csv (one row appended per run) instead of printing a table."
    ),
]
SamplesOption = Annotated[
    int, typer.Option("--samples", help="Ask every evaluator this many times; all valid replies are averaged.")
]
EvalStoreOption = Annotated[
    str | None,
    typer.Option(
        "--store", help="Where stored debates are looked up (default: $DIALECTIC_HOME, else the user data directory)."
    ),
]
EvalVerboseOption = Annotated[
    bool, typer.Option("--verbose", "-v", help="Show prompt sources, and each evaluation's latency and tokens.")
]


def evaluate(
    config: ConfigOption,
    debate: DebateOption,
    output: EvalOutputOption = None,
    verbose: EvalVerboseOption = False,
    samples: SamplesOption = 1,
    store: EvalStoreOption = None,
    env_file: EnvFileOption = None,
) -> None:
    """Score a debate's final solution with evaluator agents and report the averaged scores."""
    from dialectic.cli.eval_run import EvalFlags, run_eval

    flags = EvalFlags(
        config=config,
        debate=debate,
        output=output,
        verbose=verbose,
        samples=samples,
        store=store,
        env_file=env_file,
    )
    run_eval(flags)
