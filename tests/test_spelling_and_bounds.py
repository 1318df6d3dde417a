"""The one did-you-mean (:mod:`dialectic.core.spelling`) and the ranges of the CLI's numbers
(:mod:`dialectic.core.bounds`)."""

from __future__ import annotations

import pytest

from dialectic.core.bounds import check_range
from dialectic.core.errors import EXIT_INVALID_ARGS, InvalidArgumentsError
from dialectic.core.spelling import did_you_mean, nearest


@pytest.mark.parametrize(
    ("typed", "known", "expected"),
    [
        ("maxCostUSD", ["maxCostUsd", "maxTokens"], "maxCostUsd"),  # case alone
        ("max_cost_usd", ["maxCostUsd", "maxTokens"], "maxCostUsd"),  # snake_case
        ("agnets", ["agents", "judge", "debate", "limits"], "agents"),
        ("opneai", ["anthropic", "openai", "openrouter"], "openai"),
        ("nope", ["anthropic", "openai", "openrouter"], None),  # too far from any: nothing offered
        ("colour", ["id", "name", "role"], None),
    ],
)
def test_the_nearest_known_name(typed: str, known: list[str], expected: str | None) -> None:
    assert nearest(typed, known) == expected


def test_one_wording() -> None:
    assert did_you_mean("rounds") == " — did you mean `rounds`?"
    assert did_you_mean(None) == ""


def test_a_number_out_of_range_is_one_line_and_exit_2() -> None:
    assert check_range("--concurrency", 8, 1, 1_000) == 8
    with pytest.raises(InvalidArgumentsError) as info:
        check_range("--concurrency", 1_000_000_000, 1, 1_000)
    assert info.value.message == "--concurrency must be between 1 and 1,000 (got 1000000000)"
    assert info.value.exit_code == EXIT_INVALID_ARGS
    with pytest.raises(InvalidArgumentsError, match="must be a whole number"):
        check_range("--limit", True, 1, 10)
