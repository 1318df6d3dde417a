"""What a call costs: a small built-in price table, the configuration's ``pricing`` over it, and the arithmetic.

Prices are US dollars per million tokens, the providers' list prices for standard (not batch)
requests as of :data:`PRICES_AS_OF`. Providers change them; the configuration's ``pricing``
section (``{"provider/model": {"input": .., "output": .., "cachedInput": .., "cacheWrite": ..}}``) overrides an
entry or adds a model. The embedded ``local`` model and the ``scripted`` test model cost nothing
unless ``pricing`` says otherwise. A model found nowhere has no price: its cost is unknown
(``None``), never taken as 0.

A dated snapshot of a model (``gpt-4o-mini-2024-07-18``, ``claude-sonnet-4-5-20250929``) and a
``-latest`` alias are priced as the model they name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from dialectic.core.config import ModelPrice

PRICES_AS_OF = "2025-10"
"""When the built-in prices were the providers' list prices."""

FREE_PROVIDERS: frozenset[str] = frozenset({"local", "scripted", "human"})
"""Providers whose calls cost nothing: the embedded model runs here, the scripted one is a test double, and
a human seat's turns are written by a person."""

_SNAPSHOT = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|latest)$")
_FREE = ModelPrice(input=0, output=0, cached_input=0)


ANTHROPIC_CACHE_WRITE = 1.25
"""Anthropic's price of writing a prompt-cache entry (the 5-minute cache), as a multiple of the input price."""


def _price(input_usd: float, output_usd: float, cached_usd: float) -> ModelPrice:
    return ModelPrice(input=input_usd, output=output_usd, cached_input=cached_usd)


def _anthropic(input_usd: float, output_usd: float, cached_usd: float) -> ModelPrice:
    return ModelPrice(
        input=input_usd, output=output_usd, cached_input=cached_usd, cache_write=input_usd * ANTHROPIC_CACHE_WRITE
    )


BUILT_IN_PRICES: dict[str, ModelPrice] = {
    # OpenAI: input, output, cached input
    "openai/gpt-4o": _price(2.50, 10.00, 1.25),
    "openai/gpt-4o-mini": _price(0.15, 0.60, 0.075),
    "openai/gpt-4.1": _price(2.00, 8.00, 0.50),
    "openai/gpt-4.1-mini": _price(0.40, 1.60, 0.10),
    "openai/gpt-4.1-nano": _price(0.10, 0.40, 0.025),
    "openai/gpt-5": _price(1.25, 10.00, 0.125),
    "openai/gpt-5-mini": _price(0.25, 2.00, 0.025),
    "openai/gpt-5-nano": _price(0.05, 0.40, 0.005),
    "openai/o3": _price(2.00, 8.00, 0.50),
    "openai/o3-mini": _price(1.10, 4.40, 0.55),
    "openai/o4-mini": _price(1.10, 4.40, 0.275),
    # Anthropic: input, output, cache reads (cache writes at 1.25× the input)
    "anthropic/claude-opus-4-1": _anthropic(15.00, 75.00, 1.50),
    "anthropic/claude-opus-4-0": _anthropic(15.00, 75.00, 1.50),
    "anthropic/claude-sonnet-4-5": _anthropic(3.00, 15.00, 0.30),
    "anthropic/claude-sonnet-4-0": _anthropic(3.00, 15.00, 0.30),
    "anthropic/claude-3-7-sonnet": _anthropic(3.00, 15.00, 0.30),
    "anthropic/claude-haiku-4-5": _anthropic(1.00, 5.00, 0.10),
    "anthropic/claude-3-5-haiku": _anthropic(0.80, 4.00, 0.08),
    # OpenRouter: the providers' prices under OpenRouter's model names
    "openrouter/openai/gpt-4o": _price(2.50, 10.00, 1.25),
    "openrouter/openai/gpt-4o-mini": _price(0.15, 0.60, 0.075),
    "openrouter/openai/gpt-4.1": _price(2.00, 8.00, 0.50),
    "openrouter/openai/gpt-4.1-mini": _price(0.40, 1.60, 0.10),
    "openrouter/openai/gpt-5": _price(1.25, 10.00, 0.125),
    "openrouter/openai/gpt-5-mini": _price(0.25, 2.00, 0.025),
    "openrouter/anthropic/claude-opus-4.1": _price(15.00, 75.00, 1.50),
    "openrouter/anthropic/claude-sonnet-4.5": _price(3.00, 15.00, 0.30),
    "openrouter/anthropic/claude-sonnet-4": _price(3.00, 15.00, 0.30),
    "openrouter/anthropic/claude-haiku-4.5": _price(1.00, 5.00, 0.10),
    "openrouter/anthropic/claude-3.5-haiku": _price(0.80, 4.00, 0.08),
    "openrouter/google/gemini-2.5-pro": _price(1.25, 10.00, 0.31),
    "openrouter/google/gemini-2.5-flash": _price(0.30, 2.50, 0.075),
}
"""``provider/model`` → list price. Aliases without a version (``claude-opus-4``) are in :data:`ALIASES`."""

ALIASES: dict[str, str] = {
    "anthropic/claude-opus-4": "anthropic/claude-opus-4-0",
    "anthropic/claude-sonnet-4": "anthropic/claude-sonnet-4-0",
}


@dataclass(frozen=True)
class PriceTable:
    """The prices a debate is charged at: the configuration's ``pricing`` first, then the built-in table."""

    overrides: Mapping[str, ModelPrice]

    @classmethod
    def of(cls, pricing: Mapping[str, ModelPrice] | None = None) -> PriceTable:
        return cls({_key(*key.split("/", 1)): price for key, price in (pricing or {}).items()})

    def price(self, provider: str, model: str) -> ModelPrice | None:
        """The price of ``model`` on ``provider``, or ``None`` when it has none."""
        for name in _names(model):
            key = _key(provider, name)
            if key in self.overrides:
                return self.overrides[key]
        if provider.strip().lower() in FREE_PROVIDERS:
            return _FREE
        for name in _names(model):
            key = _key(provider, name)
            found = BUILT_IN_PRICES.get(ALIASES.get(key, key))
            if found is not None:
                return found
        return None

    def cost(
        self,
        provider: str,
        model: str,
        *,
        input_tokens: int,
        output_tokens: int,
        cached: int | None = None,
        cache_writes: int | None = None,
    ) -> float | None:
        """US dollars for one request's tokens (``input_tokens`` counts the cached and written ones too), or
        ``None``."""
        price = self.price(provider, model)
        return None if price is None else cost_at(price, input_tokens, output_tokens, cached, cache_writes)


def cost_at(
    price: ModelPrice, input_tokens: int, output_tokens: int, cached: int | None = None, cache_writes: int | None = None
) -> float:
    """Dollars for these tokens at ``price``: input read from the prompt cache at the cached rate, input written
    to it at the cache-write rate, the rest at the input rate."""
    hits = min(max(cached or 0, 0), input_tokens)
    writes = min(max(cache_writes or 0, 0), input_tokens - hits)
    cached_rate = price.input if price.cached_input is None else price.cached_input
    write_rate = price.input if price.cache_write is None else price.cache_write
    fresh = input_tokens - hits - writes
    return (fresh * price.input + hits * cached_rate + writes * write_rate + output_tokens * price.output) / 1_000_000


def _key(provider: str, model: str) -> str:
    return f"{provider.strip().lower()}/{model.strip().lower()}"


def _names(model: str) -> list[str]:
    """The model as named, then without a snapshot date or ``-latest``."""
    stripped = _SNAPSHOT.sub("", model.strip())
    return [model] if stripped == model.strip() else [model, stripped]
