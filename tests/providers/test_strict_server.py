"""The fake server's strict mode: llama.cpp's llama-server as it answers, at the HTTP level."""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from dialectic.llm.base import CompletionRequest, JsonSchema
from dialectic.testing.fake_server import (
    DEFAULT_STRICT_N_CTX,
    MODEL_PATH,
    FakeLLMServer,
    _parser,
    _server,
    completion_request,
)
from dialectic.testing.wire import prompt_tokens

SCHEMA = {"type": "object", "properties": {"verdict": {"type": "string"}}, "required": ["verdict"]}
LONG_REPLY = " ".join(f"word{i}" for i in range(40))


def call(url: str, body: dict[str, Any] | None = None) -> tuple[int, bytes]:
    """POST ``body`` (GET without one); the status and the raw reply."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    status, raw = call(url, body)
    return status, json.loads(raw)


def get(url: str) -> tuple[int, dict[str, Any]]:
    status, raw = call(url)
    return status, json.loads(raw)


def stream_chunks(url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    status, raw = call(url, {**body, "stream": True})
    assert status == 200
    lines = [line[len("data: ") :] for line in raw.decode().splitlines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(line) for line in lines[:-1]]


def chat(content: str = "hello", **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-test", "messages": [{"role": "user", "content": content}], **extra}


def responses(items: Any, **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-test", "input": items, **extra}


@pytest.fixture
def strict() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(strict=True) as running:
        yield running


# 1. Responses input items must be typed as the Responses API defines them


def test_an_untyped_assistant_item_is_refused_as_llama_server_does(strict: FakeLLMServer) -> None:
    items = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}, {"role": "user", "content": "q2"}]
    status, body = post(strict.openai_base_url + "/responses", responses(items))
    assert status == 400
    assert body == {
        "error": {"code": 400, "message": "Cannot determine type of 'item'", "type": "invalid_request_error"}
    }
    assert strict.call_count == 0


def test_typed_items_and_untyped_input_messages_are_taken(strict: FakeLLMServer) -> None:
    items = [
        {"role": "developer", "content": "be brief"},
        {"role": "user", "content": [{"type": "input_text", "text": "q"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a"}]},
        {"type": "message", "role": "assistant", "content": "plain text is fine too"},
        {"type": "function_call", "call_id": "c1", "name": "look", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "found"},
        {"type": "message", "role": "user", "content": "q2"},
    ]
    status, body = post(strict.openai_base_url + "/responses", responses(items))
    assert status == 200 and body["status"] == "completed"


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"type": "function_call_output", "output": "no call id"}, "Cannot determine type of 'item'"),
        ({"type": "function_call", "call_id": "c1", "name": "look"}, "Cannot determine type of 'item'"),
        ("just a string", "Cannot determine type of 'item'"),
        (
            {"role": "user", "content": [{"type": "output_text", "text": "x"}]},
            "'type' must be one of 'input_text', 'input_image', or 'input_file'",
        ),
        (
            {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "x"}]},
            "'type' must be one of 'output_text' or 'refusal'",
        ),
    ],
    ids=["output-without-call-id", "call-without-arguments", "not-an-object", "user-output-text", "assistant-text"],
)
def test_other_items_llama_server_refuses(strict: FakeLLMServer, item: Any, message: str) -> None:
    status, body = post(strict.openai_base_url + "/responses", responses([item]))
    assert status == 400 and body["error"]["message"] == message


def test_the_lenient_server_still_takes_untyped_assistant_items(server: FakeLLMServer) -> None:
    items = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}, {"role": "user", "content": "q2"}]
    status, body = post(server.openai_base_url + "/responses", responses(items))
    assert status == 200 and body["status"] == "completed"
    assert [m.role for m in server.scripted.calls[0].messages] == ["user", "assistant", "user"]


# 2. Responses text.format is ignored; 7. Chat Completions response_format is honoured


def test_responses_text_format_is_ignored(strict: FakeLLMServer) -> None:
    text = {"format": {"type": "json_schema", "name": "verdict", "schema": SCHEMA}}
    status, body = post(strict.openai_base_url + "/responses", responses("judge", text=text))
    assert status == 200
    assert strict.scripted.calls[-1].json_schema is None
    reply = body["output"][0]["content"][0]["text"]
    assert reply.startswith("[reply] Scripted answer")  # the default responder's reply without a schema
    with FakeLLMServer() as lenient:  # the lenient server answers with the schema
        _, answered = post(lenient.openai_base_url + "/responses", responses("judge", text=text))
    assert json.loads(answered["output"][0]["content"][0]["text"]) == {"verdict": "Scripted verdict"}


def test_chat_response_format_is_honoured(strict: FakeLLMServer) -> None:
    response_format = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": SCHEMA}}
    status, body = post(strict.openai_base_url + "/chat/completions", chat(response_format=response_format))
    assert status == 200 and strict.scripted.calls[-1].json_schema == JsonSchema("verdict", SCHEMA)
    assert json.loads(body["choices"][0]["message"]["content"]) == {"verdict": "Scripted verdict"}


# 3. Responses replies are always "completed"


def test_a_cut_responses_reply_is_still_completed() -> None:
    with FakeLLMServer(lambda request: LONG_REPLY, strict=True) as strict:
        status, body = post(strict.openai_base_url + "/responses", responses("go", max_output_tokens=5))
    assert status == 200 and body["status"] == "completed" and "incomplete_details" not in body
    assert body["output"][0]["status"] == "completed"
    assert body["usage"]["output_tokens"] == 5
    with FakeLLMServer(lambda request: LONG_REPLY) as lenient:
        _, cut = post(lenient.openai_base_url + "/responses", responses("go", max_output_tokens=5))
    assert cut["status"] == "incomplete" and cut["incomplete_details"] == {"reason": "max_output_tokens"}


# 4. The context window


def test_the_prompt_estimate_counts_every_character_a_quarter_token() -> None:
    request = completion_request(
        "chat",
        {
            "messages": [{"role": "system", "content": "s" * 10}, {"role": "user", "content": "u" * 7}],
            "tools": [{"type": "function", "function": {"name": "look", "description": "d", "parameters": {}}}],
        },
    )
    assert prompt_tokens(request) == math.ceil((10 + 7 + len("look") + len("d") + len("{}")) / 4)
    assert prompt_tokens(CompletionRequest(messages=(), model="m")) == 0


def test_a_prompt_past_the_window_is_refused_with_its_size_for_both_apis() -> None:
    big = "x" * 400  # 100 tokens
    with FakeLLMServer(strict=True, n_ctx=64) as strict:
        chat_status, chat_error = post(strict.openai_base_url + "/chat/completions", chat(big))
        resp_status, resp_error = post(strict.openai_base_url + "/responses", responses(big))
        assert strict.call_count == 0
    assert chat_status == resp_status == 400
    assert chat_error == resp_error
    error = chat_error["error"]
    assert error["code"] == 400 and error["type"] == "exceed_context_size_error"
    assert error["n_prompt_tokens"] == 100 and error["n_ctx"] == 64
    assert "exceeds the available context size" in error["message"] and "try increasing it" in error["message"]


def test_a_prompt_that_fills_the_window_exactly_leaves_no_room_to_answer() -> None:
    with FakeLLMServer(strict=True, n_ctx=25) as strict:
        assert post(strict.openai_base_url + "/chat/completions", chat("x" * 100))[0] == 400  # 25 tokens
        assert post(strict.openai_base_url + "/chat/completions", chat("x" * 96))[0] == 200  # 24 tokens


def test_a_reply_stops_where_the_window_ends() -> None:
    with FakeLLMServer(lambda request: LONG_REPLY, strict=True, n_ctx=50) as strict:  # a reply of 40 words
        url = strict.openai_base_url + "/chat/completions"
        status, body = post(url, chat("x" * 80, max_tokens=100))  # 20 prompt tokens: room for 30
        assert status == 200 and body["choices"][0]["finish_reason"] == "length"
        assert body["usage"]["prompt_tokens"] == 20 and body["usage"]["completion_tokens"] == 30
        _, smaller = post(url, chat("x" * 80, max_tokens=4))  # the limit asked, when it is the smaller
        assert smaller["usage"]["completion_tokens"] == 4
        _, unasked = post(url, chat("x" * 80))
        assert unasked["choices"][0]["finish_reason"] == "length" and unasked["usage"]["completion_tokens"] == 30
        _, in_window = post(url, chat("x" * 4, max_tokens=100))  # 1 prompt token: room for 49
        assert in_window["choices"][0]["finish_reason"] == "stop"


def test_the_lenient_server_has_no_window_unless_given_one(server: FakeLLMServer) -> None:
    assert server.n_ctx is None
    assert post(server.openai_base_url + "/chat/completions", chat("x" * 100_000))[0] == 200
    assert FakeLLMServer(strict=True).n_ctx == DEFAULT_STRICT_N_CTX
    with pytest.raises(ValueError, match="at least 1"):
        FakeLLMServer(n_ctx=0)


# 5. /props and /v1/models


def test_props_and_models_describe_the_loaded_gguf() -> None:
    with FakeLLMServer(strict=True, n_ctx=2048, slots=4) as strict:
        props_status, props = get(strict.url + "/props")
        models_status, models = get(strict.openai_base_url + "/models")
    assert props_status == models_status == 200
    assert props["default_generation_settings"]["n_ctx"] == 2048
    assert isinstance(props["default_generation_settings"]["params"], dict)
    assert props["total_slots"] == 4 and props["model_path"] == MODEL_PATH and props["build_info"] == "fake"
    assert models["object"] == "list" and len(models["data"]) == 1
    model = models["data"][0]
    assert model["id"] == MODEL_PATH and model["object"] == "model" and model["owned_by"] == "llamacpp"
    assert isinstance(model["created"], int)
    assert {k: model["meta"][k] for k in ("n_ctx_train", "n_vocab", "n_params", "size")} == {
        "n_ctx_train": 32768,
        "n_vocab": 151936,
        "n_params": 494032768,
        "size": 491400032,
    }
    assert MODEL_PATH.endswith(".gguf") and not MODEL_PATH.startswith("/")


def test_the_lenient_server_keeps_its_models_and_has_no_props(server: FakeLLMServer) -> None:
    assert get(server.openai_base_url + "/models")[1]["data"] == [
        {"id": "scripted-1", "object": "model", "created": 0, "owned_by": "dialectic"}
    ]
    assert call(server.url + "/props")[0] == 404


# 6. The model is the GGUF path; chat replies carry timings


def test_every_reply_names_the_gguf_and_chat_replies_carry_timings(strict: FakeLLMServer) -> None:
    _, answer = post(strict.openai_base_url + "/chat/completions", chat())
    _, response = post(strict.openai_base_url + "/responses", responses("hello"))
    _, message = post(strict.url + "/v1/messages", {**chat(), "max_tokens": 50})
    assert answer["model"] == response["model"] == message["model"] == MODEL_PATH
    timings = answer["timings"]
    assert timings["prompt_n"] == answer["usage"]["prompt_tokens"] == 2  # "hello": 5 characters
    assert timings["predicted_n"] == answer["usage"]["completion_tokens"]
    assert timings["prompt_ms"] > 0 and timings["predicted_ms"] > 0
    chunks = stream_chunks(strict.openai_base_url + "/chat/completions", chat())
    assert {c["model"] for c in chunks} == {MODEL_PATH}
    assert "timings" in chunks[-1] and not any("timings" in c for c in chunks[:-1])
    with_usage = stream_chunks(
        strict.openai_base_url + "/chat/completions", chat(stream_options={"include_usage": True})
    )
    assert with_usage[-1]["choices"] == [] and "usage" in with_usage[-1] and "timings" in with_usage[-1]


# 8. stream_usage=False


@pytest.mark.parametrize("strict_mode", [False, True], ids=["lenient", "strict"])
def test_stream_usage_off_sends_no_usage_chunk_even_when_asked(strict_mode: bool) -> None:
    asked = chat(stream_options={"include_usage": True})
    with FakeLLMServer(strict=strict_mode, stream_usage=False) as quiet, FakeLLMServer(strict=strict_mode) as usual:
        silent = stream_chunks(quiet.openai_base_url + "/chat/completions", asked)
        counted = stream_chunks(usual.openai_base_url + "/chat/completions", asked)
    assert not any("usage" in c for c in silent) and silent[-1]["choices"][0]["finish_reason"] == "stop"
    assert "usage" in counted[-1]


# 9. max_completion_tokens


@pytest.mark.parametrize("strict_mode", [False, True], ids=["lenient", "strict"])
def test_max_completion_tokens_is_max_tokens(strict_mode: bool) -> None:
    with FakeLLMServer(lambda request: LONG_REPLY, strict=strict_mode) as fake:
        status, body = post(fake.openai_base_url + "/chat/completions", chat(max_completion_tokens=3))
    assert status == 200 and body["choices"][0]["finish_reason"] == "length"
    assert body["usage"]["completion_tokens"] == 3 and fake.scripted.calls[0].max_tokens == 3


# The command line


def test_the_command_line_flags() -> None:
    server = _server(_parser().parse_args(["--strict", "--ctx-size", "512", "--parallel", "4", "--no-stream-usage"]))
    assert (server.strict, server.n_ctx, server.slots, server.stream_usage) == (True, 512, 4, False)
    plain = _server(_parser().parse_args([]))
    assert (plain.strict, plain.n_ctx, plain.slots, plain.stream_usage) == (False, None, 1, True)
    assert _server(_parser().parse_args(["--strict"])).n_ctx == DEFAULT_STRICT_N_CTX
    assert "behave as llama.cpp's llama-server:" in " ".join(_parser().format_help().split())
