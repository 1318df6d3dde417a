"""The fake LLM server itself: its options, its bookkeeping and its command line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from typing import Any

import pytest

from dialectic.llm.base import CompletionRequest
from dialectic.testing.fake_server import FakeLLMServer, Fault, completion_request


def post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


CHAT = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}


def test_models_endpoint_lists_the_scripted_model(server: FakeLLMServer) -> None:
    with urllib.request.urlopen(server.openai_base_url + "/models", timeout=5) as response:
        listing = json.loads(response.read())
    assert listing["object"] == "list" and listing["data"][0]["id"] == "scripted-1"


def test_faults_are_consumed_in_order_and_call_count_excludes_them(server: FakeLLMServer) -> None:
    server.inject(Fault("status", status=503), times=2)
    server.inject(Fault("truncate"))
    url = server.openai_base_url + "/chat/completions"
    statuses = [post(url, CHAT)[0] for _ in range(4)]
    assert statuses == [503, 503, 200, 200]
    assert server.call_count == 2 and len(server.requests) == 4


def test_fail_after_keeps_failing() -> None:
    with FakeLLMServer(fail_after=2, always_fail_status=502) as flaky:
        url = flaky.openai_base_url + "/chat/completions"
        assert [post(url, CHAT)[0] for _ in range(5)] == [200, 200, 502, 502, 502]
        assert flaky.call_count == 2


def test_auth_key_accepts_bearer_or_x_api_key() -> None:
    with FakeLLMServer(auth_key="secret") as guarded:
        url = guarded.openai_base_url + "/chat/completions"
        assert post(url, CHAT)[0] == 401
        assert post(url, CHAT, {"Authorization": "Bearer nope"})[0] == 401
        assert post(url, CHAT, {"Authorization": "Bearer secret"})[0] == 200
        status, body = post(guarded.url + "/v1/messages", {**CHAT, "max_tokens": 10}, {"x-api-key": "secret"})
        assert status == 200 and body["type"] == "message"


def test_custom_responder_answers() -> None:
    with FakeLLMServer(lambda request: f"echo {request.last_user}") as echo:
        status, body = post(echo.openai_base_url + "/chat/completions", CHAT)
    assert status == 200 and body["choices"][0]["message"]["content"] == "echo hello"


def test_a_failing_responder_becomes_a_server_error() -> None:
    def explode(request: CompletionRequest) -> Exception:
        return RuntimeError("boom")

    with FakeLLMServer(explode) as broken:
        status, body = post(broken.openai_base_url + "/chat/completions", CHAT)
    assert status == 500 and "boom" in body["error"]["message"]


def test_request_bodies_become_completion_requests() -> None:
    responses = completion_request(
        "responses",
        {
            "model": "m",
            "instructions": "sys",
            "input": [{"role": "user", "content": [{"type": "input_text", "text": "q"}]}],
            "max_output_tokens": 9,
            "text": {"format": {"type": "json_schema", "name": "n", "schema": {"type": "object"}}},
        },
    )
    assert [(m.role, m.content) for m in responses.messages] == [("system", "sys"), ("user", "q")]
    assert responses.max_tokens == 9 and responses.json_schema is not None and responses.json_schema.name == "n"
    chat = completion_request(
        "chat", {"model": "m", "messages": [{"role": "developer", "content": "d"}], "max_tokens": 3}
    )
    assert chat.system == "d" and chat.max_tokens == 3 and chat.json_schema is None
    anthropic = completion_request(
        "anthropic",
        {
            "model": "m",
            "system": [{"type": "text", "text": "s"}],
            "messages": [{"role": "user", "content": "u"}],
            "tools": [{"name": "t", "input_schema": {"type": "object"}}],
            "tool_choice": {"type": "tool", "name": "t"},
        },
    )
    assert anthropic.system == "s" and anthropic.json_schema is not None and anthropic.json_schema.name == "t"


def test_stop_is_idempotent_and_url_needs_a_running_server() -> None:
    fake = FakeLLMServer().start()
    assert fake.url.startswith("http://127.0.0.1:")
    fake.stop()
    fake.stop()
    with pytest.raises(RuntimeError):
        _ = fake.url


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_command_line_prints_the_url_and_stops_on_a_signal(stop_signal: signal.Signals) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "dialectic.testing.fake_server", "--port", "0", "--latency", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        status, body = post(url + "/v1/chat/completions", CHAT)
        assert status == 200 and body["object"] == "chat.completion"
        process.send_signal(stop_signal)
        _, stderr = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0
    assert "Traceback" not in stderr
