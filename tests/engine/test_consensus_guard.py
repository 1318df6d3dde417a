"""The hollow-consensus guard (``debate.consensusGuard``) on the scripted model: it challenges a fast, shallow
consensus and not a slow, argued one; the challenge is saved, shown to the next round, reported, and never
asked twice by a resumed debate."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from dialectic.core import events as ev
from dialectic.core.domain import DebateState
from dialectic.engine.consensus_guard import CONVERGED_SIMILARITY, FAST_ROUNDS
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script, ScriptedProvider, ScriptedReply, default_reply
from dialectic.reporting.report import render_report
from dialectic.testing.harness import Harness, assessment_value, make_config, scripted_judge
from tests.engine.test_resume import Crash, CrashingStore, start_quietly
from tests.test_similarity_models import needs_minilm

OBJECTION = "Nobody asked what happens when the Redis primary fails over: every bucket resets at once."
SHARED = "Use a token bucket per client key in Redis, refilled lazily on each request."
DISTINCT = {
    "architect": [
        "Partition counters across Postgres shards keyed by tenant, with nightly compaction of old windows.",
        "Move tenant quotas into a config service; the gateway reads them at deploy time and caches them.",
    ],
    "performance": [
        "Keep a sliding window in each process's memory and gossip the totals between nodes every second.",
        "Measure p99 latency first: a kernel eBPF filter at the load balancer drops excess packets cheaply.",
    ],
}


def responder(*, evidence: int, converge_at: int) -> Callable[[CompletionRequest], ScriptedReply]:
    """Agents whose positions are ``SHARED`` from their ``converge_at``-th position on (distinct before),
    a judge scoring ``evidence`` and telling the debate to go on, and the guard's ``OBJECTION``."""
    refinements: Counter[str] = Counter()

    def respond(request: CompletionRequest) -> ScriptedReply:
        tag = request.tag
        if tag.startswith("assessment"):
            value = assessment_value(should_continue=True, score=evidence)
            return ScriptedReply(text=json.dumps(value), structured=value)
        if tag.startswith("consensus_guard"):
            return ScriptedReply(text=OBJECTION)
        kind, _, role = tag.partition(":")
        if kind == "proposal":
            return ScriptedReply(text=SHARED if converge_at <= 1 else DISTINCT[role][0])
        if kind == "refinement":  # the round's position: the agent's n-th refinement is round n's
            refinements[role] += 1
            number = refinements[role]
            return ScriptedReply(text=SHARED if number >= converge_at else DISTINCT[role][(number - 1) % 2])
        if kind == "critique":
            return ScriptedReply(text="Agreed." if converge_at <= 1 else f"{role} doubts the other design's cost.")
        return default_reply(request)

    return respond


def config(guard: str = "auto", rounds: int = 3) -> Any:
    return make_config(
        agents=2,
        rounds=rounds,
        assessment="on",
        consensusGuard=guard,
        terminationCondition={"type": "convergence", "threshold": 80},
        summarization={"enabled": False},
    )


def guards(state: DebateState) -> list[int]:
    return [r.round_number for r in state.rounds if r.guard is not None]


def test_the_default_is_auto() -> None:
    assert make_config().debate.consensus_guard == "auto"
    assert make_config(consensusGuard="off").debate.consensus_guard == "off"


@needs_minilm  # convergence is read from the embeddings' similarity; the lexical fallback stays below it
def test_a_fast_shallow_consensus_is_challenged_and_the_debate_goes_on(harness: Callable[..., Harness]) -> None:
    h = harness(responder(evidence=2, converge_at=1))
    state = h.start(config())

    assert guards(state) == [1]
    guard = state.round(1).guard
    assert guard is not None and guard.objection == OBJECTION and guard.by == "judge"
    assert guard.similarity is not None and guard.similarity >= CONVERGED_SIMILARITY
    assert guard.evidence == 2.0 and "little evidence" in guard.reason
    # One more round instead of the stop on round 1's convergence; auto challenges a debate once.
    assert [r.round_number for r in state.rounds] == [1, 2]
    assert state.stopped_early is not None and state.stopped_early.round_number == 2
    added = h.of(ev.AssessmentAdded)
    assert [(e.round_number, e.stop) for e in added] == [(1, False), (2, True)]
    assert "consensus guard" in added[0].reason
    assert [e.guard.round_number for e in h.of(ev.GuardRaised)] == [1]
    # The round after it shows the objection to every agent; the round before it never saw it.
    round2 = [c for c in h.provider.calls if c.tag.startswith(("critique", "refinement"))][-4:]
    assert all(OBJECTION in c.last_user for c in round2)
    assert not any(OBJECTION in c.last_user for c in h.provider.calls[:6])
    assert h.tags().count("consensus_guard:generalist") == 1
    # Stored: the saved debate is the running one, its call in the ledger.
    assert h.store.load(state.id).round(1).guard == guard
    assert [e.kind for e in state.ledger].count("consensus_guard") == 1
    # Round 2's critiques that ran ahead of the objection were asked again; the first ones are costed as discarded.
    ahead = state.discarded[0]  # finished and waiting for the decision, or still running: timing decides
    assert ahead.round_number == 2 and ahead.calls + ahead.cancelled_calls == 2
    kept = [e for e in state.ledger if e.kind == "critique" and not e.discarded]
    assert len(kept) == sum(len(r.of_type("critique")) for r in state.rounds)


def test_a_slow_argued_consensus_is_not_challenged(harness: Callable[..., Harness]) -> None:
    h = harness(responder(evidence=9, converge_at=FAST_ROUNDS + 1))
    state = h.start(config(rounds=4))
    assert guards(state) == [] and not h.of(ev.GuardRaised)
    assert not any(t.startswith("consensus_guard") for t in h.tags())
    similarities = [r.assessment.similarity for r in state.rounds if r.assessment]
    assert similarities[0] is not None and similarities[0] < CONVERGED_SIMILARITY  # argued before agreeing
    assert state.stopped_early is not None and state.stopped_early.round_number == FAST_ROUNDS + 1


def test_off_never_challenges(harness: Callable[..., Harness]) -> None:
    h = harness(responder(evidence=2, converge_at=1))
    state = h.start(config("off"))
    assert guards(state) == [] and [r.round_number for r in state.rounds] == [1]
    assert not any(t.startswith("consensus_guard") for t in h.tags())


def test_on_challenges_every_converged_round_but_the_last(harness: Callable[..., Harness]) -> None:
    h = harness(responder(evidence=9, converge_at=1))  # argued well: auto would let it stop
    state = h.start(config("on"))
    assert guards(state) == [1, 2] and [r.round_number for r in state.rounds] == [1, 2, 3]


def test_on_checks_a_fixed_debate_too(harness: Callable[..., Harness]) -> None:
    h = harness(responder(evidence=9, converge_at=1))
    fixed = make_config(agents=2, rounds=2, consensusGuard="on", summarization={"enabled": False})
    state = h.start(fixed)
    assert guards(state) == [1] and [r.round_number for r in state.rounds] == [1, 2]
    round2 = [c for c in h.provider.calls if c.tag.startswith(("critique", "refinement"))][-4:]
    assert all(OBJECTION in c.last_user for c in round2)


def test_the_report_shows_the_challenge_and_whether_positions_moved(harness: Callable[..., Harness]) -> None:
    state = harness(responder(evidence=2, converge_at=1)).start(config())
    report = render_report(state)
    assert "Consensus guard" in report
    assert OBJECTION in report
    assert "after round 1" in report and "held" in report  # the agents kept the shared position


def test_a_resumed_debate_never_challenges_twice(harness: Callable[..., Harness]) -> None:
    """A crash after every write, then resume: one challenge, one guard call in all, the same debate."""
    clean = harness(responder(evidence=2, converge_at=1))
    counting = CrashingStore(clean.store, crash_after=10_000)
    clean.store = counting
    reference = clean.start(config())
    total_appends = counting.appends
    assert guards(reference) == [1]

    store = counting.inner
    resumes = 0
    for crash_after in range(1, total_appends):
        first = ScriptedProvider(responder(evidence=2, converge_at=1))
        crashing = Harness(store=CrashingStore(store, crash_after), provider=first)
        known = {d.id for d in store.list(limit=10_000)}
        with pytest.raises(Crash):
            asyncio.run(start_quietly(crashing, config()))
        (debate_id,) = {d.id for d in store.list(limit=10_000)} - known
        before = store.load(debate_id)
        if before.status == "completed":
            continue  # the work ahead ran in another order and took fewer writes: nothing left to resume
        resumes += 1
        challenged_before = before.round(1).guard if before.find_round(1) is not None else None

        resumed = Harness(store=store, provider=ScriptedProvider(responder(evidence=2, converge_at=1)))
        after = resumed.resume(debate_id)

        assert after.status == "completed", f"crash after append {crash_after}"
        assert guards(after) == [1], f"crash after append {crash_after}"
        asked_again = [t for t in resumed.tags() if t.startswith("consensus_guard")]
        assert len(asked_again) == (0 if challenged_before is not None else 1), f"crash after append {crash_after}"
        assert [r.round_number for r in after.rounds] == [1, 2], f"crash after append {crash_after}"
        assert [e.kind for e in after.ledger].count("consensus_guard") == 1, f"crash after append {crash_after}"
    assert resumes >= total_appends // 2  # most crashes leave something to resume


@needs_minilm
def test_a_turn_format_reads_the_challenge_in_its_next_round(harness: Callable[..., Harness]) -> None:
    """free-form: the judge says stop at once while the scripted turns look alike; the next turns read the objection."""

    judge = scripted_judge(should_continue=False)

    def respond(request: CompletionRequest) -> Script:
        return ScriptedReply(text=OBJECTION) if request.tag.startswith("consensus_guard") else judge(request)

    h = harness(respond)
    state = h.start(make_config(agents=2, rounds=3, format="free-form", assessment="on"))
    assert guards(state) == [1] and [r.round_number for r in state.rounds] == [1, 2]
    later = [c for c in h.provider.calls if c.tag.startswith("response")][2:]
    assert later and all(OBJECTION in c.last_user and "Challenge to the consensus" in c.last_user for c in later)
