"""Retries with exponential backoff and jitter, and the HTTP-status mapping that decides them.

Adapters never retry on their own (their HTTP wire, :mod:`dialectic.llm.http_wire`, sends once): they
translate every failure into ``dialectic.core.errors`` and :func:`with_retries` retries exactly the
errors whose ``retryable`` flag is set (``RateLimited``, ``ProviderUnavailable``,
``ProviderTimeout``, ``InvalidResponse``). :func:`error_for_status` is the one place that turns an
HTTP status and the server's error message into that taxonomy, shared by the HTTP adapters.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar, cast

from tenacity import AsyncRetrying, RetryCallState, RetryError, retry_if_exception

from dialectic.core.errors import (
    BadRequest,
    ContextWindowExceeded,
    ModelNotFound,
    ProviderAuthError,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
    RateLimited,
    RetriesExhausted,
)
from dialectic.core.json_values import JsonObject
from dialectic.llm.base import Completion

T = TypeVar("T")
OnRetry = Callable[[ProviderError, int, float], None]
"""Called as ``on_retry(error, failed_attempt_number, wait_seconds)`` before each wait."""
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 4
    """Total calls, the first one included."""
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0
    """Cap of the exponential part; jitter is added on top so capped waits still spread out."""
    jitter_s: float = 0.25
    max_retry_after_s: float = 60.0
    """Cap on a server's ``Retry-After`` hint, so one odd header cannot stall a debate."""
    max_timeout_attempts: int = 2
    """Attempts that may end in a per-call timeout (``ProviderTimeout``) before giving up.

    A timeout costs a whole per-call timeout, so it is tried once more, not ``max_attempts``
    times: a silent endpoint fails after two timeouts and one backoff (about 4 minutes with the
    120 s default timeout, see :mod:`dialectic.llm.timeouts`)."""

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """The wait after failed attempt number ``attempt`` (1-based), before any server hint."""
        exponential = min(self.max_delay_s, self.base_delay_s * 2.0 ** (attempt - 1))
        return exponential + rng.uniform(0.0, self.jitter_s)

    def wait_for(self, error: ProviderError, attempt: int, rng: random.Random) -> float:
        """``max(backoff, retry_after)`` with the server's hint capped by ``max_retry_after_s``."""
        wait = self.backoff(attempt, rng)
        hint = error.retry_after if isinstance(error, RateLimited) else None
        if hint is not None:
            wait = max(wait, min(hint, self.max_retry_after_s))
        return wait


def _is_retryable(error: BaseException) -> bool:
    return isinstance(error, ProviderError) and error.retryable


def _failure(state: RetryCallState) -> ProviderError:
    """The error of the attempt tenacity is deciding about (only retryable ones get here)."""
    if state.outcome is None:
        raise RuntimeError("tenacity asked for a wait before any attempt finished")
    return cast(ProviderError, state.outcome.exception())


async def with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    on_retry: OnRetry | None = None,
    sleep: Sleep = asyncio.sleep,
    rng: random.Random | None = None,
) -> T:
    """Await ``call()`` until it succeeds, a non-retryable error occurs, or attempts run out.

    Non-retryable errors (and anything that is not a ``ProviderError``) propagate unchanged at
    once; a retryable one still failing after ``policy.max_attempts`` calls (or after
    ``policy.max_timeout_attempts`` timeouts) becomes ``RetriesExhausted(last_error, attempts)``.
    A :class:`Completion` result gets its ``attempts`` field set to the number of calls it took.
    ``sleep`` and ``rng`` are injectable so tests neither wait nor depend on chance.
    """
    chooser = rng or random.Random()
    attempts = timeouts = 0

    async def attempt() -> T:
        nonlocal attempts, timeouts
        attempts += 1
        try:
            return await call()
        except ProviderTimeout:
            timeouts += 1
            raise

    def stop(state: RetryCallState) -> bool:
        """Out of attempts, or out of the (smaller) allowance for timeouts."""
        return state.attempt_number >= max(1, policy.max_attempts) or timeouts >= max(1, policy.max_timeout_attempts)

    def wait(state: RetryCallState) -> float:
        return policy.wait_for(_failure(state), state.attempt_number, chooser)

    def before_sleep(state: RetryCallState) -> None:
        if on_retry is not None and state.next_action is not None:
            on_retry(_failure(state), state.attempt_number, state.next_action.sleep)

    retrying = AsyncRetrying(
        stop=stop,
        wait=wait,
        retry=retry_if_exception(_is_retryable),
        sleep=sleep,
        before_sleep=before_sleep,
    )
    try:
        result: T = await retrying(attempt)
    except RetryError as exhausted:
        last = cast(ProviderError, exhausted.last_attempt.exception())
        raise RetriesExhausted(last, attempts) from last
    finally:
        # tenacity keeps its last actions (its own bound methods) in its state: a reference cycle holding
        # the call's outcome, left to the garbage collector's rare full passes unless cleared here
        retrying.iter_state.reset()
    if isinstance(result, Completion) and attempts > 1:
        return cast(T, replace(result, attempts=attempts))
    return result


def parse_retry_after(headers: Mapping[str, str] | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if not headers:
        return None
    lowered = {key.lower(): value for key, value in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


_CONTEXT_MARKERS = (
    "context length",
    "context_length",
    "maximum context",
    "context window",
    "prompt is too long",
    "too many tokens",
    "context size",
    "exceed_context_size",
)


def is_about_model(message: str | None, code: str | None, model: str) -> bool:
    """Whether a 404 concerns the model rather than the endpoint.

    The rule: the error code is ``model_not_found``, or the server's message names the
    requested model or uses the word "model". A bare "Not Found" / "404 page not found" /
    "Invalid URL" is about the endpoint (the path does not exist on that server).
    """
    if code == "model_not_found":
        return True
    text = (message or "").lower()
    return "model" in text or bool(model and model.lower() in text)


def _short(message: str | None) -> str:
    line = (message or "").strip().splitlines()[0] if (message or "").strip() else ""
    return line if len(line) <= 200 else line[:197] + "..."


def error_for_status(
    provider: str,
    status: int,
    *,
    model: str,
    message: str | None = None,
    code: str | None = None,
    headers: Mapping[str, str] | None = None,
    window: int | None = None,
    prompt_tokens: int | None = None,
) -> ProviderError:
    """The ``ProviderError`` for an HTTP error status, as one human line naming provider and status.

    ``message`` and ``code`` are the server's error message and code (they decide between
    ``ContextWindowExceeded`` and ``BadRequest``, and between ``ModelNotFound`` and a missing
    endpoint); the server's message is kept whole in ``detail``.
    """
    on_model = f" on model {model}" if model else ""
    server = _short(message)
    suffix = f": {server}" if server else ""
    extra: JsonObject = {"provider": provider, "status_code": status, "detail": message}
    if status in (401, 402, 403):
        what = {401: "authentication failed", 402: "payment required", 403: "permission denied"}[status]
        return ProviderAuthError(f"{provider}: {what} ({status}); check the API key and account", **extra)
    if status == 429:
        if code == "insufficient_quota":
            return ProviderAuthError(
                f"{provider}: quota exhausted (429); check the account's plan and billing", **extra
            )
        return RateLimited(f"{provider}: rate limited (429){on_model}", retry_after=parse_retry_after(headers), **extra)
    if status == 404 or code == "model_not_found":
        if is_about_model(message, code, model):
            return ModelNotFound(f"{provider}: model {model} not found ({status}){suffix}", **extra)
        return ProviderError(f"{provider}: endpoint not found (404); check the base URL{suffix}", **extra)
    if status == 408:
        return ProviderTimeout(f"{provider}: request timeout (408){on_model}", **extra)
    if status == 409 or status >= 500:
        what = "overloaded" if status == 529 else "server error"
        return ProviderUnavailable(f"{provider}: {what} ({status}){on_model}", **extra)
    lowered = f"{code or ''} {message or ''}".lower()
    if any(marker in lowered for marker in _CONTEXT_MARKERS):
        sizes = f" ({prompt_tokens} tokens against a window of {window})" if window and prompt_tokens else ""
        return ContextWindowExceeded(
            f"{provider}: prompt exceeds the context window ({status}){on_model}{sizes}",
            window=window,
            prompt_tokens=prompt_tokens,
            **extra,
        )
    return BadRequest(f"{provider}: bad request ({status}){on_model}{suffix}", **extra)
