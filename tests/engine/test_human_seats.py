"""A seat a person plays (``provider: human``): asked through a channel, or suspended for and resumed with its
text, never asking a model twice; past its deadline, its fallback model plays the turn."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from dialectic.core import events as ev
from dialectic.core.config import SystemConfig
from dialectic.core.domain import DebateState, HumanTurn, utc_now
from dialectic.core.errors import DebateStateError, InvalidArgumentsError
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.engine.seats import TurnChannel, turn_texts
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import ScriptedProvider
from dialectic.store.base import DebateStore
from dialectic.testing.harness import FAST_RETRY, make_config, scripted_judge

ALICE = "agent-alice"


def with_alice(agents: int = 2, rounds: int = 1, seat: dict[str, Any] | None = None, **debate: Any) -> SystemConfig:
    """``agents`` scripted agents, and Alice: a seat a person plays."""
    data = make_config(agents=agents, rounds=rounds, **debate).model_dump(by_alias=True)
    data["agents"].append({"id": ALICE, "name": "Alice", "role": "security", "provider": "human", **(seat or {})})
    return SystemConfig.model_validate(data)


FALLBACK = {"deadline": 1, "fallback": {"provider": "scripted", "model": "fallback-model"}}


class Answering:
    """A channel where the person answers every turn at once."""

    def __init__(self) -> None:
        self.turns: list[HumanTurn] = []

    async def take_turn(self, turn: HumanTurn) -> str | None:
        self.turns.append(turn)
        return f"Alice writes her {turn.kind} ({turn.key})."


class NeverAnswers:
    """A channel where no one ever answers (the deadline ends the wait)."""

    def __init__(self) -> None:
        self.asked = 0

    async def take_turn(self, turn: HumanTurn) -> str | None:
        self.asked += 1
        await asyncio.Event().wait()
        return None


class Run:
    def __init__(self, store: DebateStore, turns: TurnChannel | None = None) -> None:
        self.store = store
        self.provider = ScriptedProvider(scripted_judge())
        self.events: list[ev.Event] = []
        self.turns = turns

    def engine(self) -> DebateEngine:
        bus = ev.EventBus()
        bus.subscribe(self.events.append)
        pool = ProviderPool(overrides={"scripted": self.provider})
        return DebateEngine(self.store, pool, bus, retry=FAST_RETRY, turns=self.turns)

    def start(self, config: SystemConfig) -> DebateState:
        request = DebateRequest(problem="Design a rate limiter", config=config, config_dir=Path("."))
        return asyncio.run(self.engine().start(request))

    def resume(self, debate_id: str, turns: dict[str, str] | None = None) -> DebateState:
        return asyncio.run(self.engine().resume(debate_id, turns=turns))

    def of(self, kind: type[ev.Event]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


def alices(state: DebateState) -> list[Any]:
    return [c for r in state.rounds for c in r.contributions if c.agent_id == ALICE]


def test_a_channel_that_answers_plays_the_seat_and_sees_what_the_participant_would(store: DebateStore) -> None:
    channel = Answering()
    run = Run(store, channel)
    state = run.start(with_alice(format="free-form"))
    assert state.status == "completed"
    turn = channel.turns[0]
    assert turn.agent_id == ALICE and turn.key == f"{ALICE}:response:1" and turn.round_number == 1
    assert "Design a rate limiter" in turn.prompt  # the problem
    assert "Turn by Architect" in turn.prompt and "Turn by Performance" in turn.prompt  # the others' turns
    assert "Take your turn in the discussion" in turn.prompt  # the phase's instructions
    assert "security" in turn.role_prompt.lower()  # the seat's role, as its model would be told it
    [written] = alices(state)
    assert written.content == f"Alice writes her response ({ALICE}:response:1)."
    assert written.metadata.played_by == "person" and written.metadata.tokens_used == 0
    [line] = [e for e in state.ledger if e.agent_id == ALICE]
    assert (line.provider, line.input_tokens, line.output_tokens, line.cost_usd) == ("human", 0, 0, 0.0)
    assert not [c for c in run.provider.calls if c.tag.startswith("response:security")]  # no model wrote it
    assert state.human_turns == []  # answered as asked: nothing waited
    assert ALICE not in state.windows  # a person reads the debate whole: no window counted, nothing shrunk


def test_without_a_channel_the_debate_suspends_and_each_resume_asks_no_model_twice(store: DebateStore) -> None:
    run = Run(store)
    state = run.start(with_alice())
    assert state.status == "suspended" and state.next_node == "proposal"
    [pending] = state.pending_turns()
    assert pending.key == f"{ALICE}:proposal:1" and pending.activity == "proposing"
    assert "Design a rate limiter" in pending.prompt and "## Task" in pending.prompt
    assert run.of(ev.DebateSuspended)[-1].reason == "waiting for Alice's turn (proposing, round 1)"
    assert [e.turn.key for e in run.of(ev.TurnPending)] == [pending.key]
    assert len(run.provider.calls) == 2  # the two models' proposals: they ran while Alice's waited
    assert store.load(state.id).pending_turns()[0].messages == pending.messages  # saved with its prompt

    calls = len(run.provider.calls)
    resumes = 0
    while state.status == "suspended":
        texts = {turn.key: f"Alice's {turn.kind} for {turn.target_agent_id or 'all'}" for turn in state.pending_turns()}
        state = run.resume(state.id, texts)
        resumes += 1
        assert not any(e.status != "ok" for e in state.ledger)  # a wait is no failed call
    assert state.status == "completed" and resumes == 3  # proposal, both critiques at once, refinement
    tags = [c.tag for c in run.provider.calls]
    assert len(tags) == len(set((t, str(c.messages)) for t, c in zip(tags, run.provider.calls, strict=True)))
    assert tags.count("proposal:architect") == 1 and tags.count("synthesis:generalist") == 1
    assert len(tags) > calls
    kinds = sorted((c.type, c.target_agent_id or "") for c in alices(state))
    assert kinds == [
        ("critique", "agent-architect"),
        ("critique", "agent-performance"),
        ("proposal", ""),
        ("refinement", ""),
    ]
    assert all(c.metadata.played_by == "person" for c in alices(state))
    assert [t.played_by for t in state.human_turns] == ["person"] * 4 and state.pending_turns() == []
    refinement = next(c for c in run.provider.calls if c.tag == "refinement:architect")
    assert "Alice's critique for agent-architect" in refinement.last_user  # the person's words reach the models


def test_a_deadline_that_passes_lets_the_fallback_model_play_the_turn(store: DebateStore) -> None:
    channel = NeverAnswers()
    run = Run(store, channel)
    state = run.start(with_alice(format="free-form", seat=FALLBACK))
    assert state.status == "completed" and channel.asked == 1
    [played] = alices(state)
    assert played.metadata.played_by == "fallback" and played.metadata.model == "fallback-model"
    assert played.content.startswith("[response:security]")  # the fallback model's reply
    lines = [(e.provider, e.model) for e in state.ledger if e.agent_id == ALICE]
    assert sorted(lines) == [("human", "person"), ("scripted", "fallback-model")]
    seat = next(e for e in state.ledger if e.agent_id == ALICE and e.provider == "human")
    assert seat.input_tokens == seat.output_tokens == 0  # the fallback's tokens are counted once, in its call
    assert any("Alice's deadline passed" in w.message for w in run.of(ev.Warning))


def test_a_deadline_that_passed_while_suspended_lets_the_fallback_play_on_resume(
    store: DebateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = Run(store)
    state = run.start(with_alice(format="free-form", seat={**FALLBACK, "deadline": 60_000}))
    assert state.status == "suspended"
    assert run.resume(state.id).status == "suspended"  # within the deadline, nothing changes
    later = utc_now() + timedelta(minutes=5)
    monkeypatch.setattr("dialectic.engine.seats.utc_now", lambda: later)
    state = run.resume(state.id)
    assert state.status == "completed"
    [played] = alices(state)
    assert played.metadata.played_by == "fallback"
    [turn] = state.human_turns
    assert turn.played_by == "fallback" and turn.text == played.content


def test_simultaneous_turns_in_flight_finish_before_the_debate_suspends(store: DebateStore) -> None:
    run = Run(store)
    state = run.start(with_alice(format="simultaneous"))
    assert state.status == "suspended"
    saved = {c.agent_id for c in state.rounds[0].contributions}
    assert saved == {"agent-architect", "agent-performance"}
    state = run.resume(state.id, {f"{ALICE}:response:1": "Simultaneously, Alice."})
    assert state.status == "completed"
    assert [c.tag for c in run.provider.calls].count("response:architect") == 1


def test_a_human_seat_asks_no_clarifying_questions_and_makes_no_summaries(store: DebateStore) -> None:
    run = Run(store, Answering())
    request = DebateRequest(
        problem="Design a rate limiter",
        config=with_alice(format="free-form", rounds=3, summarization={"threshold": 1}),
        config_dir=Path("."),
        clarify=True,
    )
    state = asyncio.run(run.engine().start(request))
    while state.status == "suspended":  # the models' questions, for as many iterations as they ask
        assert state.pending_questions() and not state.pending_turns()
        state = asyncio.run(run.engine().resume(state.id, {q.id: "NA" for q in state.pending_questions()}))
    assert state.status == "completed" and state.clarifications
    assert ALICE not in {g.agent_id for g in state.clarifications}
    assert all(ALICE not in r.summaries for r in state.rounds)


def test_unknown_turn_keys_on_resume_are_ignored_with_a_warning(store: DebateStore) -> None:
    run = Run(store)
    state = run.start(with_alice(format="free-form"))
    state = run.resume(state.id, {"agent-bob:response:1": "not mine"})
    assert state.status == "suspended"
    assert any("unknown or already played human turns: agent-bob:response:1" in w.message for w in run.of(ev.Warning))


def test_which_turn_a_text_is_for(store: DebateStore) -> None:
    state = Run(store).start(with_alice())
    key = f"{ALICE}:proposal:1"
    assert turn_texts(state, [(None, " text ")]) == {key: "text"}
    assert turn_texts(state, [(key, "text")]) == {key: "text"}
    assert turn_texts(state, [(ALICE, "text")]) == {key: "text"}  # the seat's id, with one turn waiting
    with pytest.raises(InvalidArgumentsError, match="is not a human turn it waits for"):
        turn_texts(state, [("nope", "text")])
    with pytest.raises(InvalidArgumentsError, match="empty"):
        turn_texts(state, [(None, "  \n")])
    with pytest.raises(InvalidArgumentsError, match="2 texts for the 1 human turn"):
        turn_texts(state, [(None, "a"), (None, "b")])
    done = Run(store, Answering()).start(with_alice(format="free-form"))
    with pytest.raises(DebateStateError, match="already completed"):
        turn_texts(done, [(None, "text")])


@pytest.mark.parametrize(
    ("seat", "words"),
    [
        ({"deadline": 1000}, "deadline needs a fallback model"),
        ({"fallback": {"provider": "scripted"}}, "set deadline"),
        ({"deadline": 1000, "fallback": {"provider": "human"}}, "cannot be another person"),
    ],
)
def test_a_seats_deadline_and_fallback_are_checked(seat: dict[str, Any], words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        with_alice(seat=seat)


def test_only_a_human_seat_has_a_deadline_and_the_judge_is_a_model() -> None:
    data = make_config().model_dump(by_alias=True)
    data["agents"][0]["deadline"] = 1000
    with pytest.raises(ValidationError, match="provider: human"):
        SystemConfig.model_validate(data)
    data = make_config().model_dump(by_alias=True)
    data["judge"]["provider"] = "human"
    with pytest.raises(ValidationError, match="the judge is a model"):
        SystemConfig.model_validate(data)
