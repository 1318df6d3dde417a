"""Which errors fail one item of a benchmark run, and which stop the run.

A provider error met while working on one item — retries exhausted, a per-call or round timeout,
a request refused as such (e.g. a prompt past the context window), a debate that failed — is
recorded with that item (outcome ``failed``, scored wrong and counted apart) and the run goes on.
Errors that would fail every item alike stop the run, resumable: the provider rejecting the
credentials (``ProviderAuthError``), an unknown model (``ModelNotFound``), an endpoint that does
not exist (a plain 404), a server that could not be reached through every retry
(``ProviderUnreachable``: a server down or not yet up would otherwise turn each item it was asked
into a failed, finished item), and anything that is not a provider error (a configuration error such
as a missing local model file, a bad argument, a store that cannot be written, a bug).
"""

from __future__ import annotations

from dialectic.core.errors import (
    ModelNotFound,
    ProviderAuthError,
    ProviderError,
    ProviderUnreachable,
    RetriesExhausted,
    TooFewAgentsError,
)


def fails_only_the_item(error: BaseException) -> bool:
    """Whether ``error`` is confined to the item it happened on (record it, carry on)."""
    if isinstance(error, TooFewAgentsError):
        error = error.cause  # a debate whose agents all failed the same way: judge by why they failed
    if not isinstance(error, ProviderError):
        return False
    if isinstance(error, (ProviderAuthError, ModelNotFound)):
        return False
    if isinstance(error.last if isinstance(error, RetriesExhausted) else error, ProviderUnreachable):
        return False
    return error.status_code != 404


def failure_note(error: BaseException) -> str:
    """How a failure is written in the item's record: the error's kind and message."""
    return f"{type(error).__name__}: {error}"
