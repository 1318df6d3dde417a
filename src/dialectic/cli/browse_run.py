"""What ``list``, ``show``, ``export`` and ``report`` do with stored debates.

None of them creates a store: a ``--store`` that holds no database reads as empty. A debate
saved as ``running`` is shown as ``stale`` when no live run holds its lease (the process
that ran it crashed or was killed). Imported by :mod:`dialectic.cli.browse_command` when one of
these commands runs, never while the app is built.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table

from dialectic.cli.answers import question_line
from dialectic.cli.command_setup import open_debate_store
from dialectic.cli.console import Terminal
from dialectic.cli.deliberation_lines import (
    assessment_line,
    correction_lines,
    council_lines,
    verdict_line,
    vote_line,
)
from dialectic.cli.output import check_output, check_report, write_output, write_report
from dialectic.cli.session import resume_command
from dialectic.cli.turns import turn_heading
from dialectic.cli.verbose import participant_names
from dialectic.core import events as ev
from dialectic.core.config import HUMAN_PROVIDER
from dialectic.core.domain import TURN_KINDS, DebateRound, DebateState, Participant, utc_now
from dialectic.core.ledger import debate_totals, prompt_cache_text, usage_text
from dialectic.core.titles import without_marks
from dialectic.reporting.deliberation import debate_format
from dialectic.reporting.export import export_json
from dialectic.reporting.report import render_report
from dialectic.reporting.windows import window_lines
from dialectic.store import DebateListing, DebateStore, Lease
from dialectic.store.leases import STALE, describe_holder, owner_process_gone, shown_status

PROBLEM_COLUMN_CHARS = 60
LIST_WIDTH_WHEN_PIPED = 140


def print_listing(*, status: str | None, limit: int | None, store: str | None, as_json: bool) -> None:
    """``dialectic list`` once its arguments are checked: a table on stdout, or JSON."""
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
                "problem": without_marks(d.problem),  # a debate listed before titles lost their marks
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
        table.add_row(
            d.id, shown, str(d.current_round), _local(d.updated_at, seconds=False), _shorten(without_marks(d.problem))
        )
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, LIST_WIDTH_WHEN_PIPED)
    console.print(table)


def show_debate(debate_id: str, store: str | None) -> None:
    """``dialectic show``: the summary of one debate on stdout."""
    debate_store, store_flag = open_debate_store(store, create=False)
    try:
        state = debate_store.load(debate_id)
        lease = debate_store.read_lease(debate_id)
    finally:
        debate_store.close()
    status = status_text(state, lease, resume_command(debate_id, store_flag))
    sys.stdout.write("\n".join(show_lines(state, status)) + "\n")


def export_debate(debate_id: str, output: Path | None, store: str | None) -> None:
    """``dialectic export``: the whole debate as JSON, to stdout or ``output``."""
    text = export_json(_load(debate_id, store))
    if output is None or str(output) == "-":
        sys.stdout.write(text)
        return
    target = check_output(output, "--output")
    write_output(target, text)
    if not target.discard:
        Terminal().line(f"Exported debate {debate_id} to {target.path}")


def write_debate_report(debate_id: str, output: str | None, *, verbose: bool, store: str | None) -> None:
    """``dialectic report``: the Markdown report, to stdout or ``output``."""
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
    names = participant_names(state)
    return [
        *_header_lines(state, status),
        *_waiting_lines(state),
        *_format_lines(state),
        *(line for rnd in state.rounds for line in _round_lines(state, rnd, names)),
        *_outcome_lines(state, names),
        *_solution_lines(state),
    ]


def _header_lines(state: DebateState, status: str | None) -> list[str]:
    """Who debated, what it cost, its receipt, context and windows, then the problem."""
    lines = [
        f"Debate   {state.id}",
        f"Status   {status or state.status}",
        f"Created  {_local(state.created_at)}   Updated {_local(state.updated_at)}",
    ]
    if state.agents:
        lines.append(f"Agents   {', '.join(_participant(p) for p in state.agents)}")
    if state.team is not None:
        pool = len(state.team.members) + len(state.team.passed_over)
        lines.append(
            f"Team     picked from the {pool} agents of the pool {state.team.pool} (reasons: dialectic report)"
        )
    if state.judge is not None:
        lines.append(f"Judge    {_participant(state.judge)}")
    totals = debate_totals(state)
    lines.append(f"Usage    {usage_text(totals)}")
    prompt_cache = prompt_cache_text(totals)
    if prompt_cache is not None:
        lines.append(f"Cache    {prompt_cache}")
    if state.receipt is not None:
        signed = ", signed" if state.receipt.signature else ""
        receipt = f"{state.receipt.algorithm}:{state.receipt.digest} ({state.receipt.count} changes{signed})"
        lines.append(f"Receipt  {receipt}")
    saved = state.saved_config()
    context = saved.debate.context if saved is not None else None
    if context is not None and context.dir and context.mode in ("tools", "paste"):
        lines.append(f"Context  {context.dir} ({context.mode})")
    lines += window_lines(state)
    lines += ["", "Problem", *_indented(state.problem), ""]
    return lines


def _waiting_lines(state: DebateState) -> list[str]:
    """The clarifying questions (answered or not) and the human turns the debate waits for."""
    lines: list[str] = []
    if state.clarifications:
        items = state.clarification_items()
        unanswered = len(state.pending_questions())
        lines.append(f"Clarifications: {len(items)} question(s), {unanswered} unanswered")
        lines += [
            f"  {question_line(g, i)} -> {i.answer or '(unanswered)'}" for g in state.clarifications for i in g.items
        ]
    turns = state.pending_turns()
    if turns:
        lines.append(f"Human turns waiting: {len(turns)} (dialectic resume {state.id} --turn-file [KEY=]FILE)")
        lines += [f"  {turn_heading(turn)}: key {turn.key}" for turn in turns]
    return lines


def _format_lines(state: DebateState) -> list[str]:
    """The protocol, unless the default, and the agents' assigned positions and personas."""
    lines: list[str] = []
    fmt = debate_format(state)
    if fmt != "critique-refine":
        lines.append(f"Format: {fmt}")
    lines += [
        f"  {a.name}: {a.position or 'no position'}" + (f" — {a.persona}" if a.persona else "")
        for a in state.agents
        if a.position or a.persona
    ]
    return lines


def _round_lines(state: DebateState, rnd: DebateRound, names: dict[str, str]) -> list[str]:
    """One round: its contributions by kind, the failed ones, the tool reads and the assessment."""
    kinds = [
        k for k in ("proposal", "critique", "refinement", "ranking", *TURN_KINDS) if rnd.of_type(k, include_failed=True)
    ]
    counts = ", ".join(f"{len(rnd.of_type(kind))} {kind}s" for kind in kinds or ["proposal", "critique", "refinement"])
    failed = [c for c in rnd.contributions if not c.ok]
    suffix = f", {len(failed)} failed" if failed else ""
    phase = f" ({rnd.phase})" if rnd.phase and rnd.phase != "response" else ""
    lines = [f"Round {rnd.round_number}{phase}: {counts}{suffix}"]
    lines += [f"  failed {c.type} by {names.get(c.agent_id, c.agent_id)}: {c.error}" for c in failed]
    for c in rnd.contributions:
        if c.tool_calls:
            lines.append(f"  {c.type} by {names.get(c.agent_id, c.agent_id)} read with tools:")
            lines += [f"    {record.describe()}" for record in c.tool_calls]
    if rnd.assessment is not None:
        event = ev.AssessmentAdded(state.id, rnd.round_number, rnd.assessment, False, "")
        lines.append("  " + assessment_line(event, names).rstrip(", "))
    return lines


def _outcome_lines(state: DebateState, names: dict[str, str]) -> list[str]:
    """How the debate ended: early stop, vote, council, correction, answer, verdict, drops and the error."""
    lines: list[str] = []
    if state.stopped_early is not None:
        lines.append(f"Stopped early after round {state.stopped_early.round_number}: {state.stopped_early.reason}")
    if state.vote is not None:
        lines.append(vote_line(state.vote, names).capitalize())
    if state.council is not None:
        lines += _capitalized(council_lines(state.council, names))
    if state.correction is not None:
        lines += _capitalized(correction_lines(state.correction, names))
    if state.answer_tally is not None and state.answer_tally.answer is not None:
        lines.append(f"Answer {state.answer_tally.answer}: {state.answer_tally.agreement}")
    if state.verdict is not None:
        lines.append(verdict_line(state.verdict, names).capitalize())
    for d in state.dropped:
        lines.append(f"Dropped: {names.get(d.agent_id, d.agent_id)} in round {d.round_number}: {d.reason}")
    for work in state.discarded:
        lines.append(
            f"Discarded: round {work.round_number} work ahead of an early stop "
            f"({work.calls} calls, {work.cancelled_calls} cancelled)"
        )
    if state.error:
        reason = f" ({state.failure_reason})" if state.failure_reason else ""
        lines.append(f"Error{reason}: {state.error}")
    return lines


def _capitalized(lines: list[str]) -> list[str]:
    """``lines`` with the first letter of the first one made upper case (the rest as they are)."""
    first, *rest = lines
    return [first[0].upper() + first[1:], *rest]


def _solution_lines(state: DebateState) -> list[str]:
    """The judge's tool reads and the final solution with its confidence."""
    if state.final_solution is None:
        return []
    lines: list[str] = []
    if state.final_solution.tool_calls:
        lines.append("The judge read with tools:")
        lines += [f"    {record.describe()}" for record in state.final_solution.tool_calls]
    lines += [
        "",
        f"Solution (confidence {state.final_solution.confidence_text()})",
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
    if p.provider == HUMAN_PROVIDER:
        return f"{p.name} ({p.role}, a person)"
    return f"{p.name} ({p.role}, {p.provider}/{p.model})"


def _indented(text: str) -> list[str]:
    return [f"  {line}" if line.strip() else "" for line in text.rstrip().splitlines()]


def _local(moment: datetime, *, seconds: bool = True) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def _shorten(text: str) -> str:
    return text if len(text) <= PROBLEM_COLUMN_CHARS else text[: PROBLEM_COLUMN_CHARS - 1] + "…"
