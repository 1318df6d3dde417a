"""Fixtures for the provider tests: a fake LLM server on 127.0.0.1 and providers pointed at it.

Every scenario runs in its own ``asyncio.run`` (no asyncio plugin), and the provider is
built inside it so its HTTP client belongs to that event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest

from dialectic.llm.anthropic_provider import AnthropicProvider
from dialectic.llm.openai_provider import OpenAIProvider
from dialectic.testing.fake_server import FakeLLMServer

T = TypeVar("T")
Runner = Callable[..., Any]


@pytest.fixture
def official_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake server on 127.0.0.1 counts as OpenAI's own endpoint (where ``api: auto`` means Responses)."""
    from dialectic.llm import openai_provider

    monkeypatch.setattr(openai_provider, "OPENAI_HOSTS", (*openai_provider.OPENAI_HOSTS, "127.0.0.1"))


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as running:
        yield running


@pytest.fixture
def chat_only_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(responses_api=False) as running:
        yield running


def _runner(make: Callable[..., Any]) -> Runner:
    def run(scenario: Callable[[Any], Awaitable[T]], **options: Any) -> T:
        async def main() -> T:
            provider = make(**options)
            try:
                return await scenario(provider)
            finally:
                await provider.aclose()

        return asyncio.run(main())

    return run


@pytest.fixture
def run_openai(server: FakeLLMServer) -> Runner:
    """``run_openai(scenario, **provider_options)``: await ``scenario(provider)`` against ``server``."""

    def make(**options: Any) -> OpenAIProvider:
        settings: dict[str, Any] = {"api_key": "test-key", "base_url": server.openai_base_url, "timeout_s": 5.0}
        return OpenAIProvider(**{**settings, **options})

    return _runner(make)


@pytest.fixture
def run_anthropic(server: FakeLLMServer) -> Runner:
    """``run_anthropic(scenario, **provider_options)``: await ``scenario(provider)`` against ``server``."""

    def make(**options: Any) -> AnthropicProvider:
        settings: dict[str, Any] = {"api_key": "test-key", "base_url": server.anthropic_base_url, "timeout_s": 5.0}
        return AnthropicProvider(**{**settings, **options})

    return _runner(make)
