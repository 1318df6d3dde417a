"""The debate's budget (``debate.budget``), checked before every provider request.

A request is sent only if its worst case fits: what the debate has spent so far, plus what
the requests already in flight could still spend, plus this request's worst case — its
prompt's estimated input tokens and its ``maxTokens`` of output. A request that would fit but
for the requests in flight waits for them to finish (they usually spend less than their
worst case); one that cannot fit is not sent and the debate stops with
:class:`~dialectic.core.errors.BudgetExceeded`.

The worst case is real because every request carries a reply limit while a budget is in
effect: a participant without ``maxTokens`` is given :data:`DEFAULT_REPLY_TOKENS`
(:func:`with_reply_limits`, applied when the debate's participants are built), so the provider
cannot reply past what was held back for it.

The spend starts from the debate's saved ledger, so a resumed debate counts what it spent before.
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass

from dialectic.core.config import AgentConfig, BudgetSettings, SystemConfig
from dialectic.core.errors import BudgetExceeded, ConfigError
from dialectic.core.ledger import LedgerTotals, usd
from dialectic.core.pricing import PriceTable
from dialectic.llm.base import CompletionRequest

MESSAGE_OVERHEAD_TOKENS = 4
"""Tokens a chat format adds around each message (role markers and separators)."""

DEFAULT_REPLY_TOKENS = 2048
"""The reply limit (``maxTokens``) of a participant that sets none, while the debate has a budget.

Without a limit a reply's length, and so a request's worst case, is unbounded, and a budget
could only be checked against what was already spent. 2,048 tokens is about five times the
longest contribution the prompts ask for (300 words, some 400 tokens) and leaves room for the
judge's JSON synthesis, so replies are not cut by it (a reply that is cut is continued or
retried with more room as usual, each request held against the budget), while a small budget
still fits a call: 2,048 output tokens of ``gpt-4o-mini`` are $0.0012. Set ``maxTokens`` on a
participant to choose its own limit (e.g. more for a reasoning model, whose hidden reasoning
counts as output)."""


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
                held = Ticket(worst.tokens, 0.0 if math.isinf(worst.cost) else worst.cost)
                self._reserved = Ticket(self._reserved.tokens + held.tokens, self._reserved.cost + held.cost)
                self._in_flight += 1
                return held
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

    def _worst(self, provider: str, model: str, request: CompletionRequest) -> Ticket:
        """The most the request can spend: its prompt's estimate and its reply limit.

        A request without ``maxTokens`` (none that the engine sends under a budget: see
        :func:`with_reply_limits`) is held to :data:`DEFAULT_REPLY_TOKENS` of reply.
        """
        estimate = estimate_input_tokens(request)
        reply = request.max_tokens if request.max_tokens is not None else DEFAULT_REPLY_TOKENS
        cost = self.prices.cost(provider, model, input_tokens=estimate, output_tokens=reply)
        return Ticket(estimate + reply, cost if cost is not None else math.inf)

    def _refusal(self, label: str, worst: Ticket) -> tuple[str, bool] | None:
        """Why the request may not be sent now, and whether it would fit once nothing else is in flight."""
        limit_tokens, limit_cost = self.settings.max_tokens, self.settings.max_cost_usd
        hint = "resume it with a larger budget (--budget-usd / --budget-tokens)"
        if limit_tokens is not None:
            used = f"{self.spent_tokens:,} of the debate's {limit_tokens:,}-token budget are used"
            if self.spent_tokens + worst.tokens > limit_tokens:
                return f"budget reached: {label} could use up to {worst.tokens:,} tokens and {used}; {hint}", False
            if self.spent_tokens + self._reserved.tokens + worst.tokens > limit_tokens:
                return f"budget reached: {label} could use up to {worst.tokens:,} tokens and {used}; {hint}", True
        if limit_cost is not None:
            spent = f"{usd(self.spent_cost)} of the debate's {usd(limit_cost)} budget is spent"
            if math.isinf(worst.cost):
                # An unpriced model (refused up front by check_budget_prices): its cost cannot be
                # held back, so it is sent only while the total is under the budget.
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
    participants: list[AgentConfig] = [*config.eligible(), config.judge, *config.fallbacks()]
    unpriced = sorted({f"{p.provider}/{p.model}" for p in participants if prices.price(p.provider, p.model) is None})
    if unpriced:
        raise ConfigError(
            f"debate.budget.maxCostUsd needs a price for every model, and {', '.join(unpriced)} has none: "
            'add it to the config\'s "pricing" section ({"provider/model": {"input": .., "output": ..}}, '
            "US dollars per million tokens) or budget tokens instead (debate.budget.maxTokens)"
        )


def reply_limit(agent: AgentConfig) -> int:
    """The reply limit a participant without ``maxTokens`` is sent with under a budget.

    :data:`DEFAULT_REPLY_TOKENS`, or half its ``contextWindow`` when that is smaller: the reply
    shares the window with the prompt.
    """
    if agent.context_window is not None:
        return min(DEFAULT_REPLY_TOKENS, agent.context_window // 2)
    return DEFAULT_REPLY_TOKENS


def with_reply_limits(config: SystemConfig) -> SystemConfig:
    """``config`` with a reply limit (:func:`reply_limit`) for each participant without ``maxTokens``,
    when it has a budget; unchanged without one.

    Applied where the debate's participants are built (:func:`~dialectic.engine.roster.build_roster`),
    not to the configuration saved with the debate: every request they send then carries the limit,
    so its worst case, which :class:`BudgetGuard` holds back before sending it, bounds what it spends.
    """
    if not config.debate.budget.limited:
        return config

    def limited(agent: AgentConfig) -> AgentConfig:
        if agent.max_tokens is not None:
            return agent
        return agent.model_copy(update={"max_tokens": reply_limit(agent)})

    return config.model_copy(update={"agents": [limited(a) for a in config.agents], "judge": limited(config.judge)})


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
