"""A job's progress: counted in rounds and the synthesis, with its total, growing with every contribution."""

from __future__ import annotations

from dialectic.core import events as ev
from dialectic.core.domain import Contribution, Participant, Solution
from dialectic.mcp_server.jobs import Job

D = "deb-20250101-000000-ABCD"
AGENT = Participant(id="a1", name="A", role="architect", model="m", provider="scripted")


def added(number: int) -> ev.ContributionAdded:
    c = Contribution.model_validate({"agent_id": "a1", "agent_role": "architect", "type": "proposal", "content": "x"})
    return ev.ContributionAdded(D, number, "A", c)


def test_progress_grows_with_each_step_and_reaches_its_total() -> None:
    job = Job(D, running=True)
    seen: list[float] = []
    events: list[ev.Event] = [ev.DebateStarted(D, "p", 2, (AGENT, AGENT), AGENT)]
    for number in (1, 2):
        events += [ev.RoundBegan(D, number, 2), ev.PhaseStarted(D, number, "proposal", 2), added(number), added(number)]
        events += [ev.PhaseCompleted(D, number, "proposal")]
    events += [ev.SynthesisStarted(D), ev.DebateCompleted(D, Solution(description="s"))]
    for event in events:
        job.apply(event)
        seen.append(job.progress)
    assert job.total == 3  # two rounds and the synthesis
    assert seen == sorted(seen) and seen[-1] == 3.0
    # inside round 1, each contribution moves it on, never as far as round 2's start
    assert 0 < seen[3] < seen[4] < 1
    assert seen[6] == 1.0  # round 2 began
