"""The call cache wired into debates: every reply filed, read only with ``debate.cache: read``, in the ledger."""

from __future__ import annotations

import asyncio
from pathlib import Path

from dialectic.bench.metering import Meter, MeteredProvider
from dialectic.core.config import SystemConfig, with_cache
from dialectic.core.domain import DebateState
from dialectic.core.events import EventBus
from dialectic.core.ledger import ledger_totals
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.engine.roster import build_roster, reply_cache
from dialectic.llm.call_cache import ReplyCache
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import ScriptedProvider
from dialectic.store.base import DebateStore
from dialectic.store.memory import MemoryStore
from dialectic.testing.harness import FAST_RETRY, make_config, scripted_judge
from tests.engine.test_ledger import every_kind

PROBLEM = "Design a rate limiter"


def run_debate(
    store: DebateStore, config: SystemConfig, *, seed: str | None = None, replay_of: str | None = None
) -> tuple[DebateState, Meter]:
    """Run a debate to its end (answering every question), counting the requests that reach the provider."""
    meter = Meter()
    pool = ProviderPool(overrides={"scripted": MeteredProvider(ScriptedProvider(scripted_judge()), meter)})
    engine = DebateEngine(store, pool, EventBus(), retry=FAST_RETRY)
    request = DebateRequest(
        problem=PROBLEM, config=config, config_dir=Path("."), clarify=True, seed=seed, replay_of=replay_of
    )
    state = asyncio.run(engine.start(request))
    while state.status == "suspended":
        state = asyncio.run(engine.resume(state.id, {q.id: "yes" for q in state.pending_questions()}))
    return state, meter


def texts(state: DebateState) -> list[tuple[int, str, str, str | None, str]]:
    contributions = [(r.round_number, c) for r in state.rounds for c in r.contributions]
    rows = sorted((number, c.type, c.agent_id, c.target_agent_id, c.content) for number, c in contributions)
    assert state.final_solution is not None
    return [*rows, (0, "solution", "", None, state.final_solution.description)]


def test_a_debate_files_every_reply_but_reads_none_by_default(store: DebateStore) -> None:
    first, sent = run_debate(store, every_kind())
    second, sent_again = run_debate(store, every_kind())

    assert first.status == second.status == "completed"
    assert sent_again.calls == sent.calls > 0, "without debate.cache: read every request is sent again"
    assert ledger_totals(second.ledger).cached == 0


def test_reading_the_cache_answers_every_request_of_the_same_debate(store: DebateStore) -> None:
    original, sent = run_debate(store, every_kind())
    replay, sent_again = run_debate(
        store, with_cache(every_kind(), "read"), seed=original.shuffle_seed(), replay_of=original.id
    )

    assert replay.status == "completed"
    assert sent_again.calls == 0
    assert texts(replay) == texts(original)
    assert replay.replay_of == original.id and replay.shuffle_seed() == original.id
    totals = ledger_totals(replay.ledger)
    assert totals.cached == ledger_totals(original.ledger).requests
    assert (totals.requests, totals.attempts, totals.total_tokens, totals.cost_usd) == (0, 0, 0, 0.0)
    assert len(replay.ledger) == len(original.ledger), "a call answered from the cache keeps its ledger line"


def test_the_debates_clients_file_under_their_providers_endpoint() -> None:
    store = MemoryStore()
    config = make_config()
    pool = ProviderPool(overrides={"scripted": ScriptedProvider()})
    cache = reply_cache(store, config.debate)
    assert cache is not None and not cache.read
    roster = build_roster(config, Path("."), pool, FAST_RETRY, cache)

    clients = [a.client for a in roster.agents] + [roster.judge.client]
    assert all(isinstance(c.cache, ReplyCache) for c in clients)
    assert {c.cache.endpoint for c in clients if c.cache is not None} == {pool.key_for(config.judge)}
    assert reply_cache(store, with_cache(config, "read").debate) is not None
    assert reply_cache(store, with_cache(config, "read").debate).read  # type: ignore[union-attr]


def test_a_view_at_another_endpoint_shares_the_draws_and_the_counts() -> None:
    cache = ReplyCache(MemoryStore(), endpoint="a", read=True)
    view = cache.at("b")

    assert (cache.endpoint, view.endpoint) == ("a", "b")
    assert view.lookup("missing") is None
    assert (cache.hits, cache.misses) == (0, 1)


def test_a_seat_a_person_plays_is_never_answered_from_the_cache() -> None:
    config = make_config()
    person = config.agents[0].model_copy(update={"provider": "human", "model": "person"})
    config = config.model_copy(update={"agents": [person, *config.agents[1:]]})
    pool = ProviderPool(overrides={"scripted": ScriptedProvider()})
    roster = build_roster(config, Path("."), pool, FAST_RETRY, ReplyCache(MemoryStore(), read=True))

    assert roster.agent(person.id).client.cache is None
    assert all(a.client.cache is not None for a in roster.agents if a.id != person.id)
