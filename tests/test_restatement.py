"""The restatement check: a solution's share of content words its problem never uses."""

from __future__ import annotations

import pytest

from dialectic.similarity.detectors import MIN_NOVELTY, novelty_share, restatement

PROBLEM = (
    "# Rate limiter for a public REST API\n\n"
    "We run a public REST API on 12 stateless application servers behind a load balancer.\n"
    "Design a rate limiter that:\n\n"
    "- allows 100 requests per minute per API key, with short bursts up to 20 requests per second;\n"
    "- behaves the same whichever server a request lands on;\n"
    "- adds less than 2 ms of latency at the 99th percentile;\n"
    "- keeps serving traffic (failing open, with an alert) if its backing store is down.\n"
)
RESTATED = (
    "Design a rate limiter for a public REST API that allows 100 requests per minute per API key, "
    "with short bursts up to 20 requests per second. The rate limiter should behave the same whichever "
    "server a request lands on, add less than 2 ms of latency at the 99th percentile, and keep serving "
    "traffic (failing open, with an alert) if its backing store is down."
)
REWORDED = (  # a 0.5B judge's "solution" in a demo run: the problem reworded, one agent's sentence appended
    "Design a rate limiter for a public REST API using stateless application servers behind a load balancer. "
    "The solution should allow 100 requests per minute per API key, with short bursts up to 20 requests per "
    "second; the data store should be highly available and can handle high traffic volumes without downtime."
)
DESIGN = (
    "1. **Token bucket in Redis**: one bucket per API key (capacity 20, refilled at 100 per minute), "
    "updated atomically by a Lua script in one round trip.\n"
    "2. **Local fallback bucket**: if Redis times out after 1 ms, each server answers from an in-memory "
    "bucket and raises an alert through the metrics pipeline.\n"
    "3. **429 with Retry-After** when the bucket is empty."
)


def test_novelty_share_counts_occurrences_not_in_the_reference() -> None:
    assert novelty_share("redis redis limiter", "rate limiter") == pytest.approx(2 / 3)
    assert novelty_share("rate limiter", "rate limiter") == 0.0
    assert novelty_share("kafka", "rate limiter") == 1.0
    assert novelty_share("", "rate limiter") == 0.0
    assert novelty_share("the of and", "rate limiter") == 0.0


def test_function_words_and_one_letter_tokens_are_not_novel() -> None:
    assert novelty_share("the limiter and a store", "rate limiter") == 0.5
    assert novelty_share("Rate-Limiter", "rate limiter") == 0.0


def test_the_problem_restated_is_a_restatement() -> None:
    for text in (PROBLEM, RESTATED):
        check = restatement(text, PROBLEM)
        assert check.restates
        assert check.novelty < MIN_NOVELTY
        assert check.similarity > 0.7


def test_a_design_that_shares_the_problems_vocabulary_is_not_a_restatement() -> None:
    check = restatement(DESIGN, PROBLEM)
    assert not check.restates
    assert check.novelty > 0.5
    assert check.similarity < 0.5


def test_the_problem_restated_with_a_little_added_still_restates() -> None:
    assert restatement(RESTATED + " Use Redis.", PROBLEM).restates
    assert restatement(REWORDED, PROBLEM).restates


def test_threshold_is_a_parameter() -> None:
    assert restatement(DESIGN, PROBLEM, min_novelty=0.99).restates
    assert not restatement(RESTATED, PROBLEM, min_novelty=0.0).restates


def test_the_judges_own_instructions_count_as_nothing_new() -> None:
    instructions = "Write the final solution to the problem below from what the agents proposed in the debate above."
    echoed = "Write the final solution to the problem below from what the agents proposed."
    assert not restatement(echoed, PROBLEM).restates  # against the problem alone, the echo looks new
    assert restatement(echoed, PROBLEM, instructions=instructions).restates
    assert not restatement(DESIGN, PROBLEM, instructions=instructions).restates
