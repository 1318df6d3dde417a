"""The plain progress lines in reading order, each "N expected" closed by its "done" line.

Work flows across rounds (see :mod:`dialectic.engine.work`): a round's proposal may be carried
over, and a critique may finish, before the engine announces that round or that phase. Printed as
they come, such lines would precede "Round 2/3" or "critique: 6 expected". :class:`LineOrder` holds
a contribution's (or summary's) line until its round's phase has been announced, and answers each
:class:`~dialectic.core.events.PhaseCompleted` with the phase's closing line. A line whose phase
is never announced is let out when a later round begins or the debate moves on to its end, so no
line is lost.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from dialectic.core import events as ev

PhaseKey = tuple[int, str]


@dataclass(frozen=True)
class Line:
    text: str
    style: str | None = None


_LETS_OUT_ALL = (
    ev.SynthesisStarted,
    ev.VoteCompleted,
    ev.CouncilStandings,
    ev.TrajectoryDecided,
    ev.DebateCompleted,
    ev.DebateSuspended,
    ev.DebateInterrupted,
    ev.DebateFailed,
    ev.DebatePaused,
)


def _phase_of(event: ev.Event) -> PhaseKey | None:
    """The (round, phase) a contribution or summary belongs to; ``None`` for other events."""
    if isinstance(event, ev.ContributionAdded):
        return event.round_number, event.contribution.type
    if isinstance(event, ev.SummaryAdded):
        return event.round_number, "summarization"
    return None


@dataclass
class _Tally:
    expected: int
    done: int = 0
    carried: int = 0
    failed: int = 0

    def add(self, event: ev.Event) -> None:
        if isinstance(event, ev.SummaryAdded):
            self.done += 1
        elif isinstance(event, ev.ContributionAdded):
            c = event.contribution
            self.done += c.ok
            self.failed += not c.ok
            self.carried += c.ok and c.metadata.carried_over


@dataclass(frozen=True)
class _Held:
    key: PhaseKey
    event: ev.Event
    line: Line | None


@dataclass
class LineOrder:
    """Decides when each plain line is printed; :meth:`place` returns the lines due now, in order."""

    _tallies: dict[PhaseKey, _Tally] = field(default_factory=dict)
    _held: list[_Held] = field(default_factory=list)

    def place(self, event: ev.Event, line: Line | None) -> list[Line]:
        key = _phase_of(event)
        if key is not None:
            tally = self._tallies.get(key)
            if tally is None:
                self._held.append(_Held(key, event, line))
                return []
            tally.add(event)
            return [line] if line is not None else []
        due: list[Line] = []
        if isinstance(event, ev.RoundBegan):
            due += self._let_out(lambda k: k[0] < event.round_number)
        elif isinstance(event, _LETS_OUT_ALL):
            due += self._let_out(lambda _k: True)
        if line is not None:
            due.append(line)
        if isinstance(event, ev.PhaseStarted):
            started = (event.round_number, event.phase)
            tally = self._tallies[started] = _Tally(expected=event.expected)
            due += self._let_out(lambda k: k == started, tally)
        elif isinstance(event, ev.PhaseCompleted):
            due.append(Line(self._closing(event.round_number, event.phase)))
        return due

    def _let_out(self, chosen: Callable[[PhaseKey], bool], tally: _Tally | None = None) -> list[Line]:
        out: list[Line] = []
        kept: list[_Held] = []
        for held in self._held:
            if not chosen(held.key):
                kept.append(held)
                continue
            if tally is not None:
                tally.add(held.event)
            if held.line is not None:
                out.append(held.line)
        self._held = kept
        return out

    def _closing(self, number: int, phase: str) -> str:
        tally = self._tallies.pop((number, phase), None)
        if tally is None:
            return f"{phase}: done"
        if phase == "summarization":
            if tally.done == 0:
                return "summarization: done (none needed)"
            skipped = tally.expected - tally.done
            return f"summarization: done ({tally.done} written" + (f", {skipped} not needed)" if skipped > 0 else ")")
        if tally.done + tally.failed == 0:
            return f"{phase}: done"
        settled = tally.done + tally.failed
        parts = [f"{tally.done} of {tally.expected}" if settled <= tally.expected else str(tally.done)]
        if tally.carried:
            parts.append(f"{tally.carried} carried over")
        if tally.failed:
            parts.append(f"{tally.failed} failed")
        return f"{phase}: done ({', '.join(parts)})"
