"""Watching each provider request a client makes, without the callers passing anything along.

A caller higher up (the engine, around one piece of work) installs a :class:`RequestObserver`
for the duration of an ``await`` with :func:`observing`; every request :class:`~dialectic.llm.client.LLMClient`
sends inside it — retries, continuations of cut-off replies and structured-output repairs
included — is reported to it. The observer is held in a :mod:`contextvars` variable, so it
follows the ``await`` chain and the tasks started inside it, and concurrent calls each see
their own. A request the call cache answers is reported as ``served`` (it was never sent). This
package knows nothing of who observes (a ledger, a budget, a tracer).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

from dialectic.llm.base import Completion, CompletionRequest


class RequestObserver(Protocol):
    async def before(self, provider: str, request: CompletionRequest) -> None:
        """Called before each request is sent; may wait, or raise to stop it from being sent."""
        ...

    def succeeded(self, request: CompletionRequest, completion: Completion) -> None: ...

    def failed(self, request: CompletionRequest, error: BaseException) -> None:
        """The request raised (a provider error, a timeout, a cancellation); it may be retried."""
        ...

    def served(self, request: CompletionRequest, completion: Completion) -> None:
        """The call cache answered the request (:mod:`dialectic.llm.call_cache`): nothing was sent."""
        ...


_current: ContextVar[RequestObserver | None] = ContextVar("dialectic_request_observer", default=None)


def current_observer() -> RequestObserver | None:
    return _current.get()


@contextmanager
def observing(observer: RequestObserver) -> Iterator[None]:
    """Report the requests made inside this block (and in tasks it starts) to ``observer``."""
    token = _current.set(observer)
    try:
        yield
    finally:
        _current.reset(token)
