"""``dialectic eval`` through the real openai SDK against the fake server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script, ScriptedReply
from dialectic.testing.fake_server import FakeLLMServer

API_KEY = "eval-test-key"


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The env file writes into os.environ: set-then-delete so teardown removes what it adds."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.setenv(name, "x")
        monkeypatch.delenv(name)
    yield


def test_evaluators_score_through_the_openai_sdk(
    cli: Callable[..., Any],
    tmp_path: Path,
    write_config: Callable[..., Path],
    debate_file: Path,
    scripted_reply: Callable[..., ScriptedReply],
) -> None:
    seen: dict[str, int] = {}

    def respond(request: CompletionRequest) -> Script:
        seen[request.model] = seen.get(request.model, 0) + 1
        if request.model == "gpt-b" and seen["gpt-b"] == 1:
            return scripted_reply({"overall": 42})  # out of range: the client asks for a repair
        return scripted_reply(6 if request.model == "gpt-a" else 9)

    with FakeLLMServer(responder=respond, auth_key=API_KEY) as server:
        env = tmp_path / "eval.env"
        env.write_text(f"OPENAI_API_KEY={API_KEY}\nOPENAI_BASE_URL={server.openai_base_url}\n", encoding="utf-8")
        config = write_config(
            [
                {"id": "a", "name": "A", "model": "gpt-a", "provider": "openai", "timeout": 10000},
                {"id": "b", "name": "B", "model": "gpt-b", "provider": "openai", "timeout": 10000},
            ]
        )
        out = tmp_path / "result.json"
        result = cli("-c", config, "-d", debate_file, "--env-file", env, "-o", out)
        requests = list(server.requests)
    assert result.exit_code == 0, result.stderr
    assert seen == {"gpt-a": 1, "gpt-b": 2}
    assert {r.path for r in requests} == {"/v1/chat/completions"}  # api auto: Chat Completions off OpenAI's endpoint
    first = requests[0].body
    assert first["response_format"]["type"] == "json_schema"
    assert "independent evaluator" in first["messages"][0]["content"]
    assert all(r.headers["authorization"] == f"Bearer {API_KEY}" for r in requests)
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["scores"]["overall"] == {"mean": 7.5, "sd": 2.12, "min": 6, "max": 9, "n": 2}
    assert [e["status"] for e in data["evaluators"]] == ["ok", "ok"]
    assert data["evaluators"][1]["samples"][0]["usage"]["totalTokens"] > 0
