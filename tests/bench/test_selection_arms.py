"""The arms that pick among independent answers or correct them: best-of, council, correction, confident."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from dialectic.bench.arms import ArmEnv, parse_arms, run_arm
from dialectic.bench.records import ItemResult
from dialectic.bench.tasks import Item
from dialectic.core.config import AgentConfig, SystemConfig
from dialectic.core.errors import InvalidArgumentsError
from dialectic.llm.base import Completion, CompletionRequest, TokenLogprob
from dialectic.llm.registry import ProviderPool
from dialectic.llm.retry import RetryPolicy
from dialectic.llm.scripted import Script, ScriptedProvider

FAST = RetryPolicy(max_attempts=2, base_delay_s=0.001, max_delay_s=0.002, jitter_s=0.0)
VALID = {"aa", "bb"}
"""The scripted task's right answers: any doubled letter pair counts, as a constraint task's scorer would."""


def item() -> Item:
    return Item(
        id="pairs-0000",
        index=0,
        question="Write two equal letters.",
        truth="aa",
        match="scored",
        scorer=lambda answer: 1.0 if answer in VALID else 0.0,
        form="tagged",
    )


def env(provider: ScriptedProvider, members: int = 1) -> ArmEnv:
    agents = tuple(
        AgentConfig(id=f"a{i}", name=f"A{i}", role="generalist", provider="scripted", model="m") for i in range(members)
    )
    judge = {"id": "j", "name": "J", "role": "generalist", "provider": "scripted", "model": "judge"}
    return ArmEnv(
        agents=agents,
        temperature=0.7,
        max_tokens=None,
        pool=ProviderPool(overrides={"scripted": provider}),
        retry=FAST,
        dialectic_config=SystemConfig.model_validate({"judge": judge}),
        config_dir=Path("."),
    )


def run(arm: str, provider: ScriptedProvider, members: int = 1) -> ItemResult:
    return asyncio.run(run_arm(parse_arms(arm)[0], item(), env(provider, members)))


SAMPLES = ["<answer>ab</answer>", "<answer>bb</answer>", "<answer>ab</answer>", "<answer>cd</answer>"]


def who(request: CompletionRequest) -> str:
    return request.tag.split("/")[3]


def scripted(request: CompletionRequest, replies: dict[str, str]) -> Script:
    name = who(request)
    if name.startswith(("sample-", "member-")):
        return SAMPLES[int(name.rsplit("-", 1)[1]) - 1]
    return replies[name.rsplit("-", 1)[0] if name[-1].isdigit() else name]


def test_best_of_asks_the_judge_to_pick_among_the_shared_samples() -> None:
    provider = ScriptedProvider(lambda r: scripted(r, {"judge": "Candidate 2 doubles a letter.\n<choice>2</choice>"}))
    result = run("best-of:4", provider)
    assert result.final == "bb" and result.outcome == "correct" and result.score == 1.0
    assert result.calls == 5 and [who(c) for c in provider.calls][-1] == "judge"
    pick = provider.calls[-1]
    assert pick.temperature == 0.0 and pick.model == "judge"
    assert all(f"<answer>{a}</answer>" in pick.last_user for a in ("ab", "bb", "cd"))
    assert [r.score for r in result.rounds[0]] == [0.0, 1.0, 0.0, 0.0]


def test_best_of_falls_back_to_the_first_answer_when_the_pick_names_none() -> None:
    provider = ScriptedProvider(lambda r: scripted(r, {"judge": "They are all fine."}))
    assert run("best-of:4", provider).final == "ab"


def test_best_of_makes_no_pick_when_the_answers_agree() -> None:
    provider = ScriptedProvider(lambda r: "<answer>aa</answer>")
    result = run("best-of:3", provider)
    assert result.calls == 3 and result.judge is None and result.outcome == "correct"


def test_the_council_ranks_anonymised_answers_and_the_chair_writes_from_the_top() -> None:
    rankings = {
        # each ranker sees the three answers rotated: ranker 1 sees members 2, 3, 1 as A, B, C
        "ranker": "B breaks nothing.\nFINAL RANKING:\n1. Response B\n2. Response A\n3. Response C",
        "chair": "The best response holds.\n<answer>bb</answer>",
    }
    provider = ScriptedProvider(lambda r: scripted(r, rankings))
    result = run("council", provider, members=3)
    assert result.stages == ["answers", "rankings"] and result.calls == 7
    assert result.final == "bb" and result.outcome == "correct"
    rank_prompts = [c.last_user for c in provider.calls if who(c).startswith("ranker")]
    assert all("Response A" in p and "Response C" in p and "A0" not in p for p in rank_prompts)
    chair = next(c for c in provider.calls if who(c) == "chair")
    assert "<answer></answer>" in chair.last_user and chair.model == "judge"
    # ranker k saw members k+1, k+2, k (0-based) as A, B, C and put B first: member k+2 earns 2 from each
    assert result.votes == {"member-1": 3, "member-2": 3, "member-3": 3}


def test_correction_revises_only_an_answer_a_critique_shows_wrong_with_a_quote() -> None:
    replies = {
        # critic 1 checks member 2 ("bb"): finds nothing; critic 2 checks member 3 ("ab"): a real quote;
        # critic 3 checks member 1 ("ab"): a quote the answer does not hold
        "critic": "",
        "reviser": "You are right.\n<answer>aa</answer>",
    }

    def responder(request: CompletionRequest) -> Script:
        name = who(request)
        if name == "critic-1":
            return "It doubles a letter. Nothing is wrong."
        if name == "critic-2":
            return "Violation: the letters must be equal\nEvidence: <answer>ab</answer>"
        if name == "critic-3":
            return "Violation: too long\nEvidence: abcdef"
        return scripted(request, replies)

    provider = ScriptedProvider(responder)
    result = run("correction", provider, members=3)
    revisers = [who(c) for c in provider.calls if who(c).startswith("reviser")]
    assert revisers == ["reviser-3"]
    assert result.stages == ["answers", "critiques", "revisions"] and result.calls == 7
    # ab: 1 (member 1) + 0.5 (held) + 1 (member 3) - 1 (corrected) = 1.5; bb: 1 + 0.5; aa: revised, 1
    assert result.final == "ab" and result.votes == {"ab": 2, "bb": 2, "aa": 1}


def test_confident_keeps_the_surer_half_before_the_vote() -> None:
    def responder(request: CompletionRequest) -> Script:
        return SAMPLES[int(who(request).rsplit("-", 1)[1]) - 1]

    provider = ScriptedProvider(responder)
    original = provider.complete

    async def with_logprobs(request: CompletionRequest) -> Completion:
        completion = await original(request)
        sure = -0.1 if "bb" in completion.text or "cd" in completion.text else -2.0
        return replace(completion, logprobs=(TokenLogprob(completion.text, sure),))

    provider.complete = with_logprobs  # type: ignore[method-assign]
    result = run("confident:4", provider)
    assert result.final == "bb"  # "ab" had the most votes but the least confidence


@pytest.mark.parametrize(
    "text", ["best-of:1", "council:1", "correction:27", "confident:x", "adaptive:8:coin", "best-of:999"]
)
def test_bad_selection_arms_are_argument_errors(text: str) -> None:
    with pytest.raises(InvalidArgumentsError):
        parse_arms(text)


def test_selection_arm_names() -> None:
    assert [a.name for a in parse_arms("best-of,council,correction:4,confident:8,adaptive:16:beta,adaptive:16")] == [
        "best-of:6",
        "council",
        "correction:4",
        "confident:8",
        "adaptive:16:beta",
        "adaptive:16",
    ]
