"""The debate's budget (``debate.budget``), checked before every provider request.

A request is sent only if its worst case fits: what the debate has spent so far, plus what
the requests already in flight could still spend, plus this request's worst case — its
prompt's estimated input tokens and its ``maxTokens`` of output. A request that would fit but
for the requests in flight waits for them to finish (they usually spend less than their
worst case); one that cannot fit is not sent and the debate stops with
:class:`~dialectic.errors.BudgetExceeded`. When a request's worst case cannot be estimated
(no ``maxTokens``), it is sent while the running total is still under the budget.

The spend starts from the debate's saved ledger, so a resumed debate counts what it spent before.
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass

from dialectic.config import AgentConfig, BudgetSettings, SystemConfig
from dialectic.errors import BudgetExceeded, ConfigError
from dialectic.ledger import LedgerTotals, usd
from dialectic.llm.base import CompletionRequest
from dialectic.pricing import PriceTable

MESSAGE_OVERHEAD_TOKENS = 4
"""Tokens a chat format adds around each message (role markers and separators)."""


def estimate_input_tokens(request: CompletionRequest) -> int:
    """A generous estimate of a request's input tokens: a token per word or per 4 characters, whichever is more.

    Real tokenizers give about a token per 4 characters of English and at least one per word;
    the scripted model counts words. Code and other languages can take more, so this is an
    estimate, not a bound.
    """
    texts = [m.content for m in request.messages]
    if request.json_schema is not None:
        texts.append(json.dumps(request.json_schema.schema))
    total = 0
    for text in texts:
        total += max(math.ceil(len(text) / 4), len(text.split())) + MESSAGE_OVERHEAD_TOKENS
    return total


@dataclass(frozen=True)
class Ticket:
    """What one admitted request holds back until it finishes."""

    tokens: int = 0
    cost: float = 0.0


NO_TICKET = Ticket()


class BudgetGuard:
    """Admits provider requests while the debate's budget allows them; keeps the running total."""

    def __init__(self, settings: BudgetSettings, prices: PriceTable, spent: LedgerTotals) -> None:
        self.settings = settings
        self.prices = prices
        self.spent_tokens = spent.total_tokens
        self.spent_cost = spent.cost_usd
        self._reserved = Ticket()
        self._in_flight = 0
        self._changed: asyncio.Event | None = None

    @property
    def limited(self) -> bool:
        return self.settings.limited

    async def admit(self, label: str, provider: str, model: str, request: CompletionRequest) -> Ticket:
        """Hold back this request's worst case, waiting for requests in flight if that lets it fit.

        Raises :class:`BudgetExceeded` (with ``label`` saying which call) when it cannot fit.
        """
        if not self.limited:
            return NO_TICKET
        worst = self._worst(provider, model, request)
        while True:
            refusal = self._refusal(label, worst)
            if refusal is None:
                ticket = worst or NO_TICKET
                self._reserved = Ticket(self._reserved.tokens + ticket.tokens, self._reserved.cost + ticket.cost)
                self._in_flight += 1
                return ticket
            message, fits_when_idle = refusal
            if not fits_when_idle or self._in_flight == 0:
                raise BudgetExceeded(message)
            if self._changed is None:
                self._changed = asyncio.Event()
            await self._changed.wait()

    def settle(self, ticket: Ticket, tokens: int, cost: float | None) -> None:
        """A request answered: what it really spent replaces what it held back."""
        self.spent_tokens += tokens
        self.spent_cost += cost or 0.0
        self.release(ticket)

    def release(self, ticket: Ticket) -> None:
        """A request ended (answered or not): give back what it held and wake the requests waiting."""
        if not self.limited:
            return
        self._reserved = Ticket(self._reserved.tokens - ticket.tokens, self._reserved.cost - ticket.cost)
        self._in_flight = max(0, self._in_flight - 1)
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    def _worst(self, provider: str, model: str, request: CompletionRequest) -> Ticket | None:
        if request.max_tokens is None:
            return None
        estimate = estimate_input_tokens(request)
        cost = self.prices.cost(provider, model, input_tokens=estimate, output_tokens=request.max_tokens)
        return Ticket(estimate + request.max_tokens, cost if cost is not None else math.inf)

    def _refusal(self, label: str, worst: Ticket | None) -> tuple[str, bool] | None:
        """Why the request may not be sent now, and whether it would fit once nothing else is in flight."""
        limit_tokens, limit_cost = self.settings.max_tokens, self.settings.max_cost_usd
        hint = "resume it with a larger budget (--budget-usd / --budget-tokens)"
        if limit_tokens is not None:
            used = f"{self.spent_tokens:,} of the debate's {limit_tokens:,}-token budget are used"
            if worst is None:
                if self.spent_tokens >= limit_tokens:
                    return f"budget reached: {used}, so {label} was not made; {hint}", False
            elif self.spent_tokens + worst.tokens > limit_tokens:
                return f"budget reached: {label} could use up to {worst.tokens:,} tokens and {used}; {hint}", False
            elif self.spent_tokens + self._reserved.tokens + worst.tokens > limit_tokens:
                return f"budget reached: {label} could use up to {worst.tokens:,} tokens and {used}; {hint}", True
        if limit_cost is not None:
            spent = f"{usd(self.spent_cost)} of the debate's {usd(limit_cost)} budget is spent"
            if worst is None or math.isinf(worst.cost):
                if self.spent_cost >= limit_cost:
                    return f"budget reached: {spent}, so {label} was not made; {hint}", False
            elif self.spent_cost + worst.cost > limit_cost:
                return f"budget reached: {label} could cost up to {usd(worst.cost)} and {spent}; {hint}", False
            elif self.spent_cost + self._reserved.cost + worst.cost > limit_cost:
                return f"budget reached: {label} could cost up to {usd(worst.cost)} and {spent}; {hint}", True
        return None


def check_budget_prices(config: SystemConfig, prices: PriceTable) -> None:
    """A cost budget needs every participant's price: ``ConfigError`` naming those without one."""
    if config.debate.budget.max_cost_usd is None:
        return
    participants: list[AgentConfig] = [*config.participants(), config.judge]
    unpriced = sorted({f"{p.provider}/{p.model}" for p in participants if prices.price(p.provider, p.model) is None})
    if unpriced:
        raise ConfigError(
            f"debate.budget.maxCostUsd needs a price for every model, and {', '.join(unpriced)} has none: "
            'add it to the config\'s "pricing" section ({"provider/model": {"input": .., "output": ..}}, '
            "US dollars per million tokens) or budget tokens instead (debate.budget.maxTokens)"
        )


def budget_guard(config: SystemConfig, spent: LedgerTotals) -> BudgetGuard:
    prices = PriceTable.of(config.pricing)
    return BudgetGuard(config.debate.budget, prices, spent)


def with_limits(config: SystemConfig, max_cost_usd: float | None, max_tokens: int | None) -> SystemConfig:
    """``config`` with these budget limits (a ``None`` keeps the configured one)."""
    changes = {
        key: value for key, value in (("max_cost_usd", max_cost_usd), ("max_tokens", max_tokens)) if value is not None
    }
    if not changes:
        return config
    budget = config.debate.budget.model_copy(update=changes)
    return config.model_copy(update={"debate": config.debate.model_copy(update={"budget": budget})})
