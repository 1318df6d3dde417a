"""One table from a client's failures to dialectic's provider errors, for every adapter.

An HTTP client raises a few families of failures (a timeout, a connection that failed, a reply of
an unexpected shape, a status code, an error inside a stream): :mod:`dialectic.llm.http_wire`
raises them as its own classes, as the OpenAI and Anthropic SDKs did under theirs. An adapter names
the classes once (:class:`SdkErrors`) and how to read a status error's body; :func:`translate`
walks one ordered table, the first matching row deciding, so both adapters give the same error,
with the same message, for the same failure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import httpx2

from dialectic.core.errors import (
    InvalidResponse,
    ProviderAuthError,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
    ProviderUnreachable,
)
from dialectic.llm.retry import error_for_status
from dialectic.llm.timeouts import silence_message


@dataclass(frozen=True)
class StatusDetails:
    """What a status error's body says: the server's message and code, and a context overflow's sizes."""

    message: str | None = None
    code: str | None = None
    window: int | None = None
    prompt_tokens: int | None = None


class _Never(Exception):
    """Stands in for an SDK class that does not exist (no instance is ever raised)."""


@dataclass(frozen=True)
class SdkErrors:
    """An SDK's exception classes, by the family each belongs to, and how its status errors are read."""

    timeout: type[Exception]
    connection: type[Exception]
    response_validation: type[Exception]
    status: type[Exception]
    stream: type[Exception]
    """The SDK's base API error (an error event inside a stream, among others)."""
    status_details: Callable[[Exception], StatusDetails]
    credentials: type[Exception] = _Never


@dataclass(frozen=True)
class Failure:
    """The call that failed: who, on which model, under which per-call timeout."""

    provider: str
    model: str
    timeout_s: float | None


Row = tuple[type[BaseException], Callable[[Exception, Failure, SdkErrors], ProviderError]]


def _same(error: Exception, failure: Failure, sdk: SdkErrors) -> ProviderError:
    assert isinstance(error, ProviderError)
    return error


def _timed_out(error: Exception, failure: Failure, sdk: SdkErrors) -> ProviderError:
    return ProviderTimeout(
        silence_message(failure.provider, failure.model, failure.timeout_s), provider=failure.provider
    )


def _no_connection(error: Exception, failure: Failure, sdk: SdkErrors) -> ProviderError:
    request = getattr(error, "request", None)
    url = getattr(request, "url", None)
    where = f"{url.scheme}://{url.host}" + (f":{url.port}" if url.port else "") if url is not None else "the server"
    return ProviderUnreachable(f"{failure.provider}: cannot connect to {where}", provider=failure.provider)


def _unexpected_shape(error: Exception, failure: Failure, sdk: SdkErrors) -> ProviderError:
    status = getattr(error, "status_code", None)
    return InvalidResponse(
        f"{failure.provider}: unexpected response shape ({status}) from model {failure.model}",
        provider=failure.provider,
        status_code=status,
    )


def _status(error: Exception, failure: Failure, sdk: SdkErrors) -> ProviderError:
    details = sdk.status_details(error)
    response = getattr(error, "response", None)
    return error_for_status(
        failure.provider,
        int(getattr(error, "status_code", 0)),
        model=failure.model,
        message=details.message,
        code=details.code,
        headers=getattr(response, "headers", None),
        window=details.window,
        prompt_tokens=details.prompt_tokens,
    )


def _stream_error(error: Exception, failure: Failure, sdk: SdkErrors) -> ProviderError:
    return ProviderUnavailable(
        f"{failure.provider}: the stream reported an error on model {failure.model}",
        provider=failure.provider,
        detail=str(getattr(error, "message", error)),
    )


def _broke_off(error: Exception, failure: Failure, sdk: SdkErrors) -> ProviderError:
    return ProviderUnavailable(
        f"{failure.provider}: the connection broke off during a reply of {failure.model}", provider=failure.provider
    )


def _no_credentials(error: Exception, failure: Failure, sdk: SdkErrors) -> ProviderError:
    return ProviderAuthError(f"{failure.provider}: no usable credentials: {error}", provider=failure.provider)


def _not_json(error: Exception, failure: Failure, sdk: SdkErrors) -> ProviderError:
    return InvalidResponse(
        f"{failure.provider}: malformed response from model {failure.model} (not valid JSON)", provider=failure.provider
    )


def table(sdk: SdkErrors) -> list[Row]:
    """The rows in the order they are tried (a timeout is a kind of connection error in both SDKs: first)."""
    return [
        (ProviderError, _same),
        (sdk.timeout, _timed_out),
        (sdk.connection, _no_connection),
        (sdk.response_validation, _unexpected_shape),
        (sdk.status, _status),
        (sdk.stream, _stream_error),
        (httpx2.TimeoutException, _timed_out),  # raised as is by an SDK while a stream is read
        (httpx2.TransportError, _broke_off),
        (sdk.credentials, _no_credentials),
        (ValueError, _not_json),
    ]


def translate(
    error: Exception, sdk: SdkErrors, *, provider: str, model: str, timeout_s: float | None = None
) -> ProviderError:
    """The :mod:`dialectic.core.errors` exception for an SDK failure: the first row of :func:`table` that
    matches; anything else is a plain :class:`ProviderError` with the SDK's words."""
    failure = Failure(provider, model, timeout_s)
    for kind, make in table(sdk):
        if isinstance(error, kind):
            return make(error, failure, sdk)
    return ProviderError(f"{provider}: {error}", provider=provider)
