"""Token log-probabilities over Chat Completions: asked for only when wanted, read back token by token."""

from __future__ import annotations

from dialectic.llm.base import CompletionRequest, Message
from dialectic.llm.openai_provider import OpenAIProvider
from dialectic.testing.fake_server import FakeLLMServer
from dialectic.testing.wire import FAKE_LOGPROB

from .conftest import Runner


def request(*, logprobs: bool) -> CompletionRequest:
    return CompletionRequest(messages=(Message("user", "What is 2+2?"),), model="m", logprobs=logprobs)


def test_logprobs_are_asked_for_and_read_back(run_openai: Runner, server: FakeLLMServer) -> None:
    async def scenario(provider: OpenAIProvider) -> None:
        completion = await provider.complete(request(logprobs=True))
        assert completion.text
        assert "".join(t.token for t in completion.logprobs) == completion.text
        assert {t.logprob for t in completion.logprobs} == {FAKE_LOGPROB}

    run_openai(scenario, api="chat")
    assert server.requests[-1].body["logprobs"] is True


def test_a_plain_request_asks_for_none(run_openai: Runner, server: FakeLLMServer) -> None:
    async def scenario(provider: OpenAIProvider) -> None:
        completion = await provider.complete(request(logprobs=False))
        assert completion.logprobs == ()

    run_openai(scenario, api="chat")
    assert "logprobs" not in server.requests[-1].body
