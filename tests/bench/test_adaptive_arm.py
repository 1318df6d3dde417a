"""The bench's adaptive arm on the scripted model: how many calls, the exchange, the weighted vote, a panel."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from dialectic.bench.arms import ArmEnv, parse_arms, run_arm
from dialectic.bench.records import ItemResult
from dialectic.bench.tasks import Item, arithmetic_task
from dialectic.core.config import AgentConfig, SystemConfig
from dialectic.llm.base import Completion, CompletionRequest, TokenLogprob
from dialectic.llm.registry import ProviderPool
from dialectic.llm.retry import RetryPolicy
from dialectic.llm.scripted import Responder, ScriptedProvider

FAST = RetryPolicy(max_attempts=2, base_delay_s=0.001, max_delay_s=0.002, jitter_s=0.0)
ITEM: Item = arithmetic_task(1, 0).items[0]


def env_for(provider: ScriptedProvider, agents: tuple[AgentConfig, ...] | None = None) -> ArmEnv:
    return ArmEnv(
        agents=agents or (AgentConfig(id="a", name="A", role="generalist", provider="scripted", model="m"),),
        temperature=0.7,
        max_tokens=None,
        pool=ProviderPool(overrides={"scripted": provider}),
        retry=FAST,
        dialectic_config=SystemConfig(),
        config_dir=Path("."),
    )


def who(request: CompletionRequest) -> str:
    return request.tag.rsplit("/", 1)[1]


def answers(by_who: dict[str, str], default: str = "1") -> Responder:
    def respond(request: CompletionRequest) -> str:
        return f"Working... \\boxed{{{by_who.get(who(request), default)}}}"

    return respond


def run(arm: str, provider: ScriptedProvider, agents: tuple[AgentConfig, ...] | None = None) -> ItemResult:
    return asyncio.run(run_arm(parse_arms(arm)[0], ITEM, env_for(provider, agents)))


def test_a_sample_agreeing_with_the_greedy_answer_stops_after_two_calls() -> None:
    provider = ScriptedProvider(answers({}, default=ITEM.truth))
    result = run("adaptive", provider)
    assert result.calls == 2 and result.stages == ["samples"]
    assert [c.temperature for c in provider.calls] == [0.0, 0.7]
    assert all(c.logprobs for c in provider.calls)
    assert result.outcome == "correct" and result.votes == {ITEM.truth: 2}


def test_a_sample_disagreeing_with_the_greedy_answer_draws_on() -> None:
    provider = ScriptedProvider(answers({"sample-2": "9"}, default=ITEM.truth))
    result = run("adaptive", provider)
    assert [who(c) for c in provider.calls] == ["sample-1", "sample-2", "sample-3", "sample-4"]
    assert result.final == ITEM.truth and result.votes == {ITEM.truth: 3, "9": 1}


def test_a_leader_that_cannot_lose_stops_the_draws_early() -> None:
    provider = ScriptedProvider(answers({"sample-2": "9"}, default="5"))
    result = run("adaptive", provider)
    assert [who(c) for c in provider.calls] == ["sample-1", "sample-2", "sample-3", "sample-4"]
    assert result.final == "5" and result.votes == {"5": 3, "9": 1}


def test_split_answers_get_one_anonymised_correction_biased_exchange() -> None:
    scripted = {"sample-1": "5", "sample-2": "6", "sample-3": "7", "sample-4": "6", "sample-5": "5"}
    scripted |= {"reviewer-1": "6", "reviewer-2": "6", "reviewer-3": "5"}
    provider = ScriptedProvider(answers(scripted))
    result = run("adaptive", provider)
    assert result.stages == ["samples", "exchange"]
    assert result.calls == 8
    reviews = [c for c in provider.calls if who(c).startswith("reviewer")]
    prompt = reviews[0].last_user
    assert "Answer A: 5 (given by 2)" in prompt and "Answer B: 6 (given by 2)" in prompt
    assert "Answer C: 7 (given by 1)" in prompt and "Your own earlier answer was 5" in prompt
    assert "first step that is wrong" in prompt
    assert "sample-" not in prompt  # anonymised: no solver is named
    assert result.final == "6" and result.votes == {"5": 3, "6": 4, "7": 1}  # every answer votes, round 1 included


def test_scattered_answers_are_no_contest_so_the_vote_decides_without_an_exchange() -> None:
    scripted = {"sample-1": "5", "sample-2": "6", "sample-3": "7", "sample-4": "8", "sample-5": "5"}
    provider = ScriptedProvider(answers(scripted))
    result = run("adaptive", provider)
    assert result.stages == ["samples"] and result.calls == 5
    assert not any(who(c).startswith("reviewer") for c in provider.calls)
    assert result.final == "5" and result.votes == {"5": 2, "6": 1, "7": 1, "8": 1}


class ConfidentProvider(ScriptedProvider):
    """The scripted model, with token log-probabilities: sample 1 sure of 8, the others unsure of 3."""

    async def complete(self, request: CompletionRequest) -> Completion:
        completion = await super().complete(request)
        sure = who(request) == "sample-1"
        answer = "8" if sure else "3"
        text = f"\\boxed{{{answer}}}"
        logprobs = (TokenLogprob("\\boxed{", 0.0), TokenLogprob(answer, -0.01 if sure else -2.0), TokenLogprob("}", 0))
        return replace(completion, text=text, logprobs=logprobs)


def test_the_final_answer_is_weighted_by_the_answer_tokens_probability() -> None:
    result = run("adaptive:3", ConfidentProvider(answers({})))
    samples = result.rounds[0]
    assert samples[0].confidence is not None and samples[0].confidence > 0.98
    assert samples[1].confidence is not None and samples[1].confidence < 0.2
    assert result.votes == {"8": 1, "3": 2} and result.final == "8"


def test_a_panel_alternates_its_agents_each_at_its_own_temperature() -> None:
    panel = (
        AgentConfig(id="small", name="S", role="generalist", provider="scripted", model="small", temperature=0.3),
        AgentConfig(id="large", name="L", role="generalist", provider="scripted", model="large", temperature=1.0),
    )
    provider = ScriptedProvider(answers({"sample-2": "9"}, default="5"))
    run("adaptive", provider, panel)
    assert [(c.model, c.temperature) for c in provider.calls] == [
        ("small", 0.0),
        ("large", 1.0),
        ("small", 0.3),
        ("large", 1.0),
    ]


def test_adaptive_names() -> None:
    assert [a.name for a in parse_arms("adaptive,adaptive:7")] == ["adaptive", "adaptive:7"]
