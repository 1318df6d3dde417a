"""The scheduler, on a virtual clock: every piece of work starts when its inputs exist, and no later.

Each scripted call takes a random (seeded) virtual time. A subscriber notes, on the loop's
clock, when each call started and when each result was saved; then, for every call, its
inputs (by the dataflow rules of ``dialectic.engine.work``) must all have been saved before
it started, and it must have started at the moment the last of them was saved — no round
or phase barrier in between.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from dialectic.core import events as ev
from dialectic.core.domain import DebateState
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.engine.dataflow import critical_path, inputs_of
from dialectic.llm.base import CompletionRequest
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import ScriptedProvider, ScriptedReply, default_reply
from dialectic.store import MemoryStore
from dialectic.testing.harness import FAST_RETRY, assessment_value, make_config
from dialectic.testing.virtual_clock import run_virtual

SLACK = 1e-6
Key = tuple[Any, ...]


@dataclass
class Timeline:
    started: dict[Key, float] = field(default_factory=dict)
    saved: dict[Key, float] = field(default_factory=dict)

    def __call__(self, event: ev.Event) -> None:
        now = asyncio.get_running_loop().time()
        if isinstance(event, ev.AgentStarted) and event.round_number is not None and event.kind is not None:
            self.started[_key(event.kind, event.round_number, event.agent_id, event.target_id)] = now
        elif isinstance(event, ev.ContributionAdded):
            c = event.contribution
            self.saved[_key(c.type, event.round_number, c.agent_id, c.target_agent_id)] = now
        elif isinstance(event, ev.SummaryAdded):
            self.saved[("summary", event.round_number, event.summary.agent_id)] = now
        elif isinstance(event, ev.AgentCompleted) and event.kind == "assessment":
            self.saved[("assessment", event.round_number)] = now


def _key(kind: str, number: int, agent: str, target: str | None) -> Key:
    return (kind, number, agent, target) if target else (kind, number, agent)


def latency_responder(seed: int) -> Any:
    def respond(request: CompletionRequest) -> ScriptedReply:
        reply = default_reply(request)
        if request.tag.startswith("assessment"):
            value = assessment_value(should_continue=True)
            reply = ScriptedReply(text=json.dumps(value), structured=value)
        digest = hashlib.sha256(f"{seed}|{request.tag}|{request.last_user}".encode()).digest()
        delay = 0.05 + random.Random(digest).lognormvariate(-1.2, 0.6)
        return ScriptedReply(text=reply.text, structured=reply.structured, delay_s=delay)

    return respond


def run_debate(seed: int, agents: int, rounds: int, **debate: Any) -> tuple[Timeline, list[str]]:
    timeline, _, _ = run_timed(seed, agents, rounds, **debate)
    return timeline, [a.id for a in make_config(agents=agents).participants()]


def run_timed(seed: int, agents: int, rounds: int, **debate: Any) -> tuple[Timeline, DebateState, float]:
    """A debate on the virtual clock: its timeline, its final state and its wall time."""
    timeline = Timeline()
    config = make_config(agents=agents, rounds=rounds, maxConcurrency=64, **debate)

    async def go() -> tuple[DebateState, float]:
        bus = ev.EventBus()
        bus.subscribe(timeline)
        pool = ProviderPool(overrides={"scripted": ScriptedProvider(latency_responder(seed))})
        engine = DebateEngine(MemoryStore(), pool, bus, retry=FAST_RETRY)
        started = asyncio.get_running_loop().time()
        state = await engine.start(DebateRequest(problem="Design a cache", config=config, config_dir=Path(".")))
        assert state.status == "completed"
        return state, asyncio.get_running_loop().time() - started

    state, wall = run_virtual(go())
    return timeline, state, wall


@pytest.mark.parametrize("seed", range(12))
def test_work_starts_exactly_when_its_inputs_exist(seed: int) -> None:
    rng = random.Random(seed)
    agents, rounds = rng.randint(2, 5), rng.randint(1, 3)
    summaries = {"summarization": {"threshold": rng.choice([200, 5000])}}
    timeline, agent_ids = run_debate(seed, agents, rounds, **summaries)
    assert timeline.started, "no call was made"
    for key, started in timeline.started.items():
        summaries = [k for k in timeline.saved if k[0] == "summary"]
        needs = inputs_of(key, agent_ids, summaries)
        for needed in needs:
            assert needed in timeline.saved, f"{key} started without {needed}"
            assert timeline.saved[needed] <= started + SLACK, f"{key} started before {needed} was saved"
        ready = max((timeline.saved[n] for n in needs), default=0.0)
        assert started <= ready + SLACK, f"{key} waited {started - ready:.3f}s after its inputs existed"


def test_next_round_starts_before_the_slowest_refinement_of_this_round() -> None:
    """The barrier that is gone: round 2 work of a fast agent overlaps round 1 work of a slow one."""
    timeline, agent_ids = run_debate(3, agents=3, rounds=2)
    slowest_round1 = max(t for k, t in timeline.saved.items() if k[0] == "refinement" and k[1] == 1)
    first_round2 = min(t for k, t in timeline.started.items() if k[1] == 2)
    assert first_round2 < slowest_round1


def test_convergence_work_ahead_waits_for_the_judges_word() -> None:
    """With early stopping possible, round 2 work may run ahead but nothing of it is saved before the assessment."""
    timeline, _ = run_debate(5, agents=3, rounds=2, terminationCondition={"type": "judge"})
    evaluated = timeline.saved[("assessment", 1)]
    assert all(t >= evaluated - SLACK for k, t in timeline.saved.items() if k[1] == 2)


@pytest.mark.parametrize("judge_delay", [1.0, 0.05])
def test_early_stop_throws_away_the_work_ahead_and_says_what_it_cost(judge_delay: float) -> None:
    """The judge stops the debate after round 1: round 2 critiques run ahead, are not saved, and are costed."""

    def respond(request: CompletionRequest) -> ScriptedReply:
        if request.tag.startswith("assessment"):
            value = assessment_value(should_continue=False)
            return ScriptedReply(text=json.dumps(value), structured=value, delay_s=judge_delay)
        return ScriptedReply(text=default_reply(request).text, delay_s=0.2 if request.tag.startswith("crit") else 0.1)

    provider = ScriptedProvider(respond)
    events: list[ev.Event] = []

    async def go() -> Any:
        bus = ev.EventBus()
        bus.subscribe(events.append)
        engine = DebateEngine(MemoryStore(), ProviderPool(overrides={"scripted": provider}), bus, retry=FAST_RETRY)
        config = make_config(agents=3, rounds=3, terminationCondition={"type": "judge"})
        return await engine.start(DebateRequest(problem="Design a cache", config=config, config_dir=Path(".")))

    state = run_virtual(go())
    assert state.status == "completed" and [r.round_number for r in state.rounds] == [1]
    (discarded,) = state.discarded
    assert discarded.round_number == 2 and discarded.calls + discarded.cancelled_calls == 6
    if judge_delay > 0.5:  # a slow judge: every critique ahead finished, and was thrown away
        assert discarded.calls == 6 and discarded.input_tokens > 0 and discarded.output_tokens > 0
    else:  # a quick judge: the critiques ahead were still running, and were cancelled
        assert discarded.cancelled_calls > 0
    critique_calls = [c for c in provider.calls if c.tag.startswith("critique")]
    assert len(critique_calls) == 6 + 6  # round 1's six, and the six of round 2 started ahead
    assert [e.discarded.round_number for e in events if isinstance(e, ev.WorkAbandoned)] == [2]


@pytest.mark.parametrize("seed", range(6))
def test_a_fixed_debate_takes_exactly_its_critical_path(seed: int) -> None:
    """With no concurrency cap, the wall time equals the longest chain of latencies through the graph."""
    rng = random.Random(100 + seed)
    _, state, wall = run_timed(seed, rng.randint(2, 5), rng.randint(1, 3))
    bound = critical_path(state)
    assert bound > 0
    assert wall == pytest.approx(bound, abs=0.01 * len(state.all_contributions()))


def test_thread_work_costs_no_virtual_time() -> None:
    """Work in a thread (e.g. an embedding model) does not let a timer fire while it runs."""
    import threading

    release = threading.Event()

    async def go() -> tuple[float, bool]:
        loop = asyncio.get_running_loop()
        started = loop.time()
        timer = asyncio.ensure_future(asyncio.sleep(600))
        worker = asyncio.ensure_future(asyncio.to_thread(release.wait, 5))
        threading.Timer(0.02, release.set).start()  # the thread's work takes real time; the loop is idle meanwhile
        assert await worker
        return loop.time() - started, timer.done()

    elapsed, timer_fired = run_virtual(go())
    assert elapsed == 0.0 and not timer_fired
