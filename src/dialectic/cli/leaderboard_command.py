"""The ``dialectic leaderboard`` command: ELO ratings and calibration of models or agents from the stored debates.

Declarations only (the flags and the help), imported while the app is built: what the command
does is in :mod:`dialectic.cli.leaderboard_run`, imported when it runs.
"""

from __future__ import annotations

from typing import Annotated

import typer

from dialectic.cli.options import StoreOption


def leaderboard(
    by: Annotated[
        str,
        typer.Option(
            "--by",
            metavar="model|agent",
            help="Rate models (provider/model) or agents (their configured id).",
        ),
    ] = "model",
    output_format: Annotated[
        str, typer.Option("--format", metavar="table|json", help="Print a table or JSON.")
    ] = "table",
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            metavar="DATE",
            help="Only debates created at or after this ISO date or date-time (local time unless it names a zone).",
        ),
    ] = None,
    store: StoreOption = None,
) -> None:
    """Rank models or agents by ELO rating from the completed debates' verdicts and votes, with each one's
    calibration (the Brier score of the confidences it stated) beside its rating."""
    from dialectic.cli.leaderboard_run import print_leaderboard

    print_leaderboard(by=by, output_format=output_format, since=since, store=store)
