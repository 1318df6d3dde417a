"""The public Python API: ``import dialectic`` runs, streams, resumes and reads debates (the scripted model)."""

from __future__ import annotations

import asyncio
import doctest
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import dialectic
from dialectic import Agent, Debate, DebateResult, Finished, Judge, events
from dialectic.core.errors import ConfigError, InvalidArgumentsError, MissingApiKeyError
from dialectic.front import debate as debate_module
from dialectic.store import open_store
from dialectic.testing.fake_server import FakeLLMServer
from tests.e2e.conftest import PROVIDER_ENV

SCRIPTED = {"provider": "scripted", "model": "m"}


def scripted(**options: object) -> Debate:
    return Debate(agents=[Agent("architect"), Agent("security")], provider="scripted", store=":memory:", **options)


def test_the_front_door_is_short_and_lazy() -> None:
    assert set(dialectic.__all__) >= {"Debate", "Agent", "Judge", "load_config", "DebateResult", "events"}
    code = "import sys, dialectic; print('dialectic.engine.api' in sys.modules)"
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "False"  # the CLI imports the package first: it must stay light


def test_run_sync_gives_the_outcome() -> None:
    result = scripted(rounds=1).run_sync("Design a rate limiter")
    assert isinstance(result, DebateResult)
    assert result.status == "completed" and result.solution
    assert result.usage.calls > 0 and result.usage.input_tokens > 0
    assert "# " in result.report() and json.loads(result.to_json())["id"] == result.id


def test_the_docstring_example_runs() -> None:
    failures, tried = doctest.testmod(debate_module, verbose=False)
    assert tried > 0 and failures == 0


def test_stream_yields_typed_events_with_token_deltas_then_the_result() -> None:
    async def collect() -> list[object]:
        return [event async for event in scripted(rounds=1).stream("Design a cache")]

    seen = asyncio.run(collect())
    kinds = {type(event) for event in seen}
    assert events.DebateStarted in kinds and events.ContributionAdded in kinds and events.TokenDelta in kinds
    assert isinstance(seen[-1], Finished) and seen[-1].result.status == "completed"
    assert all(isinstance(event, dialectic.Event) for event in seen)


def test_clarifying_questions_suspend_and_resume_takes_the_answers() -> None:
    debate = scripted(rounds=1)
    asked = debate.run_sync("Design a cache", clarify=True)
    assert asked.status == "suspended" and asked.questions
    done = asked
    for _ in range(3):  # the scripted agents may ask follow-ups
        done = debate.resume_sync(done.id, {q.id: "EU only" for q in done.questions})
        if done.status != "suspended":
            break
    assert done.status == "completed"
    assert debate.load(done.id).solution == done.solution


def test_agents_and_judge_are_built_from_roles(tmp_path: Path) -> None:
    debate = Debate(
        agents=[Agent("architect", temperature=0.1), Agent("architect")],
        judge=Judge(name="Referee"),
        provider="scripted",
        store=":memory:",
    )
    assert [a.id for a in debate.config.agents] == ["agent-architect", "agent-architect-2"]
    assert debate.config.agents[0].temperature == 0.1 and debate.config.judge.name == "Referee"
    assert {a.provider for a in [*debate.config.agents, debate.config.judge]} == {"scripted"}


def test_the_store_is_the_clis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIALECTIC_HOME", str(tmp_path / "home"))
    result = Debate(provider="scripted", rounds=1).run_sync("Design a queue")
    store = open_store(None)
    try:
        assert store.load(result.id).status == "completed"
    finally:
        store.close()
    assert [d.id for d in Debate(provider="scripted").list()] == [result.id]


def test_a_missing_key_is_said_before_anything_is_created(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(MissingApiKeyError, match="OPENAI_API_KEY"):
        Debate(provider="openai", store=":memory:")


def test_run_sync_inside_an_event_loop_says_to_await() -> None:
    async def inside() -> None:
        with pytest.raises(InvalidArgumentsError, match="await run"):
            scripted().run_sync("x")

    asyncio.run(inside())


def test_the_readmes_example_runs_as_printed(tmp_path: Path) -> None:
    """With OPENAI_API_KEY and OPENAI_BASE_URL pointing at the fake server, and the README's config file name."""
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    example = readme.split("```python\n", 1)[1].split("```", 1)[0]
    assert "Debate.from_config" in example
    config = {"agents": [{"id": "a", "name": "Architect", "role": "architect"}], "debate": {"rounds": 1}}
    (tmp_path / "debate-config.json").write_text(json.dumps(config), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_ENV}
    with FakeLLMServer() as server:
        env |= {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": server.openai_base_url}
        env["DIALECTIC_HOME"] = str(tmp_path / "home")
        shown = subprocess.run(
            [sys.executable, "-c", example], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip()


def test_a_bad_argument_is_named_as_the_program_wrote_it() -> None:
    """The errors of the Python API name its keyword arguments, not the CLI's flags."""
    with pytest.raises(InvalidArgumentsError) as too_many:
        scripted(max_answers=65)
    assert too_many.value.message == "max_answers must be between 2 and 64 (got 65)"
    with pytest.raises(InvalidArgumentsError) as no_rounds:
        Debate(dialectic.load_config(provider="scripted"), rounds=0)
    assert no_rounds.value.message == "rounds must be at least 1 (got 0)"
    with pytest.raises(InvalidArgumentsError) as shouting:
        dialectic.load_config(provider="scripted", debate_format="shouting")
    assert shouting.value.message.startswith("format shouting: unknown format (known: auto, adaptive,")
    with pytest.raises(InvalidArgumentsError) as no_role:
        dialectic.load_config(provider="scripted", roles="poet")
    assert no_role.value.message.startswith("roles poet: no enabled agent has that role")
    with pytest.raises(InvalidArgumentsError) as text:
        dialectic.load_config(provider="scripted", rounds="3")
    assert text.value.message == "rounds must be a whole number (got '3')"
    with pytest.raises(ConfigError) as unknown:
        Debate(provider="nope", store=":memory:")
    assert unknown.value.message.startswith("unknown provider 'nope' given to provider (known: ")
    with pytest.raises(ConfigError) as typo:
        Debate(provider="opneai", store=":memory:")
    assert typo.value.message.startswith(
        "unknown provider 'opneai' given to provider — did you mean `openai`? (known: "
    )
