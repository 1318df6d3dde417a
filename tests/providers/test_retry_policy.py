"""Unit tests for dialectic.llm.retry: backoff, jitter, Retry-After, and the status mapping."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from dialectic.core.errors import (
    BadRequest,
    ContextWindowExceeded,
    InvalidResponse,
    ModelNotFound,
    ProviderAuthError,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
    RateLimited,
    RetriesExhausted,
)
from dialectic.llm.base import Completion
from dialectic.llm.retry import RetryPolicy, error_for_status, parse_retry_after, with_retries


class Recorder:
    """An injectable sleep that records the waits instead of waiting, plus an on_retry log."""

    def __init__(self) -> None:
        self.waits: list[float] = []
        self.retries: list[tuple[ProviderError, int, float]] = []

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)

    def on_retry(self, error: ProviderError, attempt: int, wait: float) -> None:
        self.retries.append((error, attempt, wait))


def failing(errors: list[Exception], result: object = "ok") -> tuple[list[int], object]:
    """A call raising ``errors`` in turn, then returning ``result``; the list counts the calls."""
    calls: list[int] = []

    async def call() -> object:
        calls.append(1)
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]
        return result

    return calls, call


def run_retries(call: object, policy: RetryPolicy, recorder: Recorder, **kwargs: object) -> object:
    return asyncio.run(
        with_retries(call, policy, on_retry=recorder.on_retry, sleep=recorder.sleep, **kwargs)  # type: ignore[arg-type]
    )


def test_backoff_grows_exponentially_up_to_the_cap_then_gives_up() -> None:
    recorder = Recorder()
    error = ProviderUnavailable("down", provider="openai", status_code=503)
    calls, call = failing([error] * 10)
    policy = RetryPolicy(max_attempts=5, base_delay_s=1.0, max_delay_s=3.0, jitter_s=0.0)
    with pytest.raises(RetriesExhausted) as raised:
        run_retries(call, policy, recorder)
    assert recorder.waits == [1.0, 2.0, 3.0, 3.0]
    assert len(calls) == 5
    assert raised.value.attempts == 5 and raised.value.last is error
    assert raised.value.status_code == 503 and "gave up after 5 attempts" in str(raised.value)
    assert [(attempt, wait) for _, attempt, wait in recorder.retries] == [(1, 1.0), (2, 2.0), (3, 3.0), (4, 3.0)]


def test_jitter_stays_within_bounds() -> None:
    recorder = Recorder()
    _, call = failing([ProviderUnavailable("down")] * 20)
    policy = RetryPolicy(max_attempts=8, base_delay_s=0.5, max_delay_s=2.0, jitter_s=0.25)
    with pytest.raises(RetriesExhausted):
        run_retries(call, policy, recorder, rng=random.Random(7))
    bases = [0.5, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0]
    assert len(recorder.waits) == len(bases)
    for base, wait in zip(bases, recorder.waits, strict=True):
        assert base <= wait <= base + 0.25
    assert any(wait > base for base, wait in zip(bases, recorder.waits, strict=True))


def test_success_after_retryable_failures_returns_result_and_counts_attempts() -> None:
    recorder = Recorder()
    completion = Completion(text="hi", model="m")
    calls, call = failing([InvalidResponse("garbled"), ProviderUnavailable("down")], result=completion)
    result = run_retries(call, RetryPolicy(jitter_s=0.0), recorder)
    assert isinstance(result, Completion) and result.text == "hi" and result.attempts == 3
    assert len(calls) == 3 and len(recorder.waits) == 2


@pytest.mark.parametrize(
    ("retry_after", "expected"),
    [(4.0, 4.0), (120.0, 5.0), (0.1, 1.0)],
    ids=["hint-longer-than-backoff", "hint-capped", "backoff-longer-than-hint"],
)
def test_retry_after_is_honoured_and_capped(retry_after: float, expected: float) -> None:
    recorder = Recorder()
    calls, call = failing([RateLimited("busy", retry_after=retry_after)])
    policy = RetryPolicy(base_delay_s=1.0, jitter_s=0.0, max_retry_after_s=5.0)
    assert run_retries(call, policy, recorder) == "ok"
    assert recorder.waits == [expected]
    assert len(calls) == 2


@pytest.mark.parametrize("error", [BadRequest("no"), ProviderAuthError("key"), ModelNotFound("gone"), KeyError("bug")])
def test_non_retryable_errors_propagate_unchanged_at_once(error: Exception) -> None:
    recorder = Recorder()
    calls, call = failing([error])
    with pytest.raises(type(error)) as raised:
        run_retries(call, RetryPolicy(), recorder)
    assert raised.value is error
    assert len(calls) == 1 and recorder.waits == [] and recorder.retries == []


def test_a_single_attempt_policy_still_reports_exhaustion() -> None:
    recorder = Recorder()
    calls, call = failing([ProviderUnavailable("down")])
    with pytest.raises(RetriesExhausted) as raised:
        run_retries(call, RetryPolicy(max_attempts=1), recorder)
    assert raised.value.attempts == 1 and len(calls) == 1 and recorder.waits == []


def test_parse_retry_after_reads_seconds_milliseconds_and_dates() -> None:
    now = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "0.25"}) == 0.25
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    later = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert parse_retry_after({"Retry-After": later}, now=now) == 30.0
    earlier = format_datetime(now - timedelta(seconds=30), usegmt=True)
    assert parse_retry_after({"Retry-After": earlier}, now=now) == 0.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None and parse_retry_after(None) is None


@pytest.mark.parametrize(
    ("status", "message", "code", "expected"),
    [
        (401, "bad key", None, ProviderAuthError),
        (403, "forbidden", None, ProviderAuthError),
        (429, "slow down", None, RateLimited),
        (429, "You exceeded your current quota", "insufficient_quota", ProviderAuthError),
        (404, "The model `gpt-x` does not exist", None, ModelNotFound),
        (404, "Not Found", "model_not_found", ModelNotFound),
        (400, "The requested model 'gpt-x' does not exist.", "model_not_found", ModelNotFound),
        (400, "This model's maximum context length is 8192 tokens", None, ContextWindowExceeded),
        (400, "prompt is too long: 300000 tokens > 200000 maximum", None, ContextWindowExceeded),
        (400, "temperature must be below 2", None, BadRequest),
        (422, "unprocessable", None, BadRequest),
        (408, None, None, ProviderTimeout),
        (500, None, None, ProviderUnavailable),
        (503, "busy", None, ProviderUnavailable),
        (529, "Overloaded", None, ProviderUnavailable),
    ],
)
def test_error_for_status_maps_onto_the_taxonomy(
    status: int, message: str | None, code: str | None, expected: type[ProviderError]
) -> None:
    error = error_for_status("openai", status, model="gpt-x", message=message, code=code)
    assert type(error) is expected
    assert error.provider == "openai" and error.status_code == status
    assert str(error).startswith("openai: ") and f"({status})" in str(error) and "\n" not in str(error)


def test_error_for_status_messages_are_one_human_line() -> None:
    limited = error_for_status("openai", 429, model="gpt-4o-mini", headers={"retry-after": "2"})
    assert str(limited) == "openai: rate limited (429) on model gpt-4o-mini"
    assert isinstance(limited, RateLimited) and limited.retry_after == 2.0
    missing_endpoint = error_for_status("ollama", 404, model="llama3", message="404 page not found")
    assert type(missing_endpoint) is ProviderError and "endpoint not found (404)" in str(missing_endpoint)


def test_a_timeout_is_tried_once_more_then_given_up_on() -> None:
    recorder = Recorder()
    calls, call = failing([ProviderTimeout("silent")] * 10)
    with pytest.raises(RetriesExhausted) as raised:
        run_retries(call, RetryPolicy(jitter_s=0.0), recorder)
    assert len(calls) == 2 and recorder.waits == [0.5]
    assert raised.value.attempts == 2 and isinstance(raised.value.last, ProviderTimeout)


def test_timeouts_are_counted_apart_from_other_retryable_failures() -> None:
    recorder = Recorder()
    errors: list[Exception] = [ProviderTimeout("t1"), ProviderUnavailable("u"), RateLimited("r"), ProviderTimeout("t2")]
    calls, call = failing(errors + [ProviderUnavailable("never reached")])
    with pytest.raises(RetriesExhausted) as raised:
        run_retries(call, RetryPolicy(max_attempts=8, jitter_s=0.0), recorder)
    assert len(calls) == 4 and raised.value.last is errors[-1]


def test_one_timeout_then_an_answer_succeeds() -> None:
    recorder = Recorder()
    calls, call = failing([ProviderTimeout("slow once")])
    assert run_retries(call, RetryPolicy(jitter_s=0.0), recorder) == "ok"
    assert len(calls) == 2
