"""Commands that read stored debates: ``list``, ``show``, ``export`` and ``report``.

Declarations only, imported while the app is built: what the commands do is in
:mod:`dialectic.cli.browse_run`, imported when one of them runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dialectic.cli.options import StoreOption, VerboseOption
from dialectic.core.bounds import MAX_LISTED, check_range
from dialectic.core.errors import InvalidArgumentsError

IdArgument = Annotated[str, typer.Argument(metavar="ID", help="The debate's id (see dialectic list).")]
STATUSES: tuple[str, ...] = (
    "pending",
    "running",
    "suspended",
    "paused",
    "interrupted",
    "completed",
    "failed",
    "stale",
)
"""What ``list --status`` accepts: the stored statuses (:data:`dialectic.core.domain.DebateStatus`) and
``stale`` (:data:`dialectic.store.leases.STALE`: shown, never stored). Written out so that the
help loads neither module; a test holds the tuple equal to theirs."""


def list_debates(
    status: Annotated[
        str | None, typer.Option("--status", help=f"Only debates with this status ({', '.join(STATUSES)}).")
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="At most this many debates (newest first).")] = None,
    store: StoreOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
) -> None:
    """List stored debates, newest first."""
    if status is not None and status not in STATUSES:
        raise InvalidArgumentsError(f"unknown status '{status}' (known: {', '.join(STATUSES)})")
    if limit is not None:
        check_range("--limit", limit, 1, MAX_LISTED)
    from dialectic.cli.browse_run import print_listing

    print_listing(status=status, limit=limit, store=store, as_json=as_json)


def show(debate_id: IdArgument, store: StoreOption = None) -> None:
    """Show a readable summary of one debate."""
    from dialectic.cli.browse_run import show_debate

    show_debate(debate_id, store)


def export(
    debate_id: IdArgument,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="JSON file to write ('-' or none: stdout).")
    ] = None,
    store: StoreOption = None,
) -> None:
    """Export one debate as JSON (the whole state, camelCase keys)."""
    from dialectic.cli.browse_run import export_debate

    export_debate(debate_id, output, store)


def report(
    debate_id: IdArgument,
    output: Annotated[
        str | None,
        typer.Option(
            "--output", "-o", metavar="PATH", help="Markdown file to write (a directory: <id>.md in it; none: stdout)."
        ),
    ] = None,
    verbose: VerboseOption = False,
    store: StoreOption = None,
) -> None:
    """Write the Markdown report of one debate."""
    from dialectic.cli.browse_run import write_debate_report

    write_debate_report(debate_id, output, verbose=verbose, store=store)
