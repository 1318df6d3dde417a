"""Progress on stderr, as an :class:`~dialectic.core.events.EventBus` subscriber.

On a terminal a transient Rich ``Live`` display shows, for every round with work under way,
what is saved, running and still to come (work flows across rounds, see
:mod:`dialectic.cli.work_board`), a spinner per call in flight, the contribution counts, the
time so far and an estimate of the time left. Elsewhere (pipes, CI logs) every event becomes
one plain line, the round lines carrying the estimate, in reading order (see
:mod:`dialectic.cli.progress_order`): a round's lines after its "Round" line, a phase's after its
"expected" line, and a "done" line closing each phase. Either way, failed and truncated
contributions, warnings and retries are printed as lines of their own, and nothing is ever
written to stdout.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Group, RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from dialectic.cli.console import Terminal
from dialectic.cli.deliberation_lines import (
    assessment_line,
    correction_line,
    council_line,
    verdict_line,
    vote_line,
)
from dialectic.cli.progress_order import Line, LineOrder
from dialectic.cli.wording import plural
from dialectic.cli.work_board import Running, WorkBoard, duration
from dialectic.core import events as ev
from dialectic.core.domain import Contribution, DebateState


def one_agent_warning(name: str) -> str:
    """A debate of one agent is allowed, but it is not much of a debate: say so before it runs."""
    return (
        f"only one agent ({name}) takes part: there will be no critiques, and each refinement "
        "has only the agent's own proposal to work from"
    )


def _seconds(latency_ms: int | None) -> str:
    return f"{(latency_ms or 0) / 1000:.1f}s"


class ProgressReporter:
    """Turns engine events into the live display (``term.interactive``) or plain lines."""

    def __init__(self, term: Terminal, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._term = term
        self._live_mode = term.interactive
        self._clock = clock
        self._names: dict[str, str] = {}
        self._board = WorkBoard()
        self._started_at: float | None = None
        self._synthesizing = False
        self._spinners: dict[tuple[object, ...], Spinner] = {}
        self._order = LineOrder()

    def preload(self, state: DebateState) -> None:
        """A resumed debate: count what was saved before, so the display agrees with the store."""
        self._board.preload(state)

    @contextmanager
    def running(self) -> Iterator[None]:
        """Show the live display (on a terminal) while the engine runs; clear it afterwards."""
        if not self._live_mode:
            yield
            return
        with Live(
            self,
            console=self._term.console,
            transient=True,
            refresh_per_second=10,
            redirect_stdout=False,
            redirect_stderr=False,
        ):
            yield
        self._board.running.clear()

    def __call__(self, event: ev.Event) -> None:
        text = self._track(event)
        style = "yellow" if isinstance(event, ev.Warning | ev.CallRetrying | ev.ParticipantRemoved) else None
        line = Line(text, style) if text is not None else None
        if self._live_mode:
            due = [line] if line is not None and self._always_shown(event) else []
        else:
            due = self._order.place(event, line)
        for each in due:
            self._term.line(each.text, style=each.style)
        if isinstance(event, ev.DebateStarted) and len(event.agents) == 1 and not event.resumed:
            self._term.warning(one_agent_warning(event.agents[0].name))

    def _always_shown(self, event: ev.Event) -> bool:
        if isinstance(event, ev.ContributionAdded):
            c = event.contribution
            return not c.ok or c.metadata.truncated
        return isinstance(
            event,
            ev.Warning
            | ev.Notice
            | ev.CallRetrying
            | ev.QuestionsPending
            | ev.ParticipantRemoved
            | ev.AssessmentAdded
            | ev.GuardRaised
            | ev.VoteCompleted
            | ev.CouncilStandings
            | ev.TrajectoryDecided
            | ev.VerdictAdded
            | ev.PersonasGiven,
        )

    def _track(self, event: ev.Event) -> str | None:
        """Update the display's state from ``event`` and return its plain line, if it has one."""
        self._board.track(event)
        if isinstance(event, ev.DebateStarted):
            self._names = {p.id: p.name for p in (*event.agents, event.judge)}
            self._started_at = self._clock()
            verb = "Resuming" if event.resumed else "Started"
            shape = "" if event.format == "critique-refine" else f" ({event.format})"
            return (
                f"{verb} debate {event.debate_id}{shape}: {plural(len(event.agents), 'agent')}, "
                f"{plural(event.total_rounds, 'round')}"
            )
        if isinstance(event, ev.RoundBegan):
            left = self._left()
            return f"Round {event.round_number}/{event.total_rounds}" + (f" (~{left} left)" if left else "")
        if isinstance(event, ev.PhaseStarted):
            return f"{event.phase}: {event.expected} expected"
        if isinstance(event, ev.AgentStarted | ev.AgentCompleted):
            return None
        if isinstance(event, ev.ContributionAdded):
            return self._contribution_line(event.agent_name, event.contribution)
        if isinstance(event, ev.SummaryAdded):
            meta = event.summary.metadata
            return f"summary: {event.agent_name} {meta.before_chars} → {meta.after_chars} chars"
        if isinstance(event, ev.QuestionsPending):
            count = sum(len(group.items) for group in event.groups)
            return f"{plural(count, 'clarifying question')} need{'s' if count == 1 else ''} answers"
        if isinstance(event, ev.AssessmentAdded):
            return assessment_line(event, self._names)
        if isinstance(event, ev.GuardRaised):
            objection = " ".join(event.guard.objection.split())
            short = objection if len(objection) <= 160 else objection[:157] + "..."
            return f"consensus guard after round {event.guard.round_number}: {short}"
        if isinstance(event, ev.VoteCompleted):
            return vote_line(event.outcome, self._names)
        if isinstance(event, ev.CouncilStandings):
            return council_line(event.outcome, self._names)
        if isinstance(event, ev.TrajectoryDecided):
            return correction_line(event.outcome, self._names)
        if isinstance(event, ev.VerdictAdded):
            return verdict_line(event.verdict, self._names)
        if isinstance(event, ev.PersonasGiven):
            return "personas: " + "; ".join(f"{a.name}: {a.position or 'no position'}" for a in event.agents)
        if isinstance(event, ev.SynthesisStarted):
            self._synthesizing = True
            return "synthesis: the judge is writing the solution"
        if isinstance(event, ev.ParticipantRemoved):
            return (
                f"warning: {event.agent_name} dropped from the debate in round {event.dropped.round_number} "
                f"({event.dropped.reason}); {event.remaining} agent(s) go on"
            )
        if isinstance(event, ev.WorkAbandoned):
            w = event.discarded
            return (
                f"stopped early: round {w.round_number} work done ahead was discarded "
                f"({w.calls} calls, {w.cancelled_calls} cancelled)"
            )
        if isinstance(event, ev.Warning):
            return f"warning: {event.message}"
        if isinstance(event, ev.Notice):
            return event.message
        if isinstance(event, ev.CallRetrying):
            return (
                f"retrying: {event.agent_name} {event.activity}, attempt {event.attempt + 1} "
                f"in {event.wait_s:.1f}s after: {event.error}"
            )
        if isinstance(event, ev.DebateCompleted):
            return "Debate completed"
        if isinstance(event, ev.DebateSuspended):
            return f"Debate suspended: {event.reason}"
        if isinstance(event, ev.DebateInterrupted):
            return "Debate interrupted"
        return None

    def _spinner(self, key: tuple[object, ...], work: Running) -> Spinner:
        """One spinner per call in flight, kept while it runs so it animates."""
        spinner = self._spinners.get(key)
        if spinner is None:
            where = f" · round {work.round_number}" if work.round_number else ""
            spinner = self._spinners[key] = Spinner("dots", Text(f"{work.agent_name} {work.activity}{where}"))
        for gone in [k for k in self._spinners if k not in self._board.running]:
            del self._spinners[gone]
        return spinner

    def _left(self) -> str | None:
        if self._started_at is None:
            return None
        seconds = self._board.estimate_left(self._clock() - self._started_at)
        return duration(seconds) if seconds is not None else None

    def _contribution_line(self, agent_name: str, c: Contribution) -> str:
        who = agent_name
        if c.target_agent_id:
            who += f" → {self._names.get(c.target_agent_id, c.target_agent_id)}"
        if not c.ok:
            return f"{c.type} failed: {who}: {c.error or 'unknown error'}"
        meta = c.metadata
        if meta.carried_over:
            return f"{c.type}: {who} carried over from the previous refinement"
        detail = f"{meta.tokens_used or 0} tokens, {_seconds(meta.latency_ms)}"
        if meta.played_by == "person":
            return f"{c.type}: {who} done (written by a person)"
        if meta.played_by == "fallback":
            detail = f"played by the fallback model {meta.model}, {detail}"
        if meta.truncated:
            return f"warning: {c.type} by {who} was cut off at the token limit ({detail})"
        return f"{c.type}: {who} done ({detail})"

    def __rich__(self) -> RenderableType:
        board = self._board
        rounds = board.rounds_with_work()
        if not rounds and not board.running:
            return Spinner("dots", Text("Preparing the debate"))
        rows: list[RenderableType] = [Text(f"┌─ {board.round_line(n)}", style="bold") for n in rounds]
        if self._synthesizing and not board.synthesized:
            rows.append(Text("│  Synthesis: the judge is writing the solution"))
        if board.running:
            grid = Table.grid()
            for key, work in board.running.items():
                grid.add_row(Text("│  "), self._spinner(key, work))
            rows.append(grid)
        counts = plural(board.contributions(), "contribution")
        if board.failed:
            counts += f", {board.failed} failed"
        if self._started_at is not None:
            counts += f" · {duration(self._clock() - self._started_at)} so far"
            left = self._left()
            if left:
                counts += f" · ~{left} left"
        rows.append(Text(f"└─ {counts}", style="dim"))
        return Group(*rows)
