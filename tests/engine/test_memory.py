"""``debate.memory: on`` in the engine: round 1 of every format family gets the similar past debates'
outcomes, later rounds do not, the choice is saved once and kept on resume, memory off changes nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from dialectic.core.changes import MemoryForgotten
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import ScriptedProvider
from dialectic.reporting.report import render_report
from dialectic.testing.harness import Harness, make_config
from tests.engine.test_resume import Crash, CrashingStore, respond_unsure, start_quietly

PAST = "Design a rate limiter for a public HTTP API"
NOW = "Design a rate limiter for an internal HTTP API"
MARK = "## Past debates (memory)"


def user_prompt(call: CompletionRequest) -> str:
    return call.messages[-1].content


def first_round_prompts(h: Harness, tags: tuple[str, ...]) -> list[str]:
    return [user_prompt(c) for c in h.provider.calls if c.tag.split(":")[0] in tags]


@pytest.mark.parametrize(
    ("debate", "round_one", "later"),
    [
        ({"rounds": 2}, ("proposal",), ("critique", "refinement")),
        ({"rounds": 2, "format": "structured"}, ("opening",), ("closing",)),
    ],
)
def test_round_one_gets_the_similar_past_debate(
    harness: Callable[..., Harness], debate: dict[str, object], round_one: tuple[str, ...], later: tuple[str, ...]
) -> None:
    h = harness(respond_unsure)
    past = h.start(make_config(**debate), problem=PAST)
    assert past.status == "completed" and past.memories is None
    h.provider.calls.clear()

    state = h.start(make_config(**debate, memory="on"), problem=NOW)
    assert state.status == "completed"
    assert state.memories is not None and [m.debate_id for m in state.memories] == [past.id]
    prompts = first_round_prompts(h, round_one)
    assert prompts and all(MARK in p and f"Past debate {past.id} (" in p for p in prompts)
    assert all(f"Its problem: {PAST}" in p for p in prompts)
    later_prompts = first_round_prompts(h, later)
    assert later_prompts and not any(MARK in p for p in later_prompts)
    report = render_report(state)
    assert "## Memory" in report and f"`{past.id}`" in report


def test_the_adaptive_format_answers_with_memory(harness: Callable[..., Harness]) -> None:
    def respond(request: CompletionRequest) -> str:
        return "25 + 6 = 31, 31 + 24 = 55.\n\n\\boxed{55}"

    h = harness(respond)
    question = "What is the result of 25+2*3+24?"
    config = make_config(agents=2, rounds=1, format="adaptive")
    past = h.start(config, problem=question)
    h.provider.calls.clear()
    h.start(make_config(agents=2, rounds=1, format="adaptive", memory="on"), problem=question)
    prompts = first_round_prompts(h, ("answer",))
    assert prompts and all(f"Past debate {past.id} (" in p and "Its verdict: answer 55" in p for p in prompts)


def test_memory_off_sends_the_same_prompts(harness: Callable[..., Harness]) -> None:
    h = harness(respond_unsure)
    h.start(make_config(rounds=1), problem=PAST)
    alone = [user_prompt(c) for c in h.provider.calls]
    h.provider.calls.clear()
    state = h.start(make_config(rounds=1), problem=PAST)
    assert [user_prompt(c) for c in h.provider.calls] == alone
    assert state.memories is None and "memories" not in state.to_json_dict()


def test_forgotten_failed_and_later_debates_are_not_recalled(harness: Callable[..., Harness]) -> None:
    h = harness(respond_unsure)
    forgotten = h.start(make_config(), problem=PAST)
    h.store.append(forgotten.id, MemoryForgotten())
    state = h.start(make_config(memory="on"), problem=NOW)
    assert state.memories == []
    assert MARK not in "".join(user_prompt(c) for c in h.provider.calls if c.tag.startswith("proposal"))
    assert "no similar past debate was found" in render_report(state)


def test_the_memories_chosen_are_kept_on_resume(harness: Callable[..., Harness]) -> None:
    clean = harness(respond_unsure)
    past = clean.start(make_config(), problem=PAST)
    store = clean.store
    crash_after = 1
    while True:
        crashing = Harness(store=CrashingStore(store, crash_after), provider=ScriptedProvider(respond_unsure))
        with pytest.raises(Crash):
            asyncio.run(start_quietly(crashing, make_config(rounds=2, memory="on")))
        debate_id = store.list(limit=1)[0].id
        if store.load(debate_id).memories is not None:
            break
        crash_after += 1
        assert crash_after < 20
    # The choice is saved: the past debate, forgotten after it was made, is still what round 1 gets.
    store.append(past.id, MemoryForgotten())
    resumed = Harness(store=store, provider=ScriptedProvider(respond_unsure))
    after = resumed.resume(debate_id)
    assert after.status == "completed"
    assert after.memories is not None and [m.debate_id for m in after.memories] == [past.id]
    prompts = first_round_prompts(resumed, ("proposal",))
    assert prompts and all(f"Past debate {past.id} (" in p for p in prompts)
