"""Running the evaluators on one debate and aggregating their scores.

Planning (:func:`plan_evaluation`) is separate from running (:func:`run_evaluation`) so the
command can show prompt warnings and check API keys before any call is made. Every
evaluator runs ``samples`` times, all of them concurrently (bounded per provider endpoint).
A failed evaluation is reported and left out; the averages use the evaluations that
succeeded, and only when none did is the whole run a :class:`~dialectic.core.errors.ProviderError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, TemplateError

from dialectic.agents.participants import read_prompt_file
from dialectic.core.domain import DebateState, PromptSource, Usage, utc_now
from dialectic.core.errors import DialecticError, InvalidArgumentsError, ProviderError
from dialectic.eval.config import EvaluatorConfig, LoadedEvalConfig
from dialectic.eval.patterns import evaluation_pattern
from dialectic.eval.scores import CRITERIA, CRITERION_KEYS, MAX_SCORE, MIN_SCORE, EvaluationOutput, Spread, spread
from dialectic.llm.base import CompletionRequest, Message
from dialectic.llm.client import LLMClient
from dialectic.llm.registry import ProviderPool
from dialectic.llm.retry import RetryPolicy

SYSTEM_TEMPLATE = "system.md.j2"
USER_TEMPLATE = "user.md.j2"


@lru_cache(maxsize=1)
def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("dialectic.eval", "prompts"),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@dataclass(frozen=True)
class EvaluatorPrompts:
    system: str
    user: str
    system_source: PromptSource
    user_source: PromptSource


@dataclass(frozen=True)
class PreparedEvaluator:
    config: EvaluatorConfig
    prompts: EvaluatorPrompts


@dataclass(frozen=True)
class EvaluationPlan:
    state: DebateState
    evaluators: list[PreparedEvaluator]
    max_concurrency: int
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SampleResult:
    evaluator_id: str
    sample: int
    """1-based index of the repetition (``--samples``)."""
    output: EvaluationOutput
    model: str
    latency_ms: int
    usage: Usage

    @property
    def score_pattern(self) -> str | None:
        """How the criterion scores follow a pattern down the list rather than the solution, if they do."""
        return evaluation_pattern(self.output)


@dataclass(frozen=True)
class SampleFailure:
    evaluator_id: str
    evaluator_name: str
    sample: int
    error: str


@dataclass(frozen=True)
class EvaluatorOutcome:
    config: EvaluatorConfig
    prompts: EvaluatorPrompts
    results: list[SampleResult]
    failures: list[SampleFailure]

    def spread(self, key: str) -> Spread | None:
        """This evaluator's scores for criterion ``key`` across its samples; ``None`` if it never succeeded."""
        values = [r.output.scores()[key].score for r in self.results]
        return spread(values) if values else None


@dataclass(frozen=True)
class EvaluationReport:
    debate_id: str
    problem: str
    source: str
    """Where the debate came from: the exported file's path, or ``store:<location>``."""
    evaluated_at: datetime
    samples: int
    evaluators: list[EvaluatorOutcome]

    def results(self) -> list[SampleResult]:
        return [r for e in self.evaluators for r in e.results]

    def failures(self) -> list[SampleFailure]:
        return [f for e in self.evaluators for f in e.failures]

    def succeeded(self) -> list[EvaluatorOutcome]:
        return [e for e in self.evaluators if e.results]

    def scores(self) -> dict[str, Spread]:
        """Each criterion's spread over every successful evaluation (all evaluators, all samples)."""
        results = self.results()
        return {key: spread([r.output.scores()[key].score for r in results]) for key in CRITERION_KEYS}


FailureHook = Callable[[SampleFailure], None]


def plan_evaluation(state: DebateState, loaded: LoadedEvalConfig) -> EvaluationPlan:
    """Build every enabled evaluator's prompts; raises ``InvalidArgumentsError`` without a final solution."""
    if state.final_solution is None:
        raise InvalidArgumentsError(
            f"debate {state.id} has no final solution (status: {state.status}); "
            "only a debate that reached synthesis can be evaluated"
        )
    warnings: list[str] = []
    variables = prompt_variables(state)
    prepared = [
        PreparedEvaluator(cfg, _prompts_for(cfg, loaded, variables, warnings)) for cfg in loaded.config.evaluators()
    ]
    return EvaluationPlan(state, prepared, loaded.config.max_concurrency, warnings)


def prompt_variables(state: DebateState) -> dict[str, Any]:
    """What the user prompt template sees (custom templates get exactly the same)."""
    clarifications = [
        {"agent": group.agent_name, "question": item.question, "answer": item.answer}
        for group in state.clarifications
        for item in group.items
    ]
    return {
        "problem": state.problem,
        "clarifications": clarifications,
        "solution": state.final_solution,
        "criteria": CRITERIA,
        "min_score": MIN_SCORE,
        "max_score": MAX_SCORE,
    }


def _prompts_for(
    cfg: EvaluatorConfig, loaded: LoadedEvalConfig, variables: dict[str, Any], warnings: list[str]
) -> EvaluatorPrompts:
    where = loaded.directory
    system_file = read_prompt_file(cfg.system_prompt_path, where, warnings, f"evaluator '{cfg.id}' system prompt")
    user_file = read_prompt_file(cfg.user_prompt_path, where, warnings, f"evaluator '{cfg.id}' user prompt")
    builtin_user = _environment().get_template(USER_TEMPLATE).render(**variables)
    user, user_source = builtin_user, PromptSource()
    if user_file.text is not None:
        try:
            user, user_source = _environment().from_string(user_file.text).render(**variables), user_file.source
        except TemplateError as exc:
            warnings.append(
                f"evaluator '{cfg.id}' user prompt {user_file.source.path} failed to render ({exc}); "
                "using the built-in prompt"
            )
    system = system_file.text or _environment().get_template(SYSTEM_TEMPLATE).render(**variables)
    return EvaluatorPrompts(system.strip(), user.strip(), system_file.source, user_source)


async def run_evaluation(
    plan: EvaluationPlan,
    pool: ProviderPool,
    *,
    samples: int = 1,
    source: str,
    retry: RetryPolicy | None = None,
    on_failure: FailureHook | None = None,
) -> EvaluationReport:
    """Run every evaluator ``samples`` times concurrently and collect the outcomes.

    ``on_failure`` hears about each failed evaluation as it happens. Raises
    :class:`ProviderError` when no evaluation at all succeeded.
    """
    if samples < 1:
        raise InvalidArgumentsError(f"--samples must be at least 1 (got {samples})")
    limits: dict[str, asyncio.Semaphore] = {}

    def client_for(cfg: EvaluatorConfig) -> LLMClient:
        agent = cfg.agent_config()
        limiter = limits.setdefault(pool.key_for(agent), asyncio.Semaphore(plan.max_concurrency))
        return LLMClient(pool.get(agent), retry=retry, limiter=limiter)

    async def one(prepared: PreparedEvaluator, client: LLMClient, sample: int) -> SampleResult | SampleFailure:
        outcome = await _evaluate_once(prepared, client, sample)
        if isinstance(outcome, SampleFailure) and on_failure is not None:
            on_failure(outcome)
        return outcome

    clients = [(prepared, client_for(prepared.config)) for prepared in plan.evaluators]
    jobs = [one(prepared, client, sample) for prepared, client in clients for sample in range(1, samples + 1)]
    outcomes = await asyncio.gather(*jobs)
    evaluators = [
        EvaluatorOutcome(
            config=prepared.config,
            prompts=prepared.prompts,
            results=[o for o in outcomes if isinstance(o, SampleResult) and o.evaluator_id == prepared.config.id],
            failures=[o for o in outcomes if isinstance(o, SampleFailure) and o.evaluator_id == prepared.config.id],
        )
        for prepared in plan.evaluators
    ]
    report = EvaluationReport(
        debate_id=plan.state.id,
        problem=plan.state.problem,
        source=source,
        evaluated_at=utc_now(),
        samples=samples,
        evaluators=evaluators,
    )
    if not report.results():
        failures = report.failures()
        first = failures[0].error if failures else "no evaluator ran"
        raise ProviderError(f"all {len(failures)} evaluation(s) failed; the first error: {first}")
    return report


async def _evaluate_once(prepared: PreparedEvaluator, client: LLMClient, sample: int) -> SampleResult | SampleFailure:
    cfg = prepared.config
    request = CompletionRequest(
        messages=(Message("system", prepared.prompts.system), Message("user", prepared.prompts.user)),
        model=cfg.model,
        temperature=cfg.temperature,
        timeout_s=cfg.timeout / 1000 if cfg.timeout else None,
        tag=f"evaluation:{cfg.id}",
    )
    try:
        result = await client.complete_structured(request, EvaluationOutput)
    except DialecticError as exc:
        return SampleFailure(cfg.id, cfg.name, sample, exc.message)
    if result.value is None:
        why = result.error or "the reply was not JSON"
        return SampleFailure(cfg.id, cfg.name, sample, f"the reply did not validate after one repair ({why})")
    done = result.completion
    return SampleResult(cfg.id, sample, result.value, done.model, done.latency_ms, done.usage)
