"""The OpenAI-compatible API in process: what a request is turned into, what is refused, and how."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from dialectic.core.config import SystemConfig
from dialectic.core.errors import ProviderUnavailable
from dialectic.core.ledger import debate_totals
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import ScriptedProvider, ScriptedReply, default_reply
from dialectic.testing.harness import make_config
from dialectic.web.state import ServeSettings
from tests.web.conftest import Api, GatedProvider

ASK = {"model": "dialectic/critique-refine", "messages": [{"role": "user", "content": "Design a rate limiter"}]}


def openai_error(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


def data_of(text: str) -> tuple[list[str], list[Any]]:
    """An SSE body's comment lines and its data items (``[DONE]`` as the string)."""
    comments, data = [], []
    for block in text.split("\n\n"):
        if block.startswith(": "):
            comments.append(block[2:])
        elif block.startswith("data: "):
            item = block[6:]
            data.append(item if item == "[DONE]" else json.loads(item))
    return comments, data


def test_a_completion_is_the_debates_outcome(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        response = await api.client.post("/v1/chat/completions", json=ASK)
        assert response.status_code == 200, response.text
        body = response.json()
        state = api.ctx.store.load(body["id"])
        assert response.headers["x-dialectic-debate-id"] == state.id
        assert state.status == "completed" and state.problem == "Design a rate limiter"
        assert state.final_solution is not None
        assert body["choices"][0]["message"] == {
            "role": "assistant",
            "content": state.final_solution.description,
            "refusal": None,
        }
        totals = debate_totals(state)  # the ledger every view reads
        assert totals.calls == len(api.provider.calls) > 0
        assert body["usage"]["prompt_tokens"] == totals.input_tokens > 0
        assert body["usage"]["completion_tokens"] == totals.output_tokens > 0
        assert body["usage"]["total_tokens"] == totals.total_tokens

    serve(scenario)


def test_earlier_messages_are_the_problems_context(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        messages = [
            {"role": "system", "content": "We run on one small VM."},
            {"role": "user", "content": "We sell tickets."},
            {"role": "assistant", "content": [{"type": "text", "text": "Noted: tickets."}]},
            {"role": "user", "content": [{"type": "text", "text": "Design the rate limiter."}]},
        ]
        response = await api.client.post("/v1/chat/completions", json={**ASK, "messages": messages})
        problem = api.ctx.store.load(response.json()["id"]).problem
        assert problem.startswith("Design the rate limiter.\n\n## Earlier in the conversation")
        assert "**system:** We run on one small VM." in problem and "**assistant:** Noted: tickets." in problem

    serve(scenario)


def test_max_tokens_and_temperature_reach_every_participant(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        response = await api.client.post("/v1/chat/completions", json={**ASK, "max_tokens": 300, "temperature": 0.1})
        assert response.status_code == 200, response.text
        assert {c.max_tokens for c in api.provider.calls} == {300}
        assert {c.temperature for c in api.provider.calls} == {0.1}
        saved = api.ctx.store.load(response.json()["id"]).saved_config()
        assert saved is not None and saved.judge.max_tokens == 300

    serve(scenario)


def test_each_format_is_a_model(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        listed = (await api.client.get("/v1/models")).json()
        ids = [m["id"] for m in listed["data"]]
        from dialectic.core.config import FORMATS

        assert ids == [f"dialectic/{name}" for name in FORMATS]
        response = await api.client.post("/v1/chat/completions", json={**ASK, "model": "dialectic/vote"})
        saved = api.ctx.store.load(response.json()["id"]).saved_config()
        assert saved is not None and saved.debate.format == "vote"
        assert (await api.client.get("/v1/models/dialectic/vote")).json()["id"] == "dialectic/vote"
        error = openai_error(await api.client.get("/v1/models/dialectic/nothing"), 404)
        assert error["code"] == "model_not_found" and "dialectic/vote" in error["message"]

    serve(scenario)


def test_what_a_debate_cannot_answer_is_refused_before_any_work(serve: Callable[..., None]) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"n": 2}, "n"),
        ({"logprobs": True}, "logprobs"),
        ({"response_format": {"type": "json_object"}}, "response_format"),
        ({"tool_choice": "required"}, "tool_choice"),
        ({"messages": [{"role": "assistant", "content": "hi"}]}, "messages"),
        ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}, None),
        ({"messages": [{"role": "user", "content": "x" * 100_001}]}, "problem"),
        ({"messages": [{"role": "user", "content": "   "}]}, "problem"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"temperature": 3}, "temperature"),
        ({"messages": []}, "messages"),
    ]

    async def scenario(api: Api) -> None:
        for change, param in cases:
            error = openai_error(await api.client.post("/v1/chat/completions", json={**ASK, **change}), 422)
            assert error["type"] == "invalid_request_error"
            if param is not None and param != "problem":
                assert error["param"] == param, (change, error)
        broken = await api.client.post(
            "/v1/chat/completions", content=b"{not json", headers={"Content-Type": "application/json"}
        )
        assert openai_error(broken, 400)["code"] == "bad_request"
        assert api.provider.calls == [] and api.ctx.store.list() == []

    serve(scenario)


def test_the_token_is_needed_and_errors_take_openais_shape(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        denied = openai_error(await api.client.post("/v1/chat/completions", json=ASK), 401)
        assert denied["type"] == "authentication_error" and "token" in denied["message"]
        assert openai_error(await api.client.get("/v1/models"), 401)["code"] == "unauthorized"
        allowed = await api.client.get("/v1/models", headers={"Authorization": "Bearer " + "t" * 20})
        assert allowed.status_code == 200
        assert api.provider.calls == []

    serve(scenario, settings=ServeSettings(token="t" * 20))


def test_a_full_server_answers_429(serve: Callable[..., None]) -> None:
    provider = GatedProvider()

    async def scenario(api: Api) -> None:
        first = asyncio.ensure_future(api.client.post("/v1/chat/completions", json=ASK))
        await provider.until_waiting(2)
        error = openai_error(await api.client.post("/v1/chat/completions", json=ASK), 429)
        assert error["type"] == "rate_limit_error" and "--max-running" in error["message"]
        provider.gate.set()
        assert (await first).status_code == 200
        assert len(api.ctx.store.list()) == 1

    serve(scenario, settings=ServeSettings(max_running=1), provider=provider)


def test_a_stream_sends_progress_then_the_answer(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        body = {**ASK, "stream": True, "stream_options": {"include_usage": True}}
        response = await api.client.post("/v1/chat/completions", json=body)
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        comments, data = data_of(response.text)
        debate_id = response.headers["x-dialectic-debate-id"]
        state = api.ctx.store.load(debate_id)
        assert comments[0].startswith(f"debate {debate_id} is running")
        assert "round 1 of 1" in comments and "the judge is writing the answer" in comments
        assert data[-1] == "[DONE]" and all(d["id"] == debate_id for d in data[:-1])
        assert data[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
        text = "".join(d["choices"][0]["delta"].get("content", "") for d in data[:-1] if d["choices"])
        assert state.final_solution is not None and text == state.final_solution.description
        assert data[-3]["choices"][0]["finish_reason"] == "stop"
        assert data[-2]["choices"] == [] and data[-2]["usage"]["total_tokens"] > 0

    serve(scenario)


def test_a_debate_that_fails_ends_the_stream_with_an_error(serve: Callable[..., None]) -> None:
    def respond(request: CompletionRequest) -> ScriptedReply | Exception:
        if request.tag.startswith("proposal"):
            return ProviderUnavailable("scripted: 503 down", provider="scripted", status_code=503)
        return default_reply(request)

    async def scenario(api: Api) -> None:
        config_retry = {"stream": True}
        response = await api.client.post("/v1/chat/completions", json={**ASK, **config_retry})
        _, data = data_of(response.text)
        assert data[-1] == "[DONE]"
        error = data[-2]["error"]
        assert error["type"] == "server_error" and "503 down" in error["message"]
        assert response.headers["x-dialectic-debate-id"] in error["message"]
        plain = await api.client.post("/v1/chat/completions", json=ASK)
        assert openai_error(plain, 503)["message"].startswith(f"debate {plain.headers['x-dialectic-debate-id']}:")

    config = make_config(agents=2, rounds=1, retry={"maxAttempts": 1, "baseDelayMs": 0, "jitterMs": 0})
    serve(scenario, provider=ScriptedProvider(respond), config=config)


def test_the_responses_api_reads_instructions_and_input_as_the_conversation(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        body = {
            "model": "dialectic/critique-refine",
            "instructions": "We run on one small VM.",
            "input": [
                {"role": "user", "content": "We sell tickets."},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Noted."}]},
                {"role": "user", "content": [{"type": "input_text", "text": "Design the rate limiter."}]},
            ],
            "max_output_tokens": 400,
        }
        response = await api.client.post("/v1/responses", json=body)
        assert response.status_code == 200, response.text
        result = response.json()
        state = api.ctx.store.load(result["id"])
        assert state.problem.startswith("Design the rate limiter.\n\n## Earlier")
        assert "**system:** We run on one small VM." in state.problem and "**assistant:** Noted." in state.problem
        assert state.final_solution is not None
        assert result["output"][0]["content"][0]["text"] == state.final_solution.description
        assert {c.max_tokens for c in api.provider.calls} == {400}
        refused = [
            ({"previous_response_id": "x"}, "previous_response_id"),
            ({"input": [{"type": "function_call_output", "output": "x"}]}, "input[0]"),
            ({"input": []}, "input"),
            ({"text": {"format": {"type": "json_schema"}}}, "response_format"),
        ]
        for change, param in refused:
            error = openai_error(await api.client.post("/v1/responses", json={**body, **change}), 422)
            assert error["param"] == param, error

    serve(scenario)


def test_a_debate_left_waiting_for_a_person_is_a_409_naming_it(serve: Callable[..., None]) -> None:
    data = make_config(agents=2, rounds=1).model_dump(by_alias=True)
    data["agents"].append({"id": "alice", "name": "Alice", "role": "security", "provider": "human"})

    async def scenario(api: Api) -> None:
        response = await api.client.post("/v1/chat/completions", json=ASK)
        debate_id = response.headers["x-dialectic-debate-id"]
        error = openai_error(response, 409)
        assert error["code"] == "debate_not_completed"
        assert error["message"].startswith(f"debate {debate_id} stopped suspended")
        assert f"dialectic show {debate_id}" in error["message"]
        assert api.ctx.store.load(debate_id).pending_turns()

    serve(scenario, config=SystemConfig.model_validate(data))


def test_a_correction_decided_on_a_question_answers_its_winner(serve: Callable[..., None]) -> None:
    def respond(request: CompletionRequest) -> str:
        if request.tag.startswith("answer"):
            return "25 + 6 = 31, 31 + 24 = 55.\n\n\\boxed{55}"
        return "I checked every step; nothing is wrong."

    async def scenario(api: Api) -> None:
        ask = {"model": "dialectic/correction", "messages": [{"role": "user", "content": "What is 25+2*3+24?"}]}
        response = await api.client.post("/v1/chat/completions", json=ask)
        assert response.status_code == 200, response.text
        state = api.ctx.store.load(response.json()["id"])
        assert state.correction is not None and state.correction.winner == "55"
        assert response.json()["choices"][0]["message"]["content"] == "55"
        assert [c.tag.split(":")[0] for c in api.provider.calls] == ["answer"] * 2 + ["check"] * 2  # no judge

    serve(scenario, provider=ScriptedProvider(respond))
