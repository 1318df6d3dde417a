"""Plain progress lines (stderr not a terminal) and the live display's always-shown lines."""

from __future__ import annotations

import io

from dialectic.cli.console import Terminal
from dialectic.cli.progress import ProgressReporter
from dialectic.core import events as ev
from dialectic.core.domain import ConsensusGuard, Contribution, ContributionMetadata, Participant
from dialectic.llm.scripted import ScriptedProvider
from dialectic.store.memory import MemoryStore
from dialectic.testing.harness import Harness, make_config

DEBATE = "deb-20250101-000000-ABCD"
ARCHITECT = Participant(id="a1", name="System Architect", role="architect", model="m", provider="openai")
SECURITY = Participant(id="a2", name="Security Engineer", role="security", model="m", provider="openai")
JUDGE = Participant(id="j", name="Judge", role="generalist", model="m", provider="openai")


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def contribution(kind: str = "proposal", **changes: object) -> Contribution:
    base: dict[str, object] = {
        "agent_id": "a1",
        "agent_role": "architect",
        "type": kind,
        "content": "text",
        "metadata": ContributionMetadata(tokens_used=812, latency_ms=1234, model="m"),
    }
    base.update(changes)
    return Contribution.model_validate(base)


def feed(reporter: ProgressReporter, *events: ev.Event) -> None:
    reporter(ev.DebateStarted(DEBATE, "p", 3, (ARCHITECT, SECURITY), JUDGE))
    for event in events:
        reporter(event)


def test_plain_lines_for_a_round() -> None:
    stream = io.StringIO()
    feed(
        ProgressReporter(Terminal(stream)),
        ev.RoundBegan(DEBATE, 1, 3),
        ev.PhaseStarted(DEBATE, 1, "proposal", 2),
        ev.AgentStarted(DEBATE, "a1", "System Architect", "proposing"),
        ev.ContributionAdded(DEBATE, 1, "System Architect", contribution()),
        ev.PhaseStarted(DEBATE, 1, "critique", 2),
        ev.ContributionAdded(DEBATE, 1, "System Architect", contribution("critique", target_agent_id="a2")),
        ev.Warning(DEBATE, "prompt file missing"),
        ev.CallRetrying(DEBATE, "Security Engineer", "refining", "server error (500)", 1, 0.5),
    )
    lines = stream.getvalue().splitlines()
    assert lines == [
        f"Started debate {DEBATE}: 2 agents, 3 rounds",
        "Round 1/3",
        "proposal: 2 expected",
        "proposal: System Architect done (812 tokens, 1.2s)",
        "critique: 2 expected",
        "critique: System Architect → Security Engineer done (812 tokens, 1.2s)",
        "warning: prompt file missing",
        "retrying: Security Engineer refining, attempt 2 in 0.5s after: server error (500)",
    ]


def carried(agent_id: str) -> Contribution:
    return contribution(agent_id=agent_id, metadata=ContributionMetadata(model="m", carried_over=True))


def test_work_done_ahead_is_printed_after_its_round_and_phase_are_announced() -> None:
    """A round's carried-over proposals and early critiques come before the engine announces them."""
    stream = io.StringIO()
    critique = contribution("critique", agent_id="a2", target_agent_id="a1")
    feed(
        ProgressReporter(Terminal(stream)),
        ev.RoundBegan(DEBATE, 1, 3),
        ev.PhaseStarted(DEBATE, 1, "refinement", 2),
        ev.ContributionAdded(DEBATE, 1, "System Architect", contribution("refinement")),
        ev.ContributionAdded(DEBATE, 2, "System Architect", carried("a1")),
        ev.ContributionAdded(DEBATE, 1, "Security Engineer", contribution("refinement", agent_id="a2")),
        ev.ContributionAdded(DEBATE, 2, "Security Engineer", carried("a2")),
        ev.ContributionAdded(DEBATE, 2, "Security Engineer", critique),
        ev.PhaseCompleted(DEBATE, 1, "refinement"),
        ev.RoundBegan(DEBATE, 2, 3),
        ev.PhaseStarted(DEBATE, 2, "summarization", 2),
        ev.PhaseCompleted(DEBATE, 2, "summarization"),
        ev.PhaseStarted(DEBATE, 2, "proposal", 2),
        ev.PhaseCompleted(DEBATE, 2, "proposal"),
        ev.PhaseStarted(DEBATE, 2, "critique", 2),
        ev.ContributionAdded(DEBATE, 2, "System Architect", contribution("critique", target_agent_id="a2")),
        ev.PhaseCompleted(DEBATE, 2, "critique"),
    )
    assert stream.getvalue().splitlines()[1:] == [
        "Round 1/3",
        "refinement: 2 expected",
        "refinement: System Architect done (812 tokens, 1.2s)",
        "refinement: Security Engineer done (812 tokens, 1.2s)",
        "refinement: done (2 of 2)",
        "Round 2/3",
        "summarization: 2 expected",
        "summarization: done (none needed)",
        "proposal: 2 expected",
        "proposal: System Architect carried over from the previous refinement",
        "proposal: Security Engineer carried over from the previous refinement",
        "proposal: done (2 of 2, 2 carried over)",
        "critique: 2 expected",
        "critique: Security Engineer → System Architect done (812 tokens, 1.2s)",
        "critique: System Architect → Security Engineer done (812 tokens, 1.2s)",
        "critique: done (2 of 2)",
    ]


def test_every_expected_line_gets_its_done_line_in_a_real_debate() -> None:
    """The scripted engine's own events: each "N expected" is followed, later, by its phase's "done"."""
    h = Harness(MemoryStore(), ScriptedProvider())
    h.start(make_config(agents=3, rounds=3))
    stream = io.StringIO()
    reporter = ProgressReporter(Terminal(stream))
    for event in h.events:
        reporter(event)
    lines = stream.getvalue().splitlines()
    current = None
    for line in lines:
        if line.startswith("Round "):
            assert current is None, f"a new round began before {current!r} was done"
        if line.endswith(" expected"):
            assert current is None, f"{line!r} began before {current!r} was done"
            current = line.split(":")[0]
        elif current is not None and line.startswith(f"{current}: done"):
            current = None
        elif current is not None:
            assert line.startswith(f"{current}: "), f"{line!r} printed inside the {current} phase"
    assert current is None
    round_2 = next(i for i, line in enumerate(lines) if line.startswith("Round 2/3"))
    assert round_2 < min(i for i, line in enumerate(lines) if "carried over" in line)


def test_failed_and_truncated_contributions_are_announced_even_with_the_live_display() -> None:
    stream = FakeTty()
    reporter = ProgressReporter(Terminal(stream))
    failed = contribution("critique", status="failed", error="timeout", target_agent_id="a2")
    cut = contribution(metadata=ContributionMetadata(tokens_used=5, latency_ms=100, truncated=True))
    with reporter.running():
        feed(
            reporter,
            ev.RoundBegan(DEBATE, 1, 3),
            ev.ContributionAdded(DEBATE, 1, "System Architect", contribution()),
            ev.ContributionAdded(DEBATE, 1, "System Architect", failed),
            ev.ContributionAdded(DEBATE, 1, "System Architect", cut),
        )
    text = stream.getvalue()
    assert "critique failed: System Architect → Security Engineer: timeout" in text
    assert "warning: proposal by System Architect was cut off at the token limit" in text
    assert "Round 1/3" not in text.replace("┌─ Round 1/3", "")


def test_counts_of_one_are_singular() -> None:
    stream = io.StringIO()
    reporter = ProgressReporter(Terminal(stream))
    reporter(ev.DebateStarted(DEBATE, "p", 1, (ARCHITECT, SECURITY), JUDGE))
    lines = stream.getvalue().splitlines()
    assert lines == [f"Started debate {DEBATE}: 2 agents, 1 round"]


def test_a_one_agent_debate_is_warned_about_when_it_starts() -> None:
    stream = io.StringIO()
    reporter = ProgressReporter(Terminal(stream))
    reporter(ev.DebateStarted(DEBATE, "p", 2, (ARCHITECT,), JUDGE))
    reporter(ev.DebateStarted(DEBATE, "p", 2, (ARCHITECT,), JUDGE, resumed=True))
    lines = stream.getvalue().splitlines()
    assert lines[0] == f"Started debate {DEBATE}: 1 agent, 2 rounds"
    assert lines[1].startswith("warning: only one agent (System Architect) takes part: there will be no critiques")
    assert lines[2] == f"Resuming debate {DEBATE}: 1 agent, 2 rounds"
    assert len(lines) == 3  # warned once, when the debate starts


def test_the_one_agent_warning_shows_with_the_live_display_too() -> None:
    stream = FakeTty()
    reporter = ProgressReporter(Terminal(stream))
    with reporter.running():
        reporter(ev.DebateStarted(DEBATE, "p", 2, (ARCHITECT,), JUDGE))
    assert "warning: only one agent (System Architect) takes part" in stream.getvalue()


def test_the_consensus_guard_has_its_line() -> None:
    stream = io.StringIO()
    guard = ConsensusGuard(round_number=1, reason="converged at once", objection="What if  Redis\nfails?", by="j")
    feed(ProgressReporter(Terminal(stream)), ev.GuardRaised(DEBATE, guard))
    assert stream.getvalue().splitlines()[-1] == "consensus guard after round 1: What if Redis fails?"
