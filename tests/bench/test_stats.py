"""Bootstrap confidence intervals on data whose answer is known."""

from __future__ import annotations

import math

import pytest

from dialectic.bench.stats import bootstrap_ci, mcnemar, mcnemar_exact_p, paired_bootstrap


def test_constant_data_gives_a_zero_width_interval() -> None:
    ci = bootstrap_ci([1.0] * 30)
    assert ci is not None and (ci.estimate, ci.low, ci.high, ci.n) == (1.0, 1.0, 1.0, 30)


def test_no_data_gives_no_interval() -> None:
    assert bootstrap_ci([]) is None
    assert paired_bootstrap([], []) is None


def test_half_right_interval_matches_the_normal_approximation() -> None:
    values = [1.0, 0.0] * 100  # p = 0.5, n = 200: standard error sqrt(.25/200) ≈ 0.0354
    ci = bootstrap_ci(values, seed=1)
    assert ci is not None
    assert ci.estimate == 0.5
    half_width = 1.96 * math.sqrt(0.25 / 200)
    assert ci.low == pytest.approx(0.5 - half_width, abs=0.015)
    assert ci.high == pytest.approx(0.5 + half_width, abs=0.015)
    assert ci.contains(0.5)


def test_same_seed_same_interval_and_another_seed_differs_slightly() -> None:
    values = [1.0] * 13 + [0.0] * 7
    first, again, other = bootstrap_ci(values, seed=3), bootstrap_ci(values, seed=3), bootstrap_ci(values, seed=4)
    assert first == again
    assert first is not None and other is not None
    assert first.estimate == other.estimate == 0.65
    assert abs(first.low - other.low) <= 0.1


def test_percentile_bounds_follow_the_documented_indices() -> None:
    ci = bootstrap_ci([0.0, 1.0, 1.0, 0.0, 1.0], resamples=40, confidence=0.9, seed=0)
    assert ci is not None
    assert 0.0 <= ci.low <= ci.estimate <= ci.high <= 1.0


def test_paired_difference_of_identical_arms_is_exactly_zero() -> None:
    a = [1.0, 0.0, 1.0, 1.0, 0.0] * 4
    ci = paired_bootstrap(a, a)
    assert ci is not None and (ci.estimate, ci.low, ci.high) == (0.0, 0.0, 0.0)


def test_paired_difference_of_one_extra_right_answer_per_five_items() -> None:
    better = [1.0] * 100
    worse = [1.0, 1.0, 1.0, 1.0, 0.0] * 20
    ci = paired_bootstrap(better, worse, seed=2)
    assert ci is not None
    assert ci.estimate == pytest.approx(0.2)
    assert 0.1 < ci.low < 0.2 < ci.high < 0.3
    assert not ci.contains(0.0)


def test_pairing_is_narrower_than_independent_intervals_when_arms_agree() -> None:
    a = [1.0] * 40 + [0.0] * 40 + [1.0] * 4
    b = [1.0] * 40 + [0.0] * 40 + [0.0] * 4
    paired = paired_bootstrap(a, b, seed=0)
    ci_a, ci_b = bootstrap_ci(a, seed=0), bootstrap_ci(b, seed=0)
    assert paired is not None and ci_a is not None and ci_b is not None
    assert paired.high - paired.low < (ci_a.high - ci_a.low)
    assert paired.low >= 0.0


def test_paired_samples_must_have_the_same_length() -> None:
    with pytest.raises(ValueError):
        paired_bootstrap([1.0], [1.0, 0.0])


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (10, 2, 0.03857421875),  # 2 · (1 + 12 + 66) / 2^12
        (2, 10, 0.03857421875),
        (5, 5, 1.0),
        (0, 6, 0.03125),
        (0, 0, 1.0),
        (1, 0, 1.0),
        (0, 5, 0.0625),
        (3, 1, 0.625),
    ],
)
def test_exact_mcnemar_p_values(b: int, c: int, p: float) -> None:
    assert mcnemar_exact_p(b, c) == pytest.approx(p, rel=1e-12)


def test_exact_mcnemar_holds_for_many_discordant_items() -> None:
    assert mcnemar_exact_p(600, 400) == pytest.approx(2.9e-10, rel=0.1)  # z ≈ 6.3
    assert mcnemar_exact_p(5000, 5000) == 1.0
    assert mcnemar_exact_p(3000, 0) == 0.0  # far below the smallest float: no overflow


def test_exact_mcnemar_refuses_negative_counts() -> None:
    with pytest.raises(ValueError):
        mcnemar_exact_p(-1, 3)


def test_mcnemar_counts_the_discordant_items_of_two_arms() -> None:
    a = [True, True, False, False, True, True, True]
    b = [True, False, True, False, False, False, False]
    test = mcnemar(a, b)
    assert (test.only_this, test.only_reference) == (4, 1)
    assert test.p_value == pytest.approx(mcnemar_exact_p(4, 1)) == pytest.approx(0.375)
    with pytest.raises(ValueError):
        mcnemar([True], [True, False])
