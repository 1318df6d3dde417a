"""A second chance for a piece of debate work whose call failed after the client's own retries.

The client already retries transient failures with back-off; when those run out, the work
(a contribution, the synthesis) is asked for once more before it is recorded as failed —
a burst of faults should not cost an agent its place in the debate. Errors that another
try cannot fix (authentication, a bad request, a missing model) and timeouts (another try
would only wait as long again) get no second chance.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from dialectic.core.errors import ProviderError, ProviderTimeout, RetriesExhausted

T = TypeVar("T")

WORK_ATTEMPTS = 2


def worth_another_try(error: ProviderError) -> bool:
    if isinstance(error, RetriesExhausted):
        return not isinstance(error.last, ProviderTimeout)
    return error.retryable and not isinstance(error, ProviderTimeout)


async def with_second_chance(make_call: Callable[[], Awaitable[T]], *, attempts: int = WORK_ATTEMPTS) -> T:
    """Await ``make_call()``; on a provider failure worth it, once more. Raises the last failure."""
    for attempt in range(1, attempts + 1):
        try:
            return await make_call()
        except ProviderError as error:
            if attempt == attempts or not worth_another_try(error):
                raise
    raise AssertionError("unreachable: the loop returns or raises")
