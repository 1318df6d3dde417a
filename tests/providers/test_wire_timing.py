"""Latency is the wire's: the HTTP client's hooks mark the request leaving and the reply arriving."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dialectic.llm import wire_timing
from dialectic.llm.base import CompletionRequest, Message
from dialectic.llm.openai_provider import OpenAIProvider
from dialectic.llm.wire_timing import WireTiming
from dialectic.testing.fake_server import FakeLLMServer


def test_latency_spans_sent_to_arrived_not_the_callers_own_work() -> None:
    timing = WireTiming(started=10.0, sent=10.25, arrived=10.75)
    assert timing.latency_ms() == 500


def test_without_hooks_the_callers_span_is_used() -> None:
    timing = WireTiming(started=0.0)
    assert timing.latency_ms() > 0  # from the start to now


def test_the_wire_client_fires_the_hooks_inside_each_measured_call(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[WireTiming | None] = []

    async def spy(message: Any) -> None:
        seen.append(wire_timing._CURRENT.get())

    monkeypatch.setitem(wire_timing.EVENT_HOOKS, "response", [*wire_timing.EVENT_HOOKS["response"], spy])

    async def call(url: str) -> int:
        provider = OpenAIProvider(api_key="k", base_url=url)
        try:
            completion = await provider.complete(CompletionRequest(messages=(Message("user", "hi"),), model="m"))
            return completion.latency_ms
        finally:
            await provider.aclose()

    with FakeLLMServer() as server:
        asyncio.run(call(server.openai_base_url))
    assert len(seen) == 1
    timing = seen[0]
    assert timing is not None and timing.sent is not None and timing.arrived is not None
    assert timing.started <= timing.sent <= timing.arrived
