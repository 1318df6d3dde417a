"""What each request carries for the providers' prompt caches, read from the fake server's recorded bodies."""

from __future__ import annotations

from typing import Any

import pytest

from dialectic.core.config import AgentConfig
from dialectic.llm.anthropic_provider import AnthropicProvider
from dialectic.llm.base import CompletionRequest, Message
from dialectic.llm.client import LLMClient
from dialectic.llm.openai_provider import OpenAIProvider, slot_for
from dialectic.llm.registry import resolve_settings
from dialectic.testing.fake_server import FakeLLMServer

from .conftest import _runner


def ask(key: str = "", **changes: Any) -> CompletionRequest:
    request = CompletionRequest(
        messages=(Message("system", "You are an architect."), Message("user", "Design a cache.")),
        model="m",
        max_tokens=100,
        prompt_cache_key=key,
    )
    return request.with_changes(**changes)


def posted(server: FakeLLMServer) -> list[dict[str, Any]]:
    return [r.body for r in server.requests if r.body]


@pytest.mark.usefixtures("official_endpoint")
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_openai_requests_carry_the_participants_prompt_cache_key(
    api: str, server: FakeLLMServer, run_openai: Any
) -> None:
    async def scenario(provider: OpenAIProvider) -> None:
        await provider.complete(ask("dialectic-run-agent-a"))
        await provider.complete(ask())  # no key: nothing asked
        if api == "chat":
            async for _ in provider.stream(ask("dialectic-run-agent-a")):
                pass

    run_openai(scenario, api=api)
    bodies = posted(server)
    assert bodies[0]["prompt_cache_key"] == "dialectic-run-agent-a"
    assert "prompt_cache_key" not in bodies[1]
    assert all("cache_prompt" not in b and "id_slot" not in b for b in bodies)  # llama-server's fields: not here
    if api == "chat":
        assert bodies[2]["prompt_cache_key"] == "dialectic-run-agent-a" and bodies[2]["stream"] is True


def test_llama_server_requests_keep_each_participant_in_its_own_slot() -> None:
    with FakeLLMServer(strict=True, n_ctx=4096, slots=2) as server:

        async def scenario(provider: OpenAIProvider) -> None:
            for key in ("a", "b", "a", "c", "b"):
                await provider.complete(ask(key))
            async for _ in provider.stream(ask("c")):
                pass
            await provider.complete(ask())  # not a participant's call: nothing asked

        _runner(lambda: OpenAIProvider(api_key="k", base_url=server.openai_base_url, api="chat"))(scenario)
        bodies = posted(server)
        props = [r.path for r in server.requests if r.path.endswith("/props")]
    # c takes the slot of a (the oldest key), b keeps its own, and c keeps the one it took
    assert [b.get("id_slot") for b in bodies] == [0, 1, 0, 0, 1, 0, None]
    assert [b.get("cache_prompt") for b in bodies] == [True] * 6 + [None]
    assert len(props) == 1  # /props asked once for the endpoint


def test_with_the_cache_off_llama_server_is_told_not_to_reuse_and_gets_no_slot() -> None:
    with FakeLLMServer(strict=True, n_ctx=4096, slots=4) as server:

        async def scenario(provider: OpenAIProvider) -> None:
            await provider.complete(ask("a"))

        _runner(lambda: OpenAIProvider(api_key="k", base_url=server.openai_base_url, prompt_cache=False))(scenario)
        (body,) = posted(server)
    assert body["cache_prompt"] is False and "id_slot" not in body and "prompt_cache_key" not in body


def test_a_compatible_server_without_props_gets_no_cache_fields() -> None:
    with FakeLLMServer() as server:  # not strict: no /props, as vLLM or Ollama

        async def scenario(provider: OpenAIProvider) -> None:
            await provider.complete(ask("a"))

        _runner(lambda: OpenAIProvider(api_key="k", base_url=server.openai_base_url))(scenario)
        (body,) = posted(server)
        assert any(r.path.endswith("/props") for r in server.requests)  # asked, and found nothing
    assert not {"cache_prompt", "id_slot", "prompt_cache_key"} & set(body)


def test_slots_go_to_new_keys_lowest_free_first_then_the_oldest_key_gives_its_own() -> None:
    slots: dict[str, int] = {}
    assert [slot_for(slots, key, 3) for key in "abcab"] == [0, 1, 2, 0, 1]
    assert slot_for(slots, "d", 3) == 0 and "a" not in slots
    assert slot_for({}, "x", 1) == 0


def test_anthropic_marks_the_stable_prefix_and_the_last_turn(server: FakeLLMServer, run_anthropic: Any) -> None:
    history = (
        Message("system", "You are an architect."),
        Message("user", "Design a cache."),
        Message("assistant", "Use an LRU."),
        Message("user", "Refine it."),
    )

    async def scenario(provider: AnthropicProvider) -> None:
        await provider.complete(ask("k", messages=history))
        async for _ in provider.stream(ask("k", messages=history)):
            pass
        await provider.complete(ask(messages=history))  # no key: a one-off call pays no cache write

    run_anthropic(scenario)
    marked, streamed, plain = posted(server)
    for body in (marked, streamed):
        assert body["system"] == [
            {"type": "text", "text": "You are an architect.", "cache_control": {"type": "ephemeral"}}
        ]
        assert body["messages"][-1]["content"] == [
            {"type": "text", "text": "Refine it.", "cache_control": {"type": "ephemeral"}}
        ]
        assert body["messages"][0]["content"] == "Design a cache."  # earlier turns as they were
    assert plain["system"] == "You are an architect." and "cache_control" not in str(plain)


def test_anthropic_with_the_cache_off_marks_nothing(server: FakeLLMServer, run_anthropic: Any) -> None:
    run_anthropic(lambda provider: provider.complete(ask("k")), prompt_cache=False)
    (body,) = posted(server)
    assert "cache_control" not in str(body)


def test_the_client_gives_its_key_to_each_request_and_the_call_cache_key_ignores_it() -> None:
    seen: list[CompletionRequest] = []

    class Recorder:
        name = "recorder"

        async def complete(self, request: CompletionRequest) -> Any:
            from dialectic.llm.base import Completion

            seen.append(request)
            return Completion(text="ok", model=request.model)

        def stream(self, request: CompletionRequest) -> Any:
            raise NotImplementedError

        async def aclose(self) -> None:
            return None

    import asyncio

    client = LLMClient(Recorder(), prompt_cache_key="dialectic-run-agent-a")
    asyncio.run(client.complete(ask()))
    asyncio.run(client.complete(ask("own-key")))
    assert [r.prompt_cache_key for r in seen] == ["dialectic-run-agent-a", "own-key"]


def test_dialectic_prompt_cache_off_reaches_the_settings() -> None:
    agent = AgentConfig.model_validate(
        {"id": "a", "name": "A", "role": "architect", "provider": "openai", "model": "m"}
    )
    assert resolve_settings(agent, {"OPENAI_API_KEY": "k"}).prompt_cache is True
    assert resolve_settings(agent, {"OPENAI_API_KEY": "k", "DIALECTIC_PROMPT_CACHE": "off"}).prompt_cache is False
