"""Counting every provider call an arm makes, and the tokens it uses.

The sampling and debate baselines count at the provider (not from completions), which
catches continuations of cut-off replies and structured-output repairs. The dialectic arm
reads the debate's usage ledger (:mod:`dialectic.core.ledger`), which counts the engine's every
request the same way — the figures ``show``, ``export`` and the report give for that debate.
Each (arm, item) gets its own :class:`Meter`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass

from dialectic.core.domain import LedgerEntry
from dialectic.core.ledger import ledger_totals
from dialectic.llm.base import Completion, CompletionRequest, Delta, LLMProvider


@dataclass
class Meter:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, completion: Completion) -> None:
        self.calls += 1
        self.input_tokens += completion.usage.input_tokens
        self.output_tokens += completion.usage.output_tokens

    def add_ledger(self, entries: Iterable[LedgerEntry]) -> None:
        """A debate's calls, as its ledger counted them (provider requests that answered, and their tokens)."""
        totals = ledger_totals(entries)
        self.calls += totals.requests
        self.input_tokens += totals.input_tokens
        self.output_tokens += totals.output_tokens


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
