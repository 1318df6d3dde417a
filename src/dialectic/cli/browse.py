"""Commands that read stored debates: ``list``, ``show``, ``export`` and ``report``.

None of them creates a store: a ``--store`` that holds no database reads as empty. A debate
saved as ``running`` is shown as ``stale`` when no live run holds its lease (the process
that ran it crashed or was killed).
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Annotated, get_args

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from dialectic.cli.answers import question_line
from dialectic.cli.console import Terminal
from dialectic.cli.options import StoreOption, VerboseOption, open_debate_store
from dialectic.cli.output import check_output, check_report, export_json, write_output, write_report
from dialectic.cli.session import resume_command
from dialectic.cli.verbose import participant_names
from dialectic.domain import DebateState, DebateStatus, Participant, utc_now
from dialectic.errors import InvalidArgumentsError
from dialectic.report import render_report
from dialectic.store import DebateListing, DebateStore, Lease
from dialectic.store.leases import STALE, describe_holder, owner_process_gone, shown_status

IdArgument = Annotated[str, typer.Argument(metavar="ID", help="The debate's id (see dialectic list).")]
STATUSES: tuple[str, ...] = (*get_args(DebateStatus), STALE)
"""What ``list --status`` accepts: the stored statuses, and ``stale`` (shown, never stored)."""
PROBLEM_COLUMN_CHARS = 60
LIST_WIDTH_WHEN_PIPED = 140


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
    if limit is not None and limit < 1:
        raise InvalidArgumentsError(f"--limit must be at least 1 (got {limit})")
    debate_store, _ = open_debate_store(store, create=False)
    try:
        listings = shown_listings(debate_store, status=status, limit=limit)
    finally:
        debate_store.close()
    if as_json:
        rows = [
            {
                "id": d.id,
                "status": shown,
                "currentRound": d.current_round,
                "problem": d.problem,
                "createdAt": d.created_at.isoformat(),
                "updatedAt": d.updated_at.isoformat(),
            }
            for d, shown in listings
        ]
        sys.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return
    if not listings:
        Terminal().line(f"No debates at {debate_store.location}")
        return
    table = Table(box=box.SIMPLE_HEAD)
    for header in ("ID", "Status", "Round", "Updated"):
        table.add_column(header, no_wrap=True)
    table.add_column("Problem", no_wrap=True, overflow="ellipsis", min_width=20)
    for d, shown in listings:
        table.add_row(d.id, shown, str(d.current_round), _local(d.updated_at, seconds=False), _shorten(d.problem))
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, LIST_WIDTH_WHEN_PIPED)
    console.print(table)


def show(debate_id: IdArgument, store: StoreOption = None) -> None:
    """Show a readable summary of one debate."""
    debate_store, store_flag = open_debate_store(store, create=False)
    try:
        state = debate_store.load(debate_id)
        lease = debate_store.read_lease(debate_id)
    finally:
        debate_store.close()
    status = status_text(state, lease, resume_command(debate_id, store_flag))
    sys.stdout.write("\n".join(show_lines(state, status)) + "\n")


def export(
    debate_id: IdArgument,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="JSON file to write ('-' or none: stdout).")
    ] = None,
    store: StoreOption = None,
) -> None:
    """Export one debate as JSON (the whole state, camelCase keys)."""
    text = export_json(_load(debate_id, store))
    if output is None or str(output) == "-":
        sys.stdout.write(text)
        return
    target = check_output(output, "--output")
    write_output(target, text)
    if not target.discard:
        Terminal().line(f"Exported debate {debate_id} to {target.path}")


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
    state = _load(debate_id, store)
    if output is None:
        sys.stdout.write(render_report(state, verbose=verbose))
        return
    write_report(state, check_report(output, "--output"), verbose=verbose, term=Terminal(), fatal=True)


def shown_listings(store: DebateStore, *, status: str | None, limit: int | None) -> list[tuple[DebateListing, str]]:
    """Debates newest first, each with the status to show, filtered on that shown status."""
    now = utc_now()
    if status in ("running", STALE):
        candidates = store.list(status="running")  # told apart by their leases, so filtered here
    else:
        candidates = store.list(status=status, limit=limit)
    rows = [(d, _shown(store, d, now)) for d in candidates]
    if status is not None:
        rows = [row for row in rows if row[1] == status]
    return rows if limit is None else rows[:limit]


def _shown(store: DebateStore, listing: DebateListing, now: datetime) -> str:
    if listing.status != "running":
        return listing.status
    return shown_status(listing.status, store.read_lease(listing.id), now, owner_process_gone)


def status_text(state: DebateState, lease: Lease | None, resume_hint: str) -> str:
    """``show``'s status: who runs a live ``running`` debate, or why a ``stale`` one needs a resume."""
    now = utc_now()
    shown = shown_status(state.status, lease, now, owner_process_gone)
    if shown == STALE:
        return f"{STALE} (saved as running, but no process runs it any more; continue it with: {resume_hint})"
    if shown == "running" and lease is not None:
        return f"running ({describe_holder(lease, now)})"
    return shown


def show_lines(state: DebateState, status: str | None = None) -> list[str]:
    """The summary ``show`` prints; ``status`` replaces the stored status (see :func:`status_text`)."""
    lines = [
        f"Debate   {state.id}",
        f"Status   {status or state.status}",
        f"Created  {_local(state.created_at)}   Updated {_local(state.updated_at)}",
    ]
    if state.agents:
        lines.append(f"Agents   {', '.join(_participant(p) for p in state.agents)}")
    if state.judge is not None:
        lines.append(f"Judge    {_participant(state.judge)}")
    lines += ["", "Problem", *_indented(state.problem), ""]
    if state.clarifications:
        items = state.clarification_items()
        unanswered = len(state.pending_questions())
        lines.append(f"Clarifications: {len(items)} question(s), {unanswered} unanswered")
        lines += [
            f"  {question_line(g, i)} -> {i.answer or '(unanswered)'}" for g in state.clarifications for i in g.items
        ]
    names = participant_names(state)
    for rnd in state.rounds:
        counts = ", ".join(f"{len(rnd.of_type(kind))} {kind}s" for kind in ("proposal", "critique", "refinement"))
        failed = [c for c in rnd.contributions if not c.ok]
        suffix = f", {len(failed)} failed" if failed else ""
        lines.append(f"Round {rnd.round_number}: {counts}{suffix}")
        lines += [f"  failed {c.type} by {names.get(c.agent_id, c.agent_id)}: {c.error}" for c in failed]
    for d in state.dropped:
        lines.append(f"Dropped: {names.get(d.agent_id, d.agent_id)} in round {d.round_number}: {d.reason}")
    for work in state.discarded:
        lines.append(
            f"Discarded: round {work.round_number} work ahead of an early stop "
            f"({work.calls} calls, {work.cancelled_calls} cancelled)"
        )
    if state.error:
        lines.append(f"Error: {state.error}")
    if state.final_solution is not None:
        lines += [
            "",
            f"Solution (confidence {state.final_solution.confidence})",
            *_indented(state.final_solution.description),
        ]
    return lines


def _load(debate_id: str, store: str | None) -> DebateState:
    debate_store, _ = open_debate_store(store, create=False)
    try:
        return debate_store.load(debate_id)
    finally:
        debate_store.close()


def _participant(p: Participant) -> str:
    return f"{p.name} ({p.role}, {p.provider}/{p.model})"


def _indented(text: str) -> list[str]:
    return [f"  {line}" if line.strip() else "" for line in text.rstrip().splitlines()]


def _local(moment: datetime, *, seconds: bool = True) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def _shorten(text: str) -> str:
    return text if len(text) <= PROBLEM_COLUMN_CHARS else text[: PROBLEM_COLUMN_CHARS - 1] + "…"
