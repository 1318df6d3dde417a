"""One call of the debate, watched from its start to its ledger entry.

Every piece of work the engine asks of a model passes through :meth:`RunState.announce
<dialectic.engine.run_state.RunState.announce>`, which opens a :class:`CallScope` around it.
The scope observes each provider request the call makes (:mod:`dialectic.llm.observe`):
it asks the budget before a request is sent, counts tokens, cost and attempts, and tells the
call's watchers (the tracer) as requests start and end. When the call ends it becomes one
:class:`~dialectic.core.domain.LedgerEntry`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from dialectic.core.config import HUMAN_PROVIDER
from dialectic.core.domain import CallStatus, LedgerEntry, ToolCallRecord, Usage
from dialectic.core.pricing import PriceTable
from dialectic.engine.budget import NO_TICKET, BudgetGuard, Ticket
from dialectic.llm.base import Completion, CompletionRequest

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CallInfo:
    """What a call is for and who makes it."""

    debate_id: str
    kind: str
    activity: str
    agent_id: str
    agent_name: str
    provider: str
    model: str
    round_number: int | None = None
    target_id: str | None = None

    def label(self) -> str:
        where = f", round {self.round_number}" if self.round_number is not None else ""
        return f"the next call ({self.agent_name} {self.activity}{where})"


class CallWatch(Protocol):
    """Follows one call (a tracer's span for it)."""

    def request_started(self, provider: str, request: CompletionRequest) -> None: ...

    def request_finished(
        self, request: CompletionRequest, completion: Completion | None, error: BaseException | None
    ) -> None: ...

    def finished(self, entry: LedgerEntry | None, error: BaseException | None) -> None:
        """The call ended; ``entry`` is ``None`` when it sent no request at all."""
        ...


class ToolCallWatch(Protocol):
    """A :class:`CallWatch` that also follows the tool calls made inside the call (optional: a watch
    without ``tool_called`` is not told of them)."""

    def tool_called(self, record: ToolCallRecord, started: float, ended: float) -> None: ...


class CallWatcher(Protocol):
    """Told of every call a debate makes (e.g. :class:`dialectic.tracing.otel.DebateTracer`)."""

    def call_started(self, info: CallInfo) -> CallWatch: ...


class CallScope:
    """The :class:`~dialectic.llm.observe.RequestObserver` of one call: budget, figures, watchers."""

    def __init__(
        self,
        info: CallInfo,
        *,
        guard: BudgetGuard,
        prices: PriceTable,
        watches: list[CallWatch],
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.info = info
        self._guard = guard
        self._prices = prices
        self._watches = watches
        self._clock = clock or asyncio.get_running_loop().time
        self._started = self._clock()
        self._tickets: dict[int, Ticket] = {}
        self.usage = Usage()
        self.requests = 0
        self.attempts = 0
        self.cached = 0
        """Requests the call cache answered: not sent, not admitted by the budget, no tokens, no cost."""
        self.cost: float | None = 0.0

    async def before(self, provider: str, request: CompletionRequest) -> None:
        if self.info.provider == HUMAN_PROVIDER:  # a person's turn spends nothing: the budget is not asked
            ticket = NO_TICKET
        else:
            ticket = await self._guard.admit(self.info.label(), self.info.provider, self.info.model, request)
        self._tickets[id(request)] = ticket
        self.attempts += 1
        self._tell(lambda watch: watch.request_started(provider, request))

    def succeeded(self, request: CompletionRequest, completion: Completion) -> None:
        # A human seat's reply written by its fallback model was counted in the fallback's own call.
        usage = Usage() if self.info.provider == HUMAN_PROVIDER else completion.usage
        cost = self._prices.cost(
            self.info.provider,
            self.info.model,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cached=usage.cached_input_tokens,
            cache_writes=usage.cache_write_tokens,
        )
        self._guard.settle(self._tickets.pop(id(request), NO_TICKET), usage.input_tokens + usage.output_tokens, cost)
        self.usage = self.usage + Usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            total_tokens=usage.input_tokens + usage.output_tokens,
            cached_input_tokens=usage.cached_input_tokens,
            cache_write_tokens=usage.cache_write_tokens,
        )
        self.requests += 1
        self.cost = None if cost is None or self.cost is None else self.cost + cost
        self._tell(lambda watch: watch.request_finished(request, completion, None))

    def tool_called(self, record: ToolCallRecord, started: float, ended: float) -> None:
        """A tool ran inside this call (``time.time()`` seconds): told to the watches that follow tools."""
        for watch in self._watches:
            tool_called = getattr(watch, "tool_called", None)
            if tool_called is None:
                continue
            try:
                tool_called(record, started, ended)
            except Exception:
                log.exception("call watcher failed on a tool call of %s", self.info.label())

    def failed(self, request: CompletionRequest, error: BaseException) -> None:
        self._guard.release(self._tickets.pop(id(request), NO_TICKET))
        self._tell(lambda watch: watch.request_finished(request, None, error))

    def served(self, request: CompletionRequest, completion: Completion) -> None:
        """The call cache answered ``request``: counted as cached, with nothing spent."""
        self.cached += 1

    def entry(self, status: CallStatus, error: str | None) -> LedgerEntry | None:
        """The call's ledger entry; ``None`` when it neither sent a request nor was answered from the call cache
        (refused by the budget, cancelled first)."""
        if self.attempts == 0 and self.cached == 0:
            return None
        info = self.info
        return LedgerEntry(
            kind=info.kind,
            activity=info.activity,
            agent_id=info.agent_id,
            round_number=info.round_number,
            target_agent_id=info.target_id,
            provider=info.provider,
            model=info.model,
            input_tokens=self.usage.input_tokens,
            output_tokens=self.usage.output_tokens,
            cached_input_tokens=self.usage.cached_input_tokens,
            requests=self.requests,
            attempts=self.attempts,
            cached=self.cached,
            latency_ms=max(0, round((self._clock() - self._started) * 1000)),
            cost_usd=None if self.cost is None else round(self.cost, 9),
            status=status,
            error=error,
        )

    def finish(self, entry: LedgerEntry | None, error: BaseException | None) -> None:
        self._tell(lambda watch: watch.finished(entry, error))

    def _tell(self, what: Callable[[CallWatch], None]) -> None:
        """Tell every watcher; one that fails is logged and never stops the call (a tracer bug must not lose it)."""
        for watch in self._watches:
            try:
                what(watch)
            except Exception:
                log.exception("call watcher failed on %s", self.info.label())
