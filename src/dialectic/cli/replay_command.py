"""``dialectic replay``: a new debate on a stored debate's problem, its unchanged calls served from the call cache.

Declarations only, imported while the app is built: the work is in :mod:`dialectic.cli.replay_run`,
imported when the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dialectic.cli.browse_command import IdArgument
from dialectic.cli.options import (
    EnvFileOption,
    LenientOption,
    NotifyOption,
    OnCompleteOption,
    OutputOption,
    ReportOption,
    StoreOption,
    TraceContentOption,
    TraceOption,
    VerboseOption,
)


def replay(
    debate_id: IdArgument,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Configuration file to replay with (default: the debate's own, as saved)."),
    ] = None,
    lenient: LenientOption = False,
    judge: Annotated[
        str | None, typer.Option("--judge", metavar="MODEL", help="The judge's model for the replay.")
    ] = None,
    judge_provider: Annotated[
        str | None,
        typer.Option("--judge-provider", help="The judge's provider for the replay (alone: its default model)."),
    ] = None,
    output: OutputOption = None,
    report: ReportOption = None,
    verbose: VerboseOption = False,
    store: StoreOption = None,
    env_file: EnvFileOption = None,
    trace: TraceOption = False,
    trace_content: TraceContentOption = False,
    notify: NotifyOption = None,
    on_complete: OnCompleteOption = None,
) -> None:
    """Run a stored debate's problem again as a new debate: every call whose inputs are unchanged is answered
    from the call cache, so only what a changed config changes is asked of the providers."""
    from dialectic.cli.replay_run import ReplayFlags, replay_debate

    flags = ReplayFlags(
        debate_id=debate_id,
        config=config,
        lenient=lenient,
        judge=judge,
        judge_provider=judge_provider,
        output=output,
        report=report,
        verbose=verbose,
        store=store,
        env_file=env_file,
        trace=trace,
        trace_content=trace_content,
        notify=notify,
        on_complete=on_complete,
    )
    replay_debate(flags)
