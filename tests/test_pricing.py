"""What a call costs: the built-in table, the configuration over it, cached input, and unknown prices."""

from __future__ import annotations

import pytest

from dialectic.core.config import ModelPrice, SystemConfig
from dialectic.core.pricing import BUILT_IN_PRICES, PRICES_AS_OF, PriceTable, cost_at


def test_the_built_in_table_has_the_common_models_and_its_date() -> None:
    assert PRICES_AS_OF
    for key in ("openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5", "openrouter/openai/gpt-4o-mini"):
        assert key in BUILT_IN_PRICES
    assert all(p.input >= 0 and p.output >= p.input for p in BUILT_IN_PRICES.values())


def test_a_call_costs_its_input_output_and_cached_tokens_at_their_prices() -> None:
    price = ModelPrice(input=2.0, output=8.0, cached_input=0.5)
    assert cost_at(price, 1_000_000, 0) == pytest.approx(2.0)
    assert cost_at(price, 1_000, 500) == pytest.approx(0.002 + 0.004)
    assert cost_at(price, 1_000, 0, cached=400) == pytest.approx(600 * 2e-6 + 400 * 0.5e-6)
    assert cost_at(ModelPrice(input=2.0, output=8.0), 1_000, 0, cached=400) == pytest.approx(0.002)


def test_gpt_4o_mini_costs_its_list_price() -> None:
    cost = PriceTable.of().cost("openai", "gpt-4o-mini", input_tokens=1_000_000, output_tokens=1_000_000)
    assert cost == pytest.approx(0.15 + 0.60)


def test_dated_snapshots_and_latest_aliases_cost_what_their_model_costs() -> None:
    table = PriceTable.of()
    assert table.price("openai", "gpt-4o-mini-2024-07-18") == table.price("openai", "gpt-4o-mini")
    assert table.price("anthropic", "claude-sonnet-4-5-20250929") == table.price("anthropic", "claude-sonnet-4-5")
    assert table.price("anthropic", "claude-3-7-sonnet-latest") == table.price("anthropic", "claude-3-7-sonnet")
    assert table.price("anthropic", "claude-sonnet-4") == table.price("anthropic", "claude-sonnet-4-0")


def test_local_and_scripted_cost_nothing_and_an_unknown_model_has_no_price() -> None:
    table = PriceTable.of()
    assert table.cost("local", "/models/any.gguf", input_tokens=10, output_tokens=10) == 0
    assert table.cost("scripted", "scripted-1", input_tokens=10, output_tokens=10) == 0
    assert table.price("openai", "a-model-nobody-priced") is None
    assert table.cost("openai", "a-model-nobody-priced", input_tokens=10, output_tokens=10) is None
    assert table.price("ollama", "llama3") is None


def test_the_configuration_overrides_and_extends_the_table() -> None:
    config = SystemConfig.model_validate(
        {
            "pricing": {
                "openai/gpt-4o-mini": {"input": 1, "output": 2},
                "OpenAI/My-Fine-Tune": {"input": 3, "output": 4, "cachedInput": 1},
                "scripted/m": {"input": 5, "output": 6},
            }
        }
    )
    table = PriceTable.of(config.pricing)
    assert table.price("openai", "gpt-4o-mini") == ModelPrice(input=1, output=2)
    assert table.price("openai", "my-fine-tune") == ModelPrice(input=3, output=4, cached_input=1)
    assert table.price("scripted", "m") == ModelPrice(input=5, output=6)  # a price wins over "free"


def test_a_pricing_key_must_name_provider_and_model() -> None:
    with pytest.raises(ValueError, match="provider/model"):
        SystemConfig.model_validate({"pricing": {"gpt-4o": {"input": 1, "output": 2}}})
    with pytest.raises(ValueError):
        SystemConfig.model_validate({"pricing": {"openai/x": {"input": -1, "output": 2}}})


def test_prompt_cache_reads_and_writes_are_priced_at_their_rates() -> None:
    """Anthropic's cache reads and OpenAI's cached tokens, as the adapters count them, cost the cached rate;
    Anthropic's cache writes cost 1.25× its input price."""
    from dialectic.llm.anthropic_provider import _usage_json

    usage = _usage_json(
        {"input_tokens": 50, "output_tokens": 12, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 900}
    )
    table = PriceTable.of()
    cost = table.cost(
        "anthropic",
        "claude-haiku-4-5",
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached=usage.cached_input_tokens,
        cache_writes=usage.cache_write_tokens,
    )
    assert (usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens) == (1050, 900, 100)
    assert cost == pytest.approx((50 * 1.00 + 100 * 1.25 + 900 * 0.10 + 12 * 5.00) / 1_000_000)
    assert table.price("anthropic", "claude-sonnet-4-5").cache_write == pytest.approx(3.75)  # type: ignore[union-attr]
    own = PriceTable.of({"anthropic/x": ModelPrice(input=2, output=4)})
    assert own.cost("anthropic", "x", input_tokens=100, output_tokens=0, cache_writes=40) == pytest.approx(200 / 1e6)
    openai_cost = table.cost("openai", "gpt-4o-mini", input_tokens=1000, output_tokens=0, cached=896)
    assert openai_cost == pytest.approx((104 * 0.15 + 896 * 0.075) / 1_000_000)
