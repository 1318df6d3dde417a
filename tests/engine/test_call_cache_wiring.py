"""The call cache wired into debates: every reply filed, read only with ``debate.cache: read``, in the ledger."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from pathlib import Path

from dialectic.bench.metering import Meter, MeteredProvider
from dialectic.core.config import SystemConfig, with_cache
from dialectic.core.domain import DebateState, Usage
from dialectic.core.events import EventBus
from dialectic.core.ledger import ledger_totals
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.engine.roster import build_roster, reply_cache
from dialectic.llm.base import Completion, CompletionRequest, Message
from dialectic.llm.call_cache import ReplyCache
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import Script, ScriptedProvider, ScriptedReply
from dialectic.store.base import DebateStore
from dialectic.store.memory import MemoryStore
from dialectic.testing.harness import FAST_RETRY, make_config, scripted_judge
from dialectic.testing.virtual_clock import run_virtual
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


# -- identical seats replay their own replies (issue 52, item 4) ----------------------------------------


def identical_seats(rounds: int = 3) -> SystemConfig:
    """Three seats with the same model, role and prompt: their proposals and their critiques of one seat are
    identical requests (without the full history, in every round), asked as soon as the critic's own refinement
    is in: in an order that depends on how long each reply took."""
    seat = {"role": "architect", "provider": "scripted", "model": "m"}
    return SystemConfig.model_validate(
        {
            "agents": [{"id": f"seat-{n}", "name": f"Seat {n}", **seat} for n in (1, 2, 3)],
            "judge": {"id": "judge", "name": "Judge", "role": "generalist", "provider": "scripted", "model": "m"},
            "debate": {"rounds": rounds, "includeFullHistory": False},
        }
    )


def numbered_replies() -> Callable[[CompletionRequest], Script]:
    """Every reply different (numbered in the order the requests arrive), so a reply served to the wrong seat
    shows; and each a different time in coming (virtual), so the calls that follow are asked in another order
    than on a replay, whose replies are there at once."""
    judge = scripted_judge()
    served = itertools.count(1)

    def respond(request: CompletionRequest) -> Script:
        if request.json_schema is not None or request.tag.startswith(("synthesis", "assessment", "verdict")):
            return judge(request)
        number = next(served)
        return ScriptedReply(text=f"1. **Reply {number}** to {request.tag}.", delay_s=(7 * number) % 5 + 1)

    return respond


def by_seat(state: DebateState) -> dict[tuple[int, str, str, str | None], str]:
    return {
        (r.round_number, c.type, c.agent_id, c.target_agent_id): c.content
        for r in state.rounds
        for c in r.contributions
        if not c.metadata.carried_over
    }


def test_a_replay_of_identical_seats_keeps_every_contribution_with_its_seat() -> None:
    store = MemoryStore()
    config = identical_seats()
    recorded = run_virtual(
        DebateEngine(
            store,
            ProviderPool(overrides={"scripted": ScriptedProvider(numbered_replies())}),
            EventBus(),
            retry=FAST_RETRY,
        ).start(DebateRequest(problem=PROBLEM, config=config, config_dir=Path(".")))
    )
    meter = Meter()
    replaying = MeteredProvider(ScriptedProvider(numbered_replies()), meter)  # it would answer differently
    replay = run_virtual(
        DebateEngine(store, ProviderPool(overrides={"scripted": replaying}), EventBus(), retry=FAST_RETRY).start(
            DebateRequest(
                problem=PROBLEM,
                config=with_cache(config, "read"),
                config_dir=Path("."),
                seed=recorded.shuffle_seed(),
                replay_of=recorded.id,
            )
        )
    )
    assert recorded.status == replay.status == "completed"
    original, again = by_seat(recorded), by_seat(replay)
    assert len(original) >= 27 and len(set(original.values())) == len(original)  # every contribution its own
    changed_hands = [key for key, content in original.items() if again.get(key) != content]
    assert changed_hands == []  # seat by seat
    assert meter.calls == 0


def test_a_cache_filed_before_seats_were_counted_is_still_read() -> None:
    keeper = MemoryStore()
    request = CompletionRequest(model="m", messages=(Message("user", "Propose a design"),))
    old = ReplyCache(keeper, endpoint="e")  # the keys of a cache filed with one draw count for every seat
    for text in ("first", "second"):
        old.keep(old.key(request, "scripted"), Completion(text=text, model="m", usage=Usage()))

    replay = ReplyCache(keeper, endpoint="e", read=True)
    seats = [replay.at("e", seat=seat) for seat in ("seat-1", "seat-2")]
    served = [view.lookup(view.key(request, "scripted")) for view in seats]

    assert [c.text if c is not None else None for c in served] == ["first", "second"]
    assert (replay.hits, replay.misses, replay.legacy_hits) == (2, 0, 2)
    fresh = seats[0]
    fresh.keep(fresh.key(request, "scripted"), Completion(text="third", model="m", usage=Usage()))
    again = ReplyCache(keeper, endpoint="e", read=True).at("e", seat="seat-1")
    texts = [again.lookup(again.key(request, "scripted")) for _ in range(2)]
    # draw 0 of the seat was never filed under its own key: the old key; draw 1 was: its own, not the old "second"
    assert [c.text if c is not None else None for c in texts] == ["first", "third"]
