"""The bench works on one (arm, item) pair at a time on the local model, which answers one call at a time."""

from __future__ import annotations

from dialectic.cli.bench_command import DEFAULT_CONCURRENCY
from dialectic.cli.bench_run import default_concurrency
from dialectic.core.config import AgentConfig


def agent(provider: str) -> AgentConfig:
    return AgentConfig(id=f"a-{provider}", name="A", role="generalist", provider=provider, model="m")


def test_only_local_agents_run_one_pair_at_a_time() -> None:
    assert default_concurrency([agent("local"), agent("local")]) == 1


def test_any_remote_agent_keeps_the_default() -> None:
    assert default_concurrency([agent("local"), agent("openai")]) == DEFAULT_CONCURRENCY
    assert default_concurrency([]) == DEFAULT_CONCURRENCY


def test_the_help_states_the_default_the_run_uses() -> None:
    from dialectic.cli import bench_run

    assert bench_run.DEFAULT_CONCURRENCY == DEFAULT_CONCURRENCY
