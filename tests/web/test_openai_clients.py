"""Third-party clients of OpenAI's API against ``dialectic serve`` (the installed command, on 127.0.0.1):
the openai SDK, the ``llm`` CLI and curl, each running a debate whose agents are on the fake server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import openai
import pytest

from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script, default_reply
from dialectic.testing.fake_server import FakeLLMServer

BIN = Path(sys.executable).parent
DIALECTIC = str(BIN / "dialectic")
TOKEN = "openai-clients-token-0123456789"
ANSWER = "391"
pytestmark = pytest.mark.e2e
FORMATS = ["auto", "adaptive", "critique-refine"]


def reply(request: CompletionRequest) -> Script:
    """Every reply in text is 391, worked (the adaptive tally decides on it); structured ones are scripted."""
    if request.json_schema is None:
        return f"17 × 23 = 17 × 20 + 17 × 3 = 340 + 51 = 391.\n\n\\boxed{{{ANSWER}}}"
    return default_reply(request)


@dataclass
class Served:
    url: str
    root: Path
    fake: FakeLLMServer
    env: dict[str, str]

    @property
    def base_url(self) -> str:
        return self.url + "v1"

    def sdk(self, token: str = TOKEN) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.base_url, api_key=token, max_retries=0, timeout=60)

    def show(self, debate_id: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [DIALECTIC, "show", debate_id, "--store", str(self.root / "store")],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )


def config(base_url: str, models: tuple[str, str]) -> dict[str, object]:
    endpoint = {"provider": "openai", "baseUrl": base_url}
    return {
        "agents": [
            {"id": "agent-architect", "name": "System Architect", "role": "architect", "model": models[0], **endpoint},
            {"id": "agent-kiss", "name": "Simplicity Advocate", "role": "kiss", "model": models[1], **endpoint},
        ],
        "judge": {"id": "judge-main", "name": "Technical Judge", "role": "generalist", "model": models[0], **endpoint},
        "debate": {"rounds": 1},
    }


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``dialectic serve --token … --model panel=panel.json --max-body 4096`` on a free port."""
    root = tmp_path_factory.mktemp("openai-clients")
    with FakeLLMServer(reply) as fake:
        (root / "debate-config.json").write_text(json.dumps(config(fake.openai_base_url, ("m-one", "m-two"))))
        (root / "panel.json").write_text(json.dumps(config(fake.openai_base_url, ("m-three", "m-four"))))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "DIALECTIC_"))}
        env.update(OPENAI_API_KEY="test-key", DIALECTIC_HOME=str(root / "home"), DIALECTIC_TOKEN=TOKEN)
        command = [DIALECTIC, "serve", "--port", "0", "--store", str(root / "store"), "--max-body", "4096"]
        process = subprocess.Popen(
            [*command, "--model", "panel=panel.json"],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=(root / "serve.stderr").open("w"),
            text=True,
        )
        assert process.stdout is not None
        line = process.stdout.readline()
        try:
            assert line.startswith("Serving on http://127.0.0.1:"), (line, (root / "serve.stderr").read_text())
            yield Served(line.split()[2], root, fake, env)
        finally:
            process.terminate()
            process.wait(timeout=30)
    assert "Traceback" not in (root / "serve.stderr").read_text()


def test_the_sdk_lists_the_models_offered(served: Served) -> None:
    ids = [model.id for model in served.sdk().models.list()]
    assert ids[: len(FORMATS)] == [f"dialectic/{name}" for name in FORMATS]
    assert ids[-1] == "dialectic/panel"
    assert served.sdk().models.retrieve("dialectic/panel").owned_by == "dialectic"


def test_the_sdk_gets_the_tallys_answer(served: Served) -> None:
    completion = served.sdk().chat.completions.create(
        model="dialectic/adaptive", messages=[{"role": "user", "content": "What is 17 * 23?"}]
    )
    assert completion.choices[0].message.content == ANSWER
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None and completion.usage.total_tokens > 0
    shown = served.show(completion.id)  # the completion's id is the debate's
    assert shown.returncode == 0 and "completed" in shown.stdout, shown.stderr


def test_the_sdk_streams_the_answer(served: Served) -> None:
    stream = served.sdk().chat.completions.create(
        model="dialectic/adaptive",
        messages=[{"role": "user", "content": "What is 17 * 23?"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == ANSWER
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
    assert len({c.id for c in chunks}) == 1 and served.show(chunks[0].id).returncode == 0


def test_the_sdk_speaks_the_responses_api(served: Served) -> None:
    response = served.sdk().responses.create(
        model="dialectic/adaptive", instructions="Answer with a number.", input="What is 17 * 23?"
    )
    assert response.output_text == ANSWER and response.status == "completed"
    assert response.usage is not None and response.usage.total_tokens > 0
    assert served.show(response.id).returncode == 0
    events = list(
        served.sdk().responses.create(
            model="dialectic/adaptive", input=[{"role": "user", "content": "What is 17 * 23?"}], stream=True
        )
    )
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == ANSWER == events[-1].response.output_text


def test_a_named_configuration_runs_its_own_panel(served: Served) -> None:
    before = len(served.fake.requests)
    completion = served.sdk().chat.completions.create(
        model="dialectic/panel", messages=[{"role": "user", "content": "Design a rate limiter"}]
    )
    assert completion.choices[0].message.content
    models = {r.body.get("model") for r in served.fake.requests[before:] if r.path.endswith("/completions")}
    assert models == {"m-three", "m-four"}


def test_the_sdk_is_refused_with_the_wrong_token_or_an_unknown_model(served: Served) -> None:
    messages = [{"role": "user", "content": "What is 17 * 23?"}]
    before = len(served.fake.requests)
    with pytest.raises(openai.AuthenticationError) as denied:
        served.sdk("not-the-token").chat.completions.create(model="dialectic/adaptive", messages=messages)
    assert denied.value.status_code == 401 and "token" in denied.value.message
    with pytest.raises(openai.NotFoundError) as missing:
        served.sdk().chat.completions.create(model="gpt-4o", messages=messages)
    assert missing.value.code == "model_not_found"
    assert "dialectic/adaptive" in missing.value.message and "dialectic/panel" in missing.value.message
    assert len(served.fake.requests) == before  # no work was done


def test_the_llm_cli_prints_a_debates_answer(served: Served, tmp_path: Path) -> None:
    """``llm`` configured through its extra-openai-models.yaml, its key in its keys.json, offline."""
    (tmp_path / "extra-openai-models.yaml").write_text(
        "- model_id: dialectic-adaptive\n"
        "  model_name: dialectic/adaptive\n"
        f"  api_base: {served.base_url}\n"
        "  api_key_name: dialectic\n"
        "- model_id: dialectic-responses\n"  # the same model, through the Responses API
        "  model_name: dialectic/adaptive\n"
        f"  api_base: {served.base_url}\n"
        "  api_key_name: dialectic\n"
        "  responses: true\n"
    )
    (tmp_path / "keys.json").write_text(json.dumps({"dialectic": TOKEN}))
    env = {**served.env, "LLM_USER_PATH": str(tmp_path)}
    for model, streamed in [
        ("dialectic-adaptive", []),
        ("dialectic-adaptive", ["--no-stream"]),
        ("dialectic-responses", []),
        ("dialectic-responses", ["--no-stream"]),
    ]:
        result = subprocess.run(
            [str(BIN / "llm"), "-m", model, *streamed, "What is 17 * 23?"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == ANSWER


@pytest.fixture
def curl() -> str:
    found = shutil.which("curl")
    if found is None:
        pytest.skip("curl is not installed")
    return found


def run_curl(curl: str, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """curl's output with its headers (``-i``), line ends read as ``\n``."""
    return subprocess.run([curl, "-sS", "-i", url, *args], capture_output=True, text=True, timeout=120)


def test_curl_gets_a_completion_and_a_stream(served: Served, curl: str) -> None:
    url = served.base_url + "/chat/completions"
    auth = ["-H", f"Authorization: Bearer {TOKEN}", "-H", "Content-Type: application/json"]
    body = {"model": "dialectic/adaptive", "messages": [{"role": "user", "content": "What is 17 * 23?"}]}
    plain = run_curl(curl, url, *auth, "-d", json.dumps(body))
    head, _, text = plain.stdout.partition("\n\n")
    assert head.startswith("HTTP/1.1 200"), plain.stdout
    reply = json.loads(text)
    assert reply["object"] == "chat.completion" and reply["choices"][0]["message"]["content"] == ANSWER
    assert f"\nx-dialectic-debate-id: {reply['id']}\n" in head

    streamed = run_curl(curl, url, "-N", *auth, "-d", json.dumps({**body, "stream": True}))
    events = [block for block in streamed.stdout.partition("\n\n")[2].split("\n\n") if block]
    assert any(block.startswith(": round 1") for block in events)  # progress, as SSE comments
    data = [block.removeprefix("data: ") for block in events if block.startswith("data: ")]
    assert data[-1] == "[DONE]"
    pieces = [json.loads(d)["choices"][0]["delta"].get("content") or "" for d in data[:-1]]
    assert "".join(pieces) == ANSWER


def test_curl_is_refused_before_any_work(served: Served, curl: str) -> None:
    url = served.base_url + "/chat/completions"
    before = len(served.fake.requests)
    big = {"model": "dialectic/adaptive", "messages": [{"role": "user", "content": "x" * 5000}]}
    cases = [
        (["-H", "Authorization: Bearer wrong-token", "-d", "{}"], 401, "authentication_error"),
        (["-H", f"Authorization: Bearer {TOKEN}", "-d", json.dumps(big)], 413, "invalid_request_error"),
        (
            ["-H", f"Authorization: Bearer {TOKEN}", "-d", '{"model": "dialectic/adaptive"}'],
            422,
            "invalid_request_error",
        ),
    ]
    for args, status, kind in cases:
        result = run_curl(curl, url, "-H", "Content-Type: application/json", *args)
        head, _, text = result.stdout.partition("\n\n")
        assert head.startswith(f"HTTP/1.1 {status}"), result.stdout
        assert json.loads(text)["error"]["type"] == kind
    assert len(served.fake.requests) == before
