"""Fixtures for the ``eval`` tests: a solved debate, config files, scripted replies and a small CLI app."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from dialectic.cli import eval_run
from dialectic.cli.eval_command import evaluate
from dialectic.core.domain import AgentClarifications, ClarificationItem, DebateState, Solution
from dialectic.core.errors import DialecticError
from dialectic.eval.scores import CRITERION_KEYS
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import ScriptedProvider, ScriptedReply

PROBLEM = "Design a rate limiter for a public HTTP API serving 10k requests per second."


@pytest.fixture
def solved_state() -> DebateState:
    return DebateState(
        id="deb-20240501-090000-ABCD",
        problem=PROBLEM,
        status="completed",
        clarifications=[
            AgentClarifications(
                agent_id="agent-architect",
                agent_name="System Architect",
                role="architect",
                items=[
                    ClarificationItem(id="q1", question="Is the limit per API key?", answer="Yes, per key."),
                    ClarificationItem(id="q2", question="Any data residency rules?", answer=None),
                ],
            )
        ],
        final_solution=Solution(
            description="A token bucket per API key kept in Redis, enforced at the gateway.",
            tradeoffs=["Redis is a shared dependency"],
            recommendations=["Load-test the gateway at 2x peak"],
            unfulfilled_major_requirements=["Audit logging"],
            open_questions=["Burst size per plan?"],
            confidence=72,
        ),
    )


@pytest.fixture
def debate_file(tmp_path: Path, solved_state: DebateState) -> Path:
    path = tmp_path / "debate.json"
    path.write_text(json.dumps(solved_state.to_json_dict(), indent=2), encoding="utf-8")
    return path


def evaluator(agent_id: str, **fields: Any) -> dict[str, Any]:
    return {"id": agent_id, "name": agent_id.title(), "model": f"model-{agent_id}", "provider": "scripted", **fields}


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[..., Path]:
    """``write_config(["a", "b"])`` or ``write_config([{...agent...}], name="x.json")`` → the file's path."""

    def write(agents: list[str | dict[str, Any]], name: str = "eval-config.json", **top: Any) -> Path:
        path = tmp_path / name
        entries = [evaluator(a) if isinstance(a, str) else a for a in agents]
        path.write_text(json.dumps({"agents": entries, **top}), encoding="utf-8")
        return path

    return write


def reply(scores: float | dict[str, float], reason: str = "Because.") -> ScriptedReply:
    """A scripted evaluator reply: one score for every criterion, or scores by criterion key (default 5)."""
    by_key = scores if isinstance(scores, dict) else {key: scores for key in CRITERION_KEYS}
    value = {key: {"score": by_key.get(key, 5), "reason": reason} for key in CRITERION_KEYS}
    return ScriptedReply(text=json.dumps(value), structured=value)


@pytest.fixture
def scripted_reply() -> Callable[..., ScriptedReply]:
    return reply


@pytest.fixture
def use_provider(monkeypatch: pytest.MonkeyPatch) -> Callable[[ScriptedProvider], ScriptedProvider]:
    """Make the command's evaluators (provider ``scripted``) talk to the given provider."""

    def install(provider: ScriptedProvider) -> ScriptedProvider:
        monkeypatch.setattr(eval_run, "ProviderPool", lambda: ProviderPool(overrides={"scripted": provider}))
        return provider

    return install


@dataclass(frozen=True)
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


def _guarded(command: Callable[..., None]) -> Callable[..., None]:
    """What the main app does at its boundary: a DialecticError becomes a message and its exit code."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> None:
        try:
            command(*args, **kwargs)
        except DialecticError as exc:
            typer.echo(f"error: {exc.message}", err=True)
            raise typer.Exit(exc.exit_code) from exc

    return run


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., CliResult]]:
    """``cli("-c", path, "-d", debate)`` runs ``dialectic eval`` in ``tmp_path`` with an empty environment."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DIALECTIC_HOME", raising=False)
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

    @app.callback()
    def main() -> None:
        """dialectic (test app)."""

    app.command("eval")(_guarded(evaluate))
    runner = CliRunner()

    def invoke(*args: str | Path) -> CliResult:
        result = runner.invoke(app, ["eval", *(str(a) for a in args)], env={"COLUMNS": "200"})
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return CliResult(result.exit_code, result.stdout, result.stderr)

    yield invoke
