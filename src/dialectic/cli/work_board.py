"""What the live display knows about a debate's work: done, running and waiting, per round.

Work flows across rounds (a round's critiques may run while the previous round still
refines), so the display cannot show "the current phase". It shows, for every round that
has started work, each kind's saved count against what the round will make, with what is
running now — counted from the engine's events, which are published after each save, so
a count never runs ahead of the store. Pure bookkeeping: no terminal here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dialectic.core import events as ev
from dialectic.core.domain import DebateState
from dialectic.engine.protocols import protocol

KINDS = ("proposal", "critique", "refinement")
KIND_TITLES = {
    "proposal": "proposals",
    "critique": "critiques",
    "refinement": "refinements",
    "response": "turns",
    "opening": "openings",
    "rebuttal": "rebuttals",
    "closing": "closings",
    "ranking": "rankings",
}
FAMILY_KINDS = {"council": ("proposal", "ranking")}
"""What a one-round format's round makes, where it is not proposals, critiques and refinements."""
MIN_CALLS_FOR_ESTIMATE = 2


@dataclass
class Running:
    agent_name: str
    activity: str
    round_number: int | None


@dataclass
class WorkBoard:
    total_rounds: int = 0
    agents: int = 0
    format: str = "critique-refine"
    done: dict[tuple[int, str], int] = field(default_factory=dict)
    """(round, kind) → contributions saved (failed ones included)."""
    failed: int = 0
    running: dict[tuple[object, ...], Running] = field(default_factory=dict)
    calls_done: int = 0
    calls_before: int = 0
    """Calls saved before this run (a resumed debate): they count for progress, not for the rate."""
    synthesized: bool = False

    def start(self, event: ev.DebateStarted) -> None:
        self.total_rounds, self.agents, self.format = event.total_rounds, len(event.agents), event.format

    def kinds(self, number: int) -> tuple[str, ...]:
        """What round ``number`` makes: proposals, critiques and refinements, or one kind of turn."""
        chosen = protocol(self.format)
        if chosen.family != "turns":
            return FAMILY_KINDS.get(chosen.family, KINDS)
        return (chosen.turn_plan(number, max(self.total_rounds, number)).kind,)

    def preload(self, state: DebateState) -> None:
        """Count what a resumed debate saved before this run."""
        self.agents = len(state.active_agents()) or self.agents
        for rnd in state.rounds:
            for c in rnd.contributions:
                self.done[(rnd.round_number, c.type)] = self.done.get((rnd.round_number, c.type), 0) + 1
                self.failed += not c.ok
                self.calls_before += not c.metadata.carried_over
        self.synthesized = state.final_solution is not None

    def track(self, event: ev.Event) -> None:
        if isinstance(event, ev.DebateStarted):
            self.start(event)
        elif isinstance(event, ev.AgentStarted):
            self.running[_key(event)] = Running(event.agent_name, event.activity, event.round_number)
        elif isinstance(event, ev.AgentCompleted):
            self.running.pop(_key(event), None)
            self.calls_done += 1
        elif isinstance(event, ev.ContributionAdded):
            c = event.contribution
            key = (event.round_number, c.type)
            self.done[key] = self.done.get(key, 0) + 1
            self.failed += not c.ok
        elif isinstance(event, ev.ParticipantRemoved):
            self.agents = event.remaining
        elif isinstance(event, ev.DebateCompleted):
            self.synthesized = True

    def expected(self, kind: str) -> int:
        n = self.agents
        if protocol(self.format).family == "correction":
            # each member checks one answer; only a corrected one is revised (how many is not known ahead)
            return 0 if kind == "refinement" else n
        return n * (n - 1) if kind == "critique" else n

    def round_line(self, number: int) -> str | None:
        """``Round 2/3  proposals 3/3 · critiques 4/6 (2 running) · refinements 0/3``, or None before any work."""
        running = [r for r in self.running.values() if r.round_number == number]
        kinds = self.kinds(number)
        if not running and not any(self.done.get((number, kind)) for kind in kinds):
            return None
        parts = []
        for kind in kinds:
            done = self.done.get((number, kind), 0)
            busy = sum(1 for k, r in self.running.items() if r.round_number == number and k[1] == kind)
            text = f"{KIND_TITLES[kind]} {done}/{max(done, self.expected(kind))}"
            parts.append(text + (f" ({busy} running)" if busy else ""))
        return f"Round {number}/{self.total_rounds}  " + " · ".join(parts)

    def rounds_with_work(self) -> list[int]:
        return [n for n in range(1, self.total_rounds + 1) if self.round_line(n) is not None]

    def contributions(self) -> int:
        return sum(self.done.values())

    def calls_expected(self) -> int:
        """Calls a whole debate makes: round 1's proposals, every round's critiques and refinements, the
        synthesis — or, in a turn format, one turn per agent per round and the synthesis."""
        n = self.agents
        family = protocol(self.format).family
        if family == "turns":
            return self.total_rounds * n + 1
        if family in ("council", "correction"):
            return 2 * n + 1  # answers, rankings or checks, the chair or synthesis (a correction's revisions unknown)
        return n + self.total_rounds * (n * (n - 1) + n) + 1

    def estimate_left(self, elapsed_s: float) -> float | None:
        """Seconds left at this run's rate so far; None until a few calls have finished."""
        if self.calls_done < MIN_CALLS_FOR_ESTIMATE or elapsed_s <= 0:
            return None
        left = max(0, self.calls_expected() - self.calls_before - self.calls_done)
        return elapsed_s / self.calls_done * left


def _key(event: ev.AgentStarted | ev.AgentCompleted) -> tuple[object, ...]:
    return (event.agent_id, event.kind or event.activity, event.round_number, event.target_id, event.activity)


def duration(seconds: float) -> str:
    """``45 s``, ``3 min``, ``1 h 05 min``: how long, at the precision an estimate deserves."""
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"
