"""Running a benchmark: every (arm, item) pair not yet stored, at most K items at a time.

Pairs are taken item by item (all arms of item 1, then of item 2, …), so an interrupted run
leaves the arms with nearly the same items done and the paired comparisons stay meaningful.
Each result is saved the moment it finishes. An arm that fails on one item records it as a
failed item and the run goes on; the first error that would fail every item (see
:mod:`.failures`) stops the run (calls still in flight are cancelled); what was saved stays, and
``--resume`` carries on from there.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from dialectic.bench.arms import ArmEnv, ArmSpec, gather_or_cancel, parse_arms, run_arm
from dialectic.bench.plan import built_task
from dialectic.bench.records import ItemResult, RunSpec
from dialectic.bench.store import BenchStore
from dialectic.bench.tasks import Item, Task, jsonl_task
from dialectic.core.config import AgentConfig, SystemConfig
from dialectic.core.errors import InvalidArgumentsError
from dialectic.llm.registry import ProviderPool
from dialectic.llm.retry import RetryPolicy


@dataclass(frozen=True)
class ArmTally:
    """An arm's finished items, how many were right and how many failed."""

    done: int = 0
    correct: int = 0
    failed: int = 0

    def add(self, result: ItemResult) -> ArmTally:
        failed = int(result.outcome == "failed")
        return ArmTally(self.done + 1, self.correct + int(result.correct), self.failed + failed)


class ProgressSink(Protocol):
    def begin(self, arms: Sequence[str], total: int, done: Mapping[str, ArmTally]) -> None:
        """``done`` tallies the items each arm had already finished — non-zero on resume."""

    def advance(self, result: ItemResult) -> None: ...


def task_for(spec: RunSpec) -> Task:
    """Rebuild the run's questions; a resumed run must get exactly the ones it started with."""
    if spec.task == "jsonl":
        task = jsonl_task(Path(spec.dataset or ""), spec.n, spec.match)
    else:
        task = built_task(spec, spec.n or 0)
    if task.fingerprint != spec.fingerprint:
        raise InvalidArgumentsError(
            f"the questions of run {spec.id} have changed since it started ({spec.dataset or spec.task}); "
            "start a new run instead of resuming"
        )
    return task


def arms_for(spec: RunSpec) -> list[ArmSpec]:
    return parse_arms(",".join(spec.arms))


def env_for(spec: RunSpec, pool: ProviderPool, retry: RetryPolicy) -> ArmEnv:
    return ArmEnv(
        agents=tuple(AgentConfig.model_validate(a) for a in spec.agents),
        temperature=spec.temperature,
        max_tokens=spec.max_tokens,
        pool=pool,
        retry=retry,
        dialectic_config=SystemConfig.model_validate(spec.dialectic_config),
        config_dir=Path(spec.config_dir),
    )


def calling_agents(spec: RunSpec, env: ArmEnv) -> list[AgentConfig]:
    """Every agent that will make calls: the bench agents, and the dialectic configuration's participants and
    judge when an arm runs the engine (``dialectic``, ``format:NAME``)."""
    agents = list(env.agents)
    if any(arm == "dialectic" or arm.startswith("format:") for arm in spec.arms):
        agents += [*env.dialectic_config.participants(), env.dialectic_config.judge]
    return agents


def pending(task: Task, arms: Sequence[ArmSpec], done: set[tuple[str, str]]) -> list[tuple[ArmSpec, Item]]:
    """The pairs still to run, item-major."""
    return [(arm, item) for item in task.items for arm in arms if (arm.name, item.id) not in done]


def tallies(results: Sequence[ItemResult]) -> dict[str, ArmTally]:
    counts: dict[str, ArmTally] = {}
    for r in results:
        counts[r.arm] = counts.get(r.arm, ArmTally()).add(r)
    return counts


async def run_bench(
    spec: RunSpec,
    task: Task,
    env: ArmEnv,
    store: BenchStore,
    *,
    concurrency: int,
    progress: ProgressSink | None = None,
) -> int:
    """Run what is left of ``spec``; return how many (arm, item) pairs were run now."""
    if concurrency < 1:
        raise InvalidArgumentsError(f"--concurrency must be at least 1 (got {concurrency})")
    arms = arms_for(spec)
    todo = pending(task, arms, store.done(spec.id))
    if progress is not None:
        progress.begin([a.name for a in arms], len(task.items), tallies(store.results(spec.id)))
    queue: Iterator[tuple[ArmSpec, Item]] = iter(todo)

    async def worker() -> None:
        for arm, item in queue:
            result = await run_arm(arm, item, env)
            store.save(spec.id, result)
            if progress is not None:
                progress.advance(result)

    await gather_or_cancel(worker() for _ in range(min(concurrency, max(1, len(todo)))))
    return len(todo)
