"""Counting every provider call an arm makes, and the tokens it uses.

Counting at the provider (not from completions) catches everything: continuations of
cut-off replies, structured-output repairs and, in the dialectic arm, the engine's own
calls (critiques, summaries, the judge). Each (arm, item) gets its own :class:`Meter`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from dialectic.config import AgentConfig
from dialectic.llm.base import Completion, CompletionRequest, Delta, LLMProvider
from dialectic.llm.registry import ProviderPool


@dataclass
class Meter:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, completion: Completion) -> None:
        self.calls += 1
        self.input_tokens += completion.usage.input_tokens
        self.output_tokens += completion.usage.output_tokens


class MeteredProvider:
    """A provider that reports each completed call to a :class:`Meter`."""

    def __init__(self, inner: LLMProvider, meter: Meter) -> None:
        self.inner = inner
        self.meter = meter
        self.name = inner.name

    async def complete(self, request: CompletionRequest) -> Completion:
        completion = await self.inner.complete(request)
        self.meter.add(completion)
        return completion

    async def stream(self, request: CompletionRequest) -> AsyncIterator[Delta]:
        self.meter.calls += 1
        async for delta in self.inner.stream(request):
            if delta.usage is not None:
                self.meter.input_tokens += delta.usage.input_tokens
                self.meter.output_tokens += delta.usage.output_tokens
            yield delta

    async def aclose(self) -> None:
        """The shared provider belongs to the run's pool, which closes it."""


class MeteredPool(ProviderPool):
    """A view of a shared pool that meters the providers it hands out (for the engine)."""

    def __init__(self, base: ProviderPool, meter: Meter) -> None:
        super().__init__()
        self._base = base
        self._meter = meter

    def key_for(self, agent: AgentConfig) -> str:
        return self._base.key_for(agent)

    def get(self, agent: AgentConfig) -> LLMProvider:
        return MeteredProvider(self._base.get(agent), self._meter)

    def check(self, agents: list[AgentConfig]) -> None:
        self._base.check(agents)

    async def aclose(self) -> None:
        """The base pool owns the providers."""
