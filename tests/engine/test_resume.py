"""Crash, cancel and resume: a debate continues from its last saved step and never repeats a saved call."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import pytest

from dialectic.core.changes import Change
from dialectic.core.config import SystemConfig
from dialectic.core.domain import DebateState
from dialectic.core.errors import DebateStateError
from dialectic.engine import DebateRequest
from dialectic.llm.scripted import ScriptedProvider
from dialectic.store.base import DebateStore
from dialectic.store.leases import LeaseGrant, LeaseOwner
from dialectic.testing.harness import Harness, make_config, scripted_judge

T = TypeVar("T")


class Crash(BaseException):
    """A process death: not an ``Exception``, so nothing in the engine gets to clean up."""


@cache
def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


class CrashingStore:
    """Wraps a store; the ``crash_after``-th write is saved, then the 'process' dies.

    A write is an append, or the lease acquisition that creates a debate. The 'process' that
    dies takes its leases in the name of a pid that is gone, as a real dead process would.
    """

    def __init__(self, inner: DebateStore, crash_after: int) -> None:
        self.inner = inner
        self.crash_after = crash_after
        self.appends = 0
        self.pid = dead_pid()

    def append(self, debate_id: str, *changes: Change, holder: str | None = None) -> int:
        return self._write(lambda: self.inner.append(debate_id, *changes, holder=holder))

    def acquire_lease(self, debate_id: str, owner: LeaseOwner, **kwargs: Any) -> LeaseGrant:
        owner = replace(owner, pid=self.pid, started=None)
        if kwargs.get("create") is None:
            return self.inner.acquire_lease(debate_id, owner, **kwargs)
        grants: list[LeaseGrant] = []
        self._write(lambda: grants.append(self.inner.acquire_lease(debate_id, owner, **kwargs)))
        return grants[0]

    def _write(self, write: Callable[[], T]) -> T:
        if self.appends >= self.crash_after:
            raise Crash()
        result = write()
        self.appends += 1
        if self.appends == self.crash_after:
            raise Crash()
        return result

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


respond_unsure = scripted_judge(should_continue=True)


async def start_quietly(h: Harness, config: SystemConfig) -> None:
    """Start a debate whose 'process' dies; the dead process's leftover tasks are not reported."""

    def ignore_crash(loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
        if not isinstance(context.get("exception"), Crash):
            loop.default_exception_handler(context)

    asyncio.get_running_loop().set_exception_handler(ignore_crash)
    await h.engine().start(DebateRequest(problem="Design a rate limiter", config=config, config_dir=Path(".")))


SCENARIOS: dict[str, dict[str, object]] = {
    # every kind of step: rounds, summaries, proposals, critiques, refinements, assessments, judge summary
    "critique-refine": {"agents": 2, "rounds": 2, "terminationCondition": {"type": "judge"}},
    "free-form, personas": {"agents": 2, "rounds": 3, "format": "free-form", "personas": "auto"},
    "structured": {"agents": 2, "rounds": 3, "format": "structured"},
    "vote": {"agents": 3, "rounds": 1, "format": "vote", "verdict": "on"},
    # answers, rankings (each saved on its own), the count, the judge's synthesis of the top answers
    "council": {"agents": 3, "rounds": 1, "format": "council"},
    # answers, checks, revisions of the corrected ones, the decision, the synthesis built on the winner
    "correction": {"agents": 3, "rounds": 1, "format": "correction"},
}


def scenario(name: str = "critique-refine") -> SystemConfig:
    settings = dict(SCENARIOS[name])
    agents, rounds = int(settings.pop("agents")), int(settings.pop("rounds"))  # type: ignore[call-overload]
    summarization = {"enabled": True, "threshold": 10, "maxLength": 80}
    return make_config(agents=agents, rounds=rounds, summarization=summarization, **settings)


def llm_results(state: DebateState) -> int:
    """How many saved records came from an LLM call (each must never be asked for again)."""
    count = sum(1 for c in state.all_contributions() if c.ok and not c.metadata.carried_over)
    count += sum(len(r.summaries) for r in state.rounds)
    count += sum(1 for r in state.rounds if r.assessment is not None and r.assessment.structured)
    count += 1 if state.judge_summary is not None else 0
    count += 1 if state.final_solution is not None else 0
    count += 1 if state.personas_assigned else 0
    count += len(state.vote.votes) if state.vote is not None else 0
    count += 1 if state.verdict is not None else 0
    return count


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_crash_after_every_step_then_resume(harness: Callable[..., Harness], name: str) -> None:
    clean = harness(respond_unsure)
    counting = CrashingStore(clean.store, crash_after=10_000)
    clean.store = counting
    reference = clean.start(scenario(name))
    clean_calls, total_appends = len(clean.provider.calls), counting.appends
    assert reference.status == "completed" and total_appends > 12

    for crash_after in range(1, total_appends):
        store = clean.store.inner if isinstance(clean.store, CrashingStore) else clean.store
        crashing = Harness(store=CrashingStore(store, crash_after), provider=ScriptedProvider(respond_unsure))
        with pytest.raises(Crash):
            asyncio.run(start_quietly(crashing, scenario(name)))
        debate_id = store.list(limit=1)[0].id
        before = store.load(debate_id)
        saved = llm_results(before)

        resumed = Harness(store=store, provider=ScriptedProvider(respond_unsure))
        after = resumed.resume(debate_id)

        assert after.status == "completed", f"crash after append {crash_after}"
        assert len(resumed.provider.calls) == clean_calls - saved, f"crash after append {crash_after}"
        for contribution in before.all_contributions():
            assert contribution in after.all_contributions()
        assert [len(r.contributions) for r in after.rounds] == [len(r.contributions) for r in reference.rounds]
        # The ledger counts each call whose result was kept once: none twice, none missing.
        assert sum(e.requests for e in after.ledger) == clean_calls, f"crash after append {crash_after}"
        assert Counter(e.kind for e in after.ledger) == Counter(e.kind for e in reference.ledger)


def test_cancel_saves_interrupted_and_resume_finishes(harness: Callable[..., Harness]) -> None:
    h = harness(latency_s=0.05)
    engine = h.engine()

    async def start_then_cancel() -> None:
        task = asyncio.create_task(
            engine.start(DebateRequest(problem="P", config=make_config(agents=3), config_dir=Path(".")))
        )
        while not any(
            c.type == "critique" for s in [h.store.list()] for d in s for c in h.store.load(d.id).all_contributions()
        ):
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(start_then_cancel())
    debate_id = h.store.list()[0].id
    interrupted = h.store.load(debate_id)
    assert interrupted.status == "interrupted"
    saved = llm_results(interrupted)

    again = ScriptedProvider(latency_s=0.0)
    done = h.resume(debate_id, provider=again)
    assert done.status == "completed"
    assert len(again.calls) == 3 + 6 + 3 + 1 - saved + (1 if done.judge_summary else 0)


def test_resume_of_completed_debate_is_refused(harness: Callable[..., Harness]) -> None:
    h = harness()
    state = h.start(make_config())
    with pytest.raises(DebateStateError):
        h.resume(state.id)
