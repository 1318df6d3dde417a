"""``format: adaptive`` in the engine: blind answers, an exchange only when contested, the tally, resume, auto."""

from __future__ import annotations

from collections.abc import Callable
from itertools import count

import pytest
from pydantic import ValidationError

from dialectic.core.errors import ProviderAuthError
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script, ScriptedProvider
from dialectic.reporting.report import render_report
from dialectic.testing.harness import Harness, make_config

QUESTION = "What is the result of 25+2*3+24?"


def answering(answers: list[str], reviews: list[str] | None = None) -> Callable[[CompletionRequest], Script]:
    """Blind answers in the order the calls arrive, then the reviews; the judge is never expected."""
    blind, reviewed = iter(answers), iter(reviews or [])

    def respond(request: CompletionRequest) -> Script:
        if request.tag.startswith("answer"):
            return f"25 + 6 = 31, 31 + 24 = 55.\n\n\\boxed{{{next(blind)}}}"
        if request.tag.startswith("review"):
            return f"The first wrong step is in Answer B. \\boxed{{{next(reviewed)}}}"
        raise AssertionError(f"unexpected call {request.tag}")

    return respond


def test_agreeing_answers_make_two_calls_and_the_solution_states_the_agreement(
    harness: Callable[..., Harness],
) -> None:
    h = harness(answering(["55", "55"]))
    state = h.start(make_config(agents=2, rounds=3, format="adaptive"), problem=QUESTION)
    assert state.status == "completed"
    assert [c.tag.split(":")[0] for c in h.provider.calls] == ["answer"] * 2
    assert [c.temperature for c in h.provider.calls][0] == 0.0  # the first answer is greedy
    assert all(c.logprobs for c in h.provider.calls)
    assert len(state.rounds) == 1 and len(state.rounds[0].contributions) == 2
    assert state.answer_tally is not None and state.answer_tally.answer == "55"
    assert state.answer_tally.agreement == "2 of 2 agree" and not state.answer_tally.exchanged
    assert state.final_solution is not None
    assert state.final_solution.description.startswith("**Answer: 55** (2 of 2 agree)")
    assert state.verdict is None  # no judge call on a decided question
    report = render_report(state)
    assert "## Tally" in report and "| 55 | 2 |" in report


def test_split_answers_get_one_exchange_and_every_answer_votes(harness: Callable[..., Harness]) -> None:
    h = harness(answering(["55", "54", "56", "54", "55"], reviews=["55", "55", "54"]))
    state = h.start(make_config(agents=3, rounds=1, format="adaptive"), problem=QUESTION)
    tags = [c.tag.split(":")[0] for c in h.provider.calls]
    assert tags == ["answer"] * 5 + ["review"] * 3
    review = next(c for c in h.provider.calls if c.tag.startswith("review"))
    assert "Answer A: 55 (given by 2)" in review.last_user and "keep" in review.last_user.lower()
    assert [r.phase for r in state.rounds] == ["answers", "exchange"]
    tally = state.answer_tally
    assert tally is not None and tally.exchanged
    assert tally.counts == {"55": 4, "54": 3, "56": 1} and tally.answer == "55"


def test_scattered_answers_get_no_exchange(harness: Callable[..., Harness]) -> None:
    h = harness(answering(["55", "54", "56", "57", "55"]))
    state = h.start(make_config(agents=3, rounds=1, format="adaptive"), problem=QUESTION)
    assert [c.tag.split(":")[0] for c in h.provider.calls] == ["answer"] * 5
    assert [r.phase for r in state.rounds] == ["answers"]
    tally = state.answer_tally
    assert tally is not None and not tally.exchanged
    assert tally.answer == "55" and tally.agreement == "2 of 5 agree"


def test_a_larger_answer_budget_draws_on_until_the_leader_cannot_lose(harness: Callable[..., Harness]) -> None:
    h = harness(answering(["55", "54", "56", "57", "55", "55", "55"]))
    config = make_config(agents=3, rounds=1, format="adaptive", answers={"maxAnswers": 9})
    state = h.start(config, problem=QUESTION)
    # five answers (the default budget) would have stopped on 2 of 5; with nine, the seventh decides:
    # 55 leads 4 to 1 with two answers left
    assert [c.tag.split(":")[0] for c in h.provider.calls] == ["answer"] * 7
    tally = state.answer_tally
    assert tally is not None and not tally.exchanged
    assert tally.answer == "55" and tally.agreement == "4 of 7 agree"


@pytest.mark.parametrize("budget", [1, 65])
def test_an_answer_budget_out_of_range_is_a_config_error(budget: int) -> None:
    with pytest.raises(ValidationError, match="maxAnswers"):
        make_config(format="adaptive", answers={"maxAnswers": budget})


def test_an_open_problem_with_no_stated_answer_goes_to_the_judge(harness: Callable[..., Harness]) -> None:
    def respond(request: CompletionRequest) -> Script:
        if request.tag.startswith("answer"):
            return "It depends on the traffic."
        return "A synthesis."

    h = harness(respond)
    state = h.start(make_config(agents=2, rounds=1, format="adaptive"), problem=QUESTION)
    assert state.status == "completed"
    assert state.answer_tally is not None and state.answer_tally.answer is None
    assert any(c.tag.startswith("synthesis") for c in h.provider.calls)


def test_a_resumed_debate_keeps_its_saved_answers(harness: Callable[..., Harness]) -> None:
    calls = count()

    def failing_after_one(request: CompletionRequest) -> Script:
        if next(calls) >= 1:
            return ProviderAuthError("key revoked", provider="scripted")
        return "\\boxed{55}"

    h = harness(failing_after_one)
    with pytest.raises(ProviderAuthError) as failure:
        h.start(make_config(agents=2, rounds=1, format="adaptive"), problem=QUESTION)
    assert failure.value.debate_id is not None
    first = h.store.load(failure.value.debate_id)
    assert first.status == "failed"
    saved = len(first.rounds[0].contributions)
    assert saved == 1
    resumed = h.resume(first.id, provider=ScriptedProvider(answering(["55"])))
    assert resumed.status == "completed"
    assert len(h.provider.calls) == 1  # only the missing second answer
    assert resumed.answer_tally is not None and resumed.answer_tally.agreement == "2 of 2 agree"


def test_auto_runs_adaptive_on_a_question_and_critique_refine_on_a_design(harness: Callable[..., Harness]) -> None:
    h = harness(answering(["55", "55", "55"]))
    state = h.start(make_config(agents=2, rounds=1), problem=QUESTION)
    assert state.config["debate"]["format"] == "adaptive"
    design = harness()
    state = design.start(make_config(agents=2, rounds=1), problem="Design a rate limiter for a public API")
    assert state.config["debate"]["format"] == "critique-refine"
    assert any(c.tag.startswith("proposal") for c in design.provider.calls)


def test_the_public_result_carries_the_answer_tally() -> None:
    from dialectic import Agent, Debate, Judge
    from dialectic.llm.registry import ProviderPool

    scripted = ScriptedProvider(answering(["7", "7"]))
    agents = [Agent("architect"), Agent("security")]
    pool = ProviderPool(overrides={"scripted": scripted})
    debate = Debate(agents=agents, judge=Judge(), provider="scripted", store=":memory:", providers=pool)
    result = debate.run_sync("What is 3+4?")
    assert result.answer is not None and result.answer.answer == "7"
    assert result.answer.agreement == "2 of 2 agree"
    assert result.solution is not None and result.solution.startswith("**Answer: 7** (2 of 2 agree)")


def test_dated_answers_are_tallied_as_dates_not_years(harness: Callable[..., Harness]) -> None:
    def respond(request: CompletionRequest) -> Script:
        return "11 + 3 = 14.\n\nAnswer: " + ("2010-04-14" if request.temperature == 0.0 else "2010-04-18")

    h = harness(respond)
    state = h.start(
        make_config(agents=3, rounds=1, format="adaptive"), problem="What is the date 3 days after 2010-04-11?"
    )
    tally = state.answer_tally
    assert tally is not None and "2010-04-14" in tally.counts and "2010-04-18" in tally.counts


def test_the_front_door_takes_the_answer_budget() -> None:
    from dialectic import Agent, Debate, Judge, load_config
    from dialectic.core.errors import InvalidArgumentsError
    from dialectic.llm.registry import ProviderPool

    scripted = ScriptedProvider(answering(["55", "54", "56", "57", "55", "55", "55"]))
    pool = ProviderPool(overrides={"scripted": scripted})
    agents = [Agent("architect"), Agent("security"), Agent("kiss")]
    debate = Debate(
        agents=agents,
        judge=Judge(),
        provider="scripted",
        format="adaptive",
        max_answers=9,
        store=":memory:",
        providers=pool,
    )
    result = debate.run_sync(QUESTION)
    assert result.answer is not None and result.answer.agreement == "4 of 7 agree"
    assert Debate(debate.config, max_answers=3, store=":memory:").config.debate.answers.max_answers == 3
    assert load_config(provider="scripted", max_answers=12).debate.answers.max_answers == 12
    with pytest.raises(InvalidArgumentsError, match="between 2 and 64"):
        Debate(provider="scripted", max_answers=1, store=":memory:")
