"""Running evaluators on the scripted model: prompts, averaging and spread, failures, validation."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dialectic.core.domain import DebateState
from dialectic.core.errors import InvalidArgumentsError, ProviderAuthError, ProviderError
from dialectic.eval.config import load_eval_config
from dialectic.eval.evaluator import EvaluationReport, SampleFailure, plan_evaluation, run_evaluation
from dialectic.eval.scores import CRITERION_KEYS, EvaluationOutput, spread
from dialectic.llm.base import CompletionRequest
from dialectic.llm.registry import ProviderPool
from dialectic.llm.retry import RetryPolicy
from dialectic.llm.scripted import Script, ScriptedProvider, ScriptedReply

FAST = RetryPolicy(max_attempts=1)
Reply = Callable[..., ScriptedReply]


def _run(
    state: DebateState,
    config: Path,
    provider: ScriptedProvider,
    *,
    samples: int = 1,
    failures: list[SampleFailure] | None = None,
) -> EvaluationReport:
    plan = plan_evaluation(state, load_eval_config(config))
    pool = ProviderPool(overrides={"scripted": provider})
    hook = failures.append if failures is not None else None
    return asyncio.run(run_evaluation(plan, pool, samples=samples, source="test", retry=FAST, on_failure=hook))


def _by_model(replies: dict[str, list[Script]]) -> Callable[[CompletionRequest], Script]:
    """Answer each model from its own queue, in order (one entry per sample)."""
    queues = {model: list(items) for model, items in replies.items()}
    return lambda request: queues[request.model].pop(0)


def test_spread_is_mean_sample_sd_min_max_and_count() -> None:
    s = spread([6, 8, 10])
    assert (s.mean, s.sd, s.min, s.max, s.n) == (8, 2.0, 6, 10, 3)
    single = spread([7.5])
    assert (single.mean, single.sd, single.n) == (7.5, 0.0, 1)
    with pytest.raises(ValueError):
        spread([])


def test_the_reply_model_has_exactly_the_criteria_keys() -> None:
    schema = EvaluationOutput.model_json_schema(by_alias=True)
    assert tuple(schema["properties"]) == CRITERION_KEYS
    assert set(schema["required"]) == set(CRITERION_KEYS)


def test_prompts_carry_the_problem_the_clarifications_and_the_solution(
    solved_state: DebateState, write_config: Callable[..., Path]
) -> None:
    provider = ScriptedProvider()
    _run(solved_state, write_config(["alpha"]), provider)
    (request,) = provider.calls
    assert request.json_schema is not None and request.json_schema.name == "EvaluationOutput"
    assert "independent evaluator" in request.system and "regulatoryCompliance" in request.system
    user = request.last_user
    for expected in (
        "rate limiter",
        "Is the limit per API key?",
        "Yes, per key.",
        "(not answered)",
        "token bucket per API key",
        "Redis is a shared dependency",
        "Audit logging",
        "Burst size per plan?",
        "confidence 72/100",
    ):
        assert expected in user
    assert request.model == "model-alpha" and request.temperature == pytest.approx(0.1)


def test_scores_are_averaged_across_evaluators_with_their_spread(
    solved_state: DebateState, write_config: Callable[..., Path], scripted_reply: Reply
) -> None:
    provider = ScriptedProvider(
        _by_model(
            {
                "model-alpha": [scripted_reply({"security": 4, "overall": 6})],
                "model-beta": [scripted_reply({"security": 8, "overall": 7})],
                "model-gamma": [scripted_reply({"security": 9, "overall": 8.5})],
            }
        )
    )
    report = _run(solved_state, write_config(["alpha", "beta", "gamma"]), provider)
    scores = report.scores()
    assert scores["security"].mean == pytest.approx(7.0)
    assert scores["security"].sd == pytest.approx(statistics.stdev([4, 8, 9]))
    assert (scores["security"].min, scores["security"].max, scores["security"].n) == (4, 9, 3)
    assert scores["overall"].mean == pytest.approx(7.1666, abs=1e-3)
    assert scores["testability"].mean == 5 and scores["testability"].sd == 0
    assert [len(e.results) for e in report.evaluators] == [1, 1, 1]


def test_samples_repeat_every_evaluator_and_all_valid_replies_are_averaged(
    solved_state: DebateState, write_config: Callable[..., Path], scripted_reply: Reply
) -> None:
    provider = ScriptedProvider(
        _by_model(
            {
                "model-alpha": [scripted_reply(4), scripted_reply(6), scripted_reply(8)],
                "model-beta": [scripted_reply(9), scripted_reply(9), scripted_reply(9)],
            }
        )
    )
    report = _run(solved_state, write_config(["alpha", "beta"]), provider, samples=3)
    assert len(provider.calls) == 6
    overall = report.scores()["overall"]
    assert overall.n == 6
    assert overall.mean == pytest.approx((4 + 6 + 8 + 9 * 3) / 6)
    assert overall.sd == pytest.approx(statistics.stdev([4, 6, 8, 9, 9, 9]))
    alpha, beta = report.evaluators
    alpha_spread = alpha.spread("overall")
    assert alpha_spread is not None and (alpha_spread.mean, alpha_spread.sd) == (6, 2)
    assert sorted(r.sample for r in alpha.results) == [1, 2, 3]
    assert beta.spread("overall") is not None


def test_one_failing_evaluator_is_reported_and_the_others_averaged(
    solved_state: DebateState, write_config: Callable[..., Path], scripted_reply: Reply
) -> None:
    provider = ScriptedProvider(
        _by_model(
            {
                "model-alpha": [scripted_reply(6)],
                "model-broken": [ProviderAuthError("openai: invalid api key")],
                "model-gamma": [scripted_reply(8)],
            }
        )
    )
    failures: list[SampleFailure] = []
    report = _run(solved_state, write_config(["alpha", "broken", "gamma"]), provider, failures=failures)
    assert [(f.evaluator_id, f.sample, f.error) for f in failures] == [("broken", 1, "openai: invalid api key")]
    assert report.scores()["overall"].mean == 7 and report.scores()["overall"].n == 2
    broken = report.evaluators[1]
    assert broken.results == [] and broken.spread("overall") is None
    assert [e.config.id for e in report.succeeded()] == ["alpha", "gamma"]


def test_when_every_evaluator_fails_the_run_is_a_provider_error(
    solved_state: DebateState, write_config: Callable[..., Path]
) -> None:
    provider = ScriptedProvider(lambda request: ProviderAuthError(f"no access to {request.model}"))
    failures: list[SampleFailure] = []
    with pytest.raises(ProviderError, match="all 4 evaluation\\(s\\) failed") as caught:
        _run(solved_state, write_config(["alpha", "beta"]), provider, samples=2, failures=failures)
    assert caught.value.exit_code == 3
    assert len(failures) == 4


def test_a_score_outside_1_to_10_is_repaired_once(
    solved_state: DebateState, write_config: Callable[..., Path], scripted_reply: Reply
) -> None:
    provider = ScriptedProvider(replies=[scripted_reply({"security": 11}), scripted_reply(7)])
    report = _run(solved_state, write_config(["alpha"]), provider)
    assert len(provider.calls) == 2
    assert "security.score" in provider.calls[1].last_user
    assert report.scores()["security"].mean == 7


def test_a_reply_still_invalid_after_the_repair_is_a_failed_evaluation(
    solved_state: DebateState, write_config: Callable[..., Path], scripted_reply: Reply
) -> None:
    provider = ScriptedProvider(
        _by_model(
            {
                "model-alpha": [scripted_reply({"overall": 0}), scripted_reply({"overall": 12})],
                "model-beta": [scripted_reply(6)],
            }
        )
    )
    failures: list[SampleFailure] = []
    report = _run(solved_state, write_config(["alpha", "beta"]), provider, failures=failures)
    (failure,) = failures
    assert failure.evaluator_id == "alpha" and "did not validate" in failure.error and "overall.score" in failure.error
    assert report.scores()["overall"].n == 1


def test_evaluators_run_concurrently(solved_state: DebateState, write_config: Callable[..., Path]) -> None:
    provider = ScriptedProvider(latency_s=0.3)
    started = time.perf_counter()
    report = _run(solved_state, write_config(["a", "b", "c", "d"]), provider, samples=2)
    assert time.perf_counter() - started < 1.2
    assert report.scores()["overall"].n == 8


def test_concurrency_is_bounded_per_endpoint(solved_state: DebateState, write_config: Callable[..., Path]) -> None:
    active = 0
    peak = 0

    class Counting(ScriptedProvider):
        async def complete(self, request: CompletionRequest) -> Any:
            nonlocal active, peak
            active += 1
            peak = max(peak, active)
            try:
                await asyncio.sleep(0.05)
                return await super().complete(request)
            finally:
                active -= 1

    _run(solved_state, write_config(["a", "b", "c"], maxConcurrency=2), Counting(), samples=2)
    assert peak == 2


def test_custom_prompts_are_read_relative_to_the_config(
    tmp_path: Path, solved_state: DebateState, write_config: Callable[..., Path]
) -> None:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "system.md").write_text("You are a strict reviewer.", encoding="utf-8")
    (prompts / "user.md.j2").write_text(
        "Problem: {{ problem }}\nSolution: {{ solution.description }}\n"
        "{% for c in clarifications %}{{ c.question }}={{ c.answer }};{% endfor %}",
        encoding="utf-8",
    )
    config = write_config(
        [
            {
                "id": "alpha",
                "name": "Alpha",
                "model": "m",
                "provider": "scripted",
                "systemPromptPath": "prompts/system.md",
                "userPromptPath": "prompts/user.md.j2",
            }
        ]
    )
    plan = plan_evaluation(solved_state, load_eval_config(config))
    prompts_used = plan.evaluators[0].prompts
    assert plan.warnings == []
    assert prompts_used.system == "You are a strict reviewer."
    assert prompts_used.user.startswith("Problem: Design a rate limiter")
    assert "Is the limit per API key?=Yes, per key.;" in prompts_used.user
    assert prompts_used.system_source.kind == "file" and prompts_used.user_source.kind == "file"


@pytest.mark.parametrize(
    ("files", "warning"),
    [
        ({}, "cannot read"),
        ({"system.md": "   \n", "user.md.j2": "\n"}, "is empty"),
        ({"system.md": "ok", "user.md.j2": "{{ no_such_variable }}"}, "failed to render"),
    ],
)
def test_unusable_custom_prompts_fall_back_to_the_built_in_ones_with_a_warning(
    tmp_path: Path,
    solved_state: DebateState,
    write_config: Callable[..., Path],
    files: dict[str, str],
    warning: str,
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    config = write_config(
        [
            {
                "id": "alpha",
                "name": "Alpha",
                "model": "m",
                "provider": "scripted",
                "systemPromptPath": "system.md",
                "userPromptPath": "user.md.j2",
            }
        ]
    )
    plan = plan_evaluation(solved_state, load_eval_config(config))
    prompts_used = plan.evaluators[0].prompts
    assert any(warning in w and "evaluator 'alpha'" in w for w in plan.warnings)
    assert prompts_used.user_source.kind == "built-in"
    assert "## Final solution" in prompts_used.user


def test_a_debate_without_a_final_solution_cannot_be_evaluated(
    solved_state: DebateState, write_config: Callable[..., Path]
) -> None:
    unsolved = solved_state.model_copy(update={"final_solution": None, "status": "running"})
    with pytest.raises(InvalidArgumentsError, match="has no final solution") as caught:
        plan_evaluation(unsolved, load_eval_config(write_config(["alpha"])))
    assert caught.value.exit_code == 2


def test_disabled_evaluators_are_not_called(solved_state: DebateState, write_config: Callable[..., Path]) -> None:
    provider = ScriptedProvider()
    config = write_config(
        ["alpha", {"id": "off", "name": "Off", "model": "m-off", "provider": "scripted", "enabled": False}]
    )
    report = _run(solved_state, config, provider)
    assert [c.model for c in provider.calls] == ["model-alpha"]
    assert [e.config.id for e in report.evaluators] == ["alpha"]


def test_each_result_keeps_the_reasons(
    solved_state: DebateState, write_config: Callable[..., Path], scripted_reply: Reply
) -> None:
    provider = ScriptedProvider(replies=[scripted_reply(7, reason="Solid | simple")])
    report = _run(solved_state, write_config(["alpha"]), provider)
    (result,) = report.results()
    assert result.output.scores()["overall"].reason == "Solid | simple"
    assert result.model == "model-alpha" and result.usage.total_tokens > 0
