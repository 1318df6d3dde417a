"""The whole command against the fake server in llama-server's strict mode: nothing it refuses is ever sent.

The strict mode refuses what llama.cpp's ``llama-server`` refuses (untyped assistant items on its
Responses API, prompts past its window), ignores a schema on Responses and says ``completed`` on cut
replies. A debate, ``bench`` and ``eval`` complete against it with every ``api`` setting, and the
server answered every request it got (its refusals are recorded but never counted as calls).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from dialectic.testing.fake_server import FakeLLMServer

from .conftest import Workspace

pytestmark = pytest.mark.e2e

PATHS = {"auto": {"/v1/chat/completions"}, "chat": {"/v1/chat/completions"}, "responses": {"/v1/responses"}}


@pytest.fixture
def strict() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(strict=True) as fake:
        yield fake


def with_api(path: Path, api: str) -> Path:
    config = json.loads(path.read_text(encoding="utf-8"))
    for agent in [*config["agents"], config["judge"]]:
        agent["api"] = api
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def completions(server: FakeLLMServer) -> list[str]:
    return [r.path for r in server.requests if r.path.startswith("/v1/") and r.path != "/v1/models"]


@pytest.mark.parametrize("api", ["auto", "chat", "responses"])
def test_a_three_by_three_debate_with_a_context_directory_completes_and_nothing_is_refused(
    workspace: Workspace, strict: FakeLLMServer, api: str
) -> None:
    docs = workspace.root / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("# Notes\n\nRedis is deployed; 100 requests per minute per key.\n")
    config = with_api(workspace.write_config(strict, ("architect", "performance", "security"), rounds=3), api)
    result = workspace.run("debate", "Design a rate limiter", "--config", str(config), "--context", "docs")
    assert result.returncode == 0, result.stderr
    sent = completions(strict)
    assert set(sent) == PATHS[api]
    assert len(sent) == strict.call_count  # every request answered: none refused
    exported = workspace.export(workspace.debate_ids()[0])
    assert len(exported["rounds"]) == 3 and exported["finalSolution"]["description"]
    metadata = exported["rounds"][0]["contributions"][0]["metadata"]
    assert metadata["model"] == "gpt-4o-mini" and metadata["servedModel"].endswith(".gguf")


def test_bench_and_eval_complete_against_the_strict_server(workspace: Workspace, strict: FakeLLMServer) -> None:
    config = workspace.write_config(strict, ("architect", "kiss"), rounds=1)
    arms = "single,self-consistency:3,debate:3x2,dialectic"
    bench = workspace.run("bench", "arithmetic", "-n", "3", "--arms", arms, "-c", str(config), "-o", "r.json")
    assert bench.returncode == 0, bench.stderr
    document = json.loads((workspace.root / "r.json").read_text(encoding="utf-8"))
    assert {arm["arm"] for arm in document["arms"]} == set(arms.split(","))
    assert all(arm["failed"] == 0 and arm["failed_replies"] == 0 for arm in document["arms"])

    debate = workspace.run("debate", "Design a job queue", "--config", str(config))
    assert debate.returncode == 0, debate.stderr
    evaluator = {"id": "e", "name": "E", "provider": "openai", "model": "m", "baseUrl": strict.openai_base_url}
    evaluators = {"agents": [evaluator]}
    (workspace.root / "eval.json").write_text(json.dumps(evaluators), encoding="utf-8")
    debate_id = workspace.debate_ids()[0]
    evaluation = workspace.run("eval", "-c", "eval.json", "-d", debate_id)
    assert evaluation.returncode == 0, evaluation.stderr
    assert len(completions(strict)) == strict.call_count  # nothing refused across bench, debate and eval
