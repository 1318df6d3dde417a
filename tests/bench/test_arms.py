"""Arm parsing, compute matching, and the protocols each arm runs (on the scripted model)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from dialectic.bench.arms import ArmEnv, ArmSpec, parse_arms, run_arm
from dialectic.bench.records import ItemResult
from dialectic.bench.tasks import Item, arithmetic_task
from dialectic.bench.tasks.generated import generated_task
from dialectic.core.config import AgentConfig, SystemConfig
from dialectic.core.errors import BadRequest, ContextWindowExceeded, InvalidArgumentsError
from dialectic.llm.base import CompletionRequest
from dialectic.llm.registry import ProviderPool
from dialectic.llm.retry import RetryPolicy
from dialectic.llm.scripted import Script, ScriptedProvider

from .conftest import boxed, designed, truth_of

FAST = RetryPolicy(max_attempts=2, base_delay_s=0.001, max_delay_s=0.002, jitter_s=0.0)


def names(text: str) -> list[str]:
    return [a.name for a in parse_arms(text)]


def two_agents(rounds: int) -> SystemConfig:
    """An architect and a simplicity agent on the scripted model, and a judge."""
    return SystemConfig.model_validate(
        {
            "agents": [
                {"id": "x", "name": "X", "role": "architect", "provider": "scripted", "model": "m"},
                {"id": "y", "name": "Y", "role": "kiss", "provider": "scripted", "model": "m"},
            ],
            "judge": {"id": "j", "name": "J", "role": "generalist", "provider": "scripted", "model": "m"},
            "debate": {"rounds": rounds},
        }
    )


def test_defaults_and_canonical_names() -> None:
    assert names("single, majority, self-consistency, debate, dialectic") == [
        "single",
        "majority:3",
        "self-consistency",
        "debate:3x2",
        "dialectic",
    ]
    assert names("sc,majority:5,debate:4x3") == ["self-consistency", "majority:5", "debate:4x3"]


def test_self_consistency_is_matched_to_the_debate_arms_calls() -> None:
    arms = {a.kind: a for a in parse_arms("self-consistency,debate:4x3")}
    assert arms["self-consistency"].samples == 12 == arms["debate"].planned_calls
    assert arms["self-consistency"].matched_to == "debate:4x3"
    alone = parse_arms("self-consistency")[0]
    assert alone.samples == 6 and alone.matched_to is not None and "not in this run" in alone.matched_to


def test_explicit_self_consistency_samples() -> None:
    spec = parse_arms("self-consistency:5,debate:3x2")[0]
    assert (spec.samples, spec.name, spec.matched_to) == (5, "self-consistency:5", None)


@pytest.mark.parametrize(
    "text", ["", "single,single", "debate:1x2", "debate:3", "majority:0", "majority:x", "vote", "sc,self-consistency:4"]
)
def test_bad_arms_are_argument_errors(text: str) -> None:
    with pytest.raises(InvalidArgumentsError):
        parse_arms(text)


def env_for(provider: ScriptedProvider, agents: int = 1) -> ArmEnv:
    bench_agents = tuple(
        AgentConfig(id=f"a{i}", name=f"A{i}", role="generalist", provider="scripted", model=f"m{i}")
        for i in range(agents)
    )
    return ArmEnv(
        agents=bench_agents,
        temperature=0.7,
        max_tokens=None,
        pool=ProviderPool(overrides={"scripted": provider}),
        retry=FAST,
        dialectic_config=SystemConfig(),
        config_dir=Path("."),
    )


def run(spec: ArmSpec, item: Item, env: ArmEnv) -> ItemResult:
    return asyncio.run(run_arm(spec, item, env))


def item(index: int) -> Item:
    return arithmetic_task(index + 1, 0).items[index]


def test_single_is_greedy_and_samples_use_the_sampling_temperature() -> None:
    provider = ScriptedProvider(designed)
    env = env_for(provider)
    run(parse_arms("single")[0], item(4), env)
    run(parse_arms("majority:3")[0], item(4), env)
    assert [c.temperature for c in provider.calls] == [0.0, 0.7, 0.7, 0.7]
    assert [c.tag.rsplit("/", 1)[1] for c in provider.calls] == ["greedy", "sample-1", "sample-2", "sample-3"]


def test_compute_matched_self_consistency_makes_as_many_calls_as_the_debate() -> None:
    provider = ScriptedProvider(designed)
    env = env_for(provider)
    sc, debate = parse_arms("self-consistency,debate:3x2")
    sc_result, debate_result = run(sc, item(4), env), run(debate, item(4), env)
    assert sc_result.calls == debate_result.calls == 6
    assert len(sc_result.rounds[0]) == 6


def test_debate_agents_see_the_others_previous_replies_and_not_their_own() -> None:
    provider = ScriptedProvider(designed)
    result = run(parse_arms("debate:3x2")[0], item(2), env_for(provider, agents=2))
    second_round = [c for c in provider.calls if c.tag.endswith("round-2")]
    assert len(second_round) == 3
    for call in second_round:
        agent = int(call.tag.split("/")[3].rsplit("-", 1)[1]) - 1
        own = result.rounds[0][agent].text
        others = [r.text for i, r in enumerate(result.rounds[0]) if i != agent]
        assert call.messages[-2].role == "assistant" and call.messages[-2].content == own
        assert all(text in call.last_user for text in others)
        assert call.last_user.count("One agent response") == 2
    assert [c.model for c in provider.calls[:3]] == ["m0", "m1", "m0"]  # agents cycle through the configured ones
    assert result.stages == ["round 1", "round 2"]


def test_conformity_flips_are_recorded_per_round() -> None:
    result = run(parse_arms("debate:3x2")[0], item(2), env_for(ScriptedProvider(designed)))
    t = int(result.truth)
    assert [r.answer for r in result.rounds[0]] == [str(t + 1), str(t), str(t + 1)]
    assert [r.answer for r in result.rounds[1]] == [str(t + 1)] * 3
    assert result.outcome == "wrong" and not result.tie


def test_a_cut_off_single_answer_is_counted_as_cut_off_not_wrong() -> None:
    result = run(parse_arms("single")[0], item(8), env_for(ScriptedProvider(designed)))
    assert result.outcome == "truncated" and result.final is None
    assert result.rounds[0][0].truncated and result.calls == 2  # the reply and one continuation


def test_an_unparseable_single_answer_is_counted_apart() -> None:
    result = run(parse_arms("single")[0], item(3), env_for(ScriptedProvider(designed)))
    assert result.outcome == "unparsed" and result.rounds[0][0].unparsed


def test_dialectic_takes_the_judges_answer_and_records_agent_stages() -> None:
    provider = ScriptedProvider(designed)
    config = two_agents(rounds=2)
    env = replace(env_for(provider), dialectic_config=config)
    result = run(parse_arms("dialectic")[0], item(0), env)
    t = truth_of(provider.calls[0])
    expected = t if t % 2 == 0 else t + 1
    assert result.judge is not None and result.judge.answer == str(expected) == result.final
    assert result.stages == ["round 1 proposals", "round 1 refinements", "round 2 refinements"]
    assert all(len(stage) == 2 for stage in result.rounds)
    assert result.calls == len(provider.calls)
    assert boxed(expected) in result.rounds[0][0].text


def test_a_refused_request_is_a_failed_reply_and_the_debate_goes_on() -> None:
    def responder(request: CompletionRequest) -> Script:
        if request.tag.endswith("agent-2/round-1"):
            return ContextWindowExceeded("prompt too long", provider="scripted", status_code=400)
        return boxed(truth_of(request))

    provider = ScriptedProvider(responder)
    result = run(parse_arms("debate:3x2")[0], item(4), env_for(provider))
    failed = result.rounds[0][1]
    assert failed.error is not None and "ContextWindowExceeded" in failed.error and not failed.unparsed
    second_round = {c.tag.split("/")[3]: c for c in provider.calls if c.tag.endswith("round-2")}
    assert second_round["agent-1"].last_user.count("One agent response") == 1
    assert [m.role for m in second_round["agent-2"].messages] == ["user", "user"]
    assert result.outcome == "correct" and len(result.rounds[1]) == 3


def test_an_item_whose_only_reply_was_refused_is_counted_as_failed() -> None:
    provider = ScriptedProvider(lambda request: BadRequest("unsupported", provider="scripted", status_code=400))
    result = run(parse_arms("single")[0], item(4), env_for(provider))
    assert result.outcome == "failed" and result.final is None and result.calls == 0


@pytest.mark.parametrize("protocol", ["free-form", "structured", "simultaneous", "vote"])
def test_every_format_is_an_arm_of_the_engine(protocol: str) -> None:
    provider = ScriptedProvider(designed)
    config = two_agents(rounds=2)
    (spec,) = parse_arms(f"format:{protocol}")
    assert spec.name == f"format:{protocol}" and spec.planned_calls is None
    result = run(spec, item(0), replace(env_for(provider), dialectic_config=config))
    assert result.judge is not None and result.final is not None
    assert result.stages and all(len(stage) == 2 for stage in result.rounds)
    assert not any(c.tag.startswith("verdict") for c in provider.calls)  # the verdict costs a call, changes nothing


def test_an_unknown_format_arm_is_refused() -> None:
    with pytest.raises(InvalidArgumentsError, match="the formats are"):
        parse_arms("format:shouting")


def test_a_structured_arm_on_a_one_round_config_still_opens_and_closes() -> None:
    provider = ScriptedProvider(designed)
    config = two_agents(rounds=1)
    (spec,) = parse_arms("format:structured")
    result = run(spec, item(0), replace(env_for(provider), dialectic_config=config))
    assert [stage.split()[-1] for stage in result.stages] == ["openings", "closings"]


@pytest.mark.parametrize("arm", ["dialectic", "format:convergence-seeking"])
def test_an_engine_arm_asks_a_question_without_numbers_as_a_question(arm: str) -> None:
    """A boolean-logic item states no number; the engine's arms still get the reasoning prompts (a bench
    item has one right answer), not the design debate's."""
    question = generated_task("boolean-logic", 1, 0, 2).items[0]
    provider = ScriptedProvider(lambda request: f"Working.\n\n\\boxed{{{question.truth}}}")
    result = run(parse_arms(arm)[0], question, replace(env_for(provider), dialectic_config=two_agents(rounds=2)))
    prompts = ["\n".join(m.content for m in call.messages) for call in provider.calls]
    assert prompts and not any("design" in prompt.lower() for prompt in prompts)
    assert all("one right answer" in prompt for prompt in prompts)
    assert result.final == question.truth.lower()
