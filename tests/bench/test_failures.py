"""A benchmark run survives an item that fails; only errors that would fail every item stop it."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dialectic.bench.arms import ArmEnv, parse_arms, run_arm
from dialectic.bench.failures import fails_only_the_item
from dialectic.bench.records import ItemResult
from dialectic.bench.tasks import Item, arithmetic_task
from dialectic.core.config import AgentConfig, SystemConfig
from dialectic.core.errors import (
    BadRequest,
    ConfigError,
    DebateTimeoutError,
    ModelNotFound,
    ProviderAuthError,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
    ProviderUnreachable,
    RetriesExhausted,
    TooFewAgentsError,
)
from dialectic.llm.base import CompletionRequest
from dialectic.llm.registry import ProviderPool
from dialectic.llm.retry import RetryPolicy
from dialectic.llm.scripted import Script, ScriptedProvider, ScriptedReply
from dialectic.testing.fake_server import FakeLLMServer

from .conftest import Invoke, boxed, designed, engine_reply, parity, parity_answer, truth_of

FAST = RetryPolicy(max_attempts=2, base_delay_s=0.001, max_delay_s=0.002, jitter_s=0.0)
ENGINE_CONFIG = {
    "agents": [
        {"id": "x", "name": "X", "role": "architect", "provider": "scripted", "model": "m"},
        {"id": "y", "name": "Y", "role": "kiss", "provider": "scripted", "model": "m"},
    ],
    "judge": {"id": "j", "name": "J", "role": "generalist", "provider": "scripted", "model": "m"},
    "debate": {"rounds": 1},
}


def env_for(provider: ScriptedProvider, config: dict[str, Any] | None = None) -> ArmEnv:
    return ArmEnv(
        agents=(AgentConfig(id="a", name="A", role="generalist", provider="scripted", model="m"),),
        temperature=0.7,
        max_tokens=None,
        pool=ProviderPool(overrides={"scripted": provider}),
        retry=FAST,
        dialectic_config=SystemConfig.model_validate(config or ENGINE_CONFIG),
        config_dir=Path("."),
    )


def item(index: int) -> Item:
    return arithmetic_task(index + 1, 0).items[index]


def run(arm: str, index: int, env: ArmEnv) -> ItemResult:
    return asyncio.run(run_arm(parse_arms(arm)[0], item(index), env))


@pytest.mark.parametrize(
    ("error", "alone"),
    [
        (RetriesExhausted(ProviderUnavailable("down", status_code=503), 4), True),
        (RetriesExhausted(ProviderUnreachable("openai: cannot connect to http://127.0.0.1:9"), 4), False),
        (TooFewAgentsError("all dropped", cause=RetriesExhausted(ProviderUnreachable("no server"), 4)), False),
        (ProviderTimeout("silent"), True),
        (DebateTimeoutError("round 1 took longer than timeoutPerRound"), True),
        (BadRequest("too long", status_code=400), True),
        (ProviderError("llama.cpp failed"), True),
        (ProviderAuthError("bad key", status_code=401), False),
        (ModelNotFound("no such model", status_code=404), False),
        (ProviderError("endpoint not found (404); check the base URL", status_code=404), False),
        (ConfigError("local model file not found"), False),
        (KeyError("a bug"), False),
    ],
)
def test_which_errors_fail_only_the_item(error: BaseException, alone: bool) -> None:
    assert fails_only_the_item(error) is alone


def test_a_sample_whose_retries_ran_out_is_a_failed_reply_and_the_vote_goes_on() -> None:
    def respond(request: CompletionRequest) -> Script:
        if request.tag.endswith("sample-2"):
            return ProviderUnavailable("scripted: 503", provider="scripted", status_code=503)
        return boxed(truth_of(request))

    result = run("majority:3", 4, env_for(ScriptedProvider(respond)))
    failed = result.rounds[0][1]
    assert failed.error is not None and failed.error.startswith("RetriesExhausted: ")
    assert result.outcome == "correct" and result.votes == {result.final: 2}


def test_a_debate_agent_that_times_out_is_left_out_and_the_debate_goes_on() -> None:
    def respond(request: CompletionRequest) -> Script:
        if request.tag.endswith("agent-3/round-1"):
            return ProviderTimeout("scripted: sent nothing for 120 s", provider="scripted")
        return boxed(truth_of(request))

    provider = ScriptedProvider(respond)
    result = run("debate:3x2", 4, env_for(provider))
    assert result.rounds[0][2].error == "RetriesExhausted: scripted: sent nothing for 120 s (gave up after 2 attempts)"
    assert len(result.rounds[1]) == 3 and result.outcome == "correct"
    assert sum(c.tag.endswith("agent-3/round-1") for c in provider.calls) == FAST.max_timeout_attempts


def test_an_item_whose_every_sample_failed_is_a_failed_item() -> None:
    provider = ScriptedProvider(lambda request: ProviderError("scripted: llama.cpp failed", provider="scripted"))
    result = run("majority:3", 4, env_for(provider))
    assert result.outcome == "failed" and result.final is None
    assert result.failure == "ProviderError: scripted: llama.cpp failed"


def test_a_failed_debate_is_a_failed_item_with_the_stages_it_saved() -> None:
    def respond(request: CompletionRequest) -> Script:
        schema = request.json_schema
        if schema is not None and schema.name == "SynthesisOutput":
            return ProviderUnavailable("scripted: judge down", provider="scripted", status_code=503)
        return engine_reply(request, parity_answer(truth_of(request)))

    result = run("dialectic", 0, env_for(ScriptedProvider(respond)))
    assert result.outcome == "failed" and result.judge is not None
    assert result.failure is not None and result.failure.startswith("RetriesExhausted: scripted: judge down")
    assert result.stages == ["round 1 proposals", "round 1 refinements"]
    assert all(reply.answer is not None for stage in result.rounds for reply in stage)


def test_a_round_past_timeout_per_round_is_a_failed_item() -> None:
    def respond(request: CompletionRequest) -> Script:
        reply = engine_reply(request, parity_answer(truth_of(request)))
        return replace(reply, delay_s=0.5) if isinstance(reply, ScriptedReply) else ScriptedReply(reply, delay_s=0.5)

    config = {**ENGINE_CONFIG, "debate": {"rounds": 1, "timeoutPerRound": 50}}
    result = run("dialectic", 0, env_for(ScriptedProvider(respond), config))
    assert result.outcome == "failed"
    assert result.failure is not None and result.failure.startswith("DebateTimeoutError: round 1 made no progress")


@pytest.mark.parametrize(
    "fatal",
    [
        ProviderAuthError("scripted: authentication failed (401)", provider="scripted", status_code=401),
        ModelNotFound("scripted: model m not found (404)", provider="scripted", status_code=404),
        ProviderError("scripted: endpoint not found (404); check the base URL", provider="scripted", status_code=404),
    ],
    ids=["auth", "model", "endpoint"],
)
@pytest.mark.parametrize("arm", ["single", "dialectic"])
def test_errors_that_would_fail_every_item_still_stop_the_run(fatal: ProviderError, arm: str) -> None:
    with pytest.raises(ProviderError) as raised:
        run(arm, 0, env_for(ScriptedProvider(lambda request: fatal)))
    error = raised.value
    if isinstance(error, TooFewAgentsError):  # in a debate, every agent failed the same way and was dropped
        error = error.cause
    assert type(error) is type(fatal)


def test_the_cli_run_goes_on_past_a_failed_item_and_reports_it(invoke: Invoke, use_provider: Any, home: Path) -> None:
    failing_item = "arith-0002"

    def respond(request: CompletionRequest) -> Script:
        if request.tag.startswith(f"bench/single/{failing_item}/"):
            return ProviderError("scripted: llama.cpp failed", provider="scripted")
        return designed(request)

    provider = ScriptedProvider(respond)
    use_provider(provider)
    args = ("arithmetic", "-n", "5", "--arms", "single,majority:3", "--model", "m", "--provider", "scripted")
    out = invoke(*args, "-o", "r.json", "--report", "r.md")
    assert out.code == 0, out.stderr
    assert f"single {failing_item}: failed (ProviderError: scripted: llama.cpp failed); going on" in out.stderr
    document = json.loads((home / "r.json").read_text())
    arms = {a["arm"]: a for a in document["arms"]}
    assert arms["single"]["items"] == 5 and arms["single"]["failed"] == 1
    assert arms["majority:3"]["items"] == 5 and arms["majority:3"]["failed"] == 0
    entry = next(i for i in document["items"] if i["id"] == failing_item)
    assert entry["arms"]["single"]["outcome"] == "failed" and entry["arms"]["single"]["correct"] is False
    assert "| Failed |" in (home / "r.md").read_text()

    run_id = out.stderr.split("bench run ", 1)[1].split(":", 1)[0]
    again = ScriptedProvider(designed)
    use_provider(again)
    assert invoke("--resume", run_id).code == 0
    assert again.calls == []  # a failed item is a finished item: resuming does not repeat it


def test_over_http_a_judge_that_stalls_on_one_item_fails_that_item_only(
    invoke: Invoke, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stalled_truth = item(1).truth

    def respond(request: CompletionRequest) -> Script:
        answer = parity(request)
        schema = request.json_schema
        if schema is not None and schema.name == "SynthesisOutput" and str(truth_of(request)) == stalled_truth:
            return replace(answer, delay_s=3.0) if isinstance(answer, ScriptedReply) else answer
        return answer

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeLLMServer(respond) as server:
        agent = {"provider": "openai", "model": "fake-1", "baseUrl": server.openai_base_url, "timeout": 300}
        config = {
            "agents": [
                {"id": "a1", "name": "A1", "role": "architect", **agent},
                {"id": "a2", "name": "A2", "role": "kiss", **agent},
            ],
            "judge": {"id": "j", "name": "J", "role": "generalist", **agent},
            "debate": {"rounds": 1},
        }
        (home / "config.json").write_text(json.dumps(config), encoding="utf-8")
        out = invoke("arithmetic", "-n", "3", "--arms", "dialectic", "-c", "config.json", "-o", "r.json")
    assert out.code == 0, out.stderr
    document = json.loads((home / "r.json").read_text())
    outcomes = {i["id"]: i["arms"]["dialectic"]["outcome"] for i in document["items"]}
    assert outcomes[item(1).id] == "failed"
    assert [outcome for key, outcome in outcomes.items() if key != item(1).id].count("failed") == 0
    judge = next(i for i in document["items"] if i["id"] == item(1).id)["arms"]["dialectic"]["judge"]
    assert "RetriesExhausted" in judge["error"] and "sent nothing for 0.3 s" in judge["error"]


def test_a_server_that_cannot_be_reached_stops_the_run_instead_of_failing_its_items(
    invoke: Invoke, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    import dialectic.cli.bench_run

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setattr(dialectic.cli.bench_run, "RetryPolicy", lambda: FAST)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    agent = {"provider": "openai", "model": "fake-1", "baseUrl": f"http://127.0.0.1:{port}/v1"}
    config = {
        "agents": [{"id": "a", "name": "A", "role": "generalist", **agent}],
        "judge": {"id": "j", "name": "J", "role": "generalist", **agent},
        "debate": {"rounds": 1},
    }
    (home / "config.json").write_text(json.dumps(config), encoding="utf-8")

    out = invoke("arithmetic", "-n", "4", "--arms", "single,majority:3", "-c", "config.json", "-o", "r.json")
    assert out.code == 3  # a provider error, resumable (the message is the error's: "cannot connect to …")
    assert "stopped with 0 of 8 results saved" in out.stderr and "resume with" in out.stderr
    assert "failed (" not in out.stderr  # no item was recorded as failed
    if (home / "r.json").exists():
        assert json.loads((home / "r.json").read_text())["items"] == []
