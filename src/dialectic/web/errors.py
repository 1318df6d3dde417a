"""Errors as the API answers them: JSON ``{error, detail}`` with the right status, never a traceback.

``error`` is a short code a program can test, ``detail`` the one-line message a person reads
(the CLI's own message wherever the CLI has one); a validation error also names the fields
it is about (``fields``: field → message), so the page can show each message by its field.

The CLI's messages name files (``no debate with id 'x' in /home/me/.dialectic/debates.sqlite3``):
useful in a terminal, a leak over the network. Every error leaves through
:class:`ErrorScrubber`, which names the server's own locations in words, replaces any other
absolute path with ``[server path]``, and keeps it on one line (a debate id from the URL may
hold a line break).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from dialectic.core.errors import (
    ConfigError,
    DebateBusyError,
    DebateNotFoundError,
    DebateStateError,
    DialecticError,
    InvalidArgumentsError,
    MissingApiKeyError,
    ProviderError,
    StoreError,
)
from dialectic.loading.config import field_path
from dialectic.loading.keys import UNKNOWN_KEY_ERROR, unknown_key_message

log = logging.getLogger(__name__)


class ApiError(Exception):
    """An answer other than success, raised by the API's handlers."""

    def __init__(
        self,
        status: int,
        error: str,
        detail: str,
        fields: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.error = error
        self.detail = detail
        self.fields = fields or {}
        self.headers = headers or {}


def field_error(field: str, exc: DialecticError) -> ApiError:
    """A validation failure of one field of a request, with the message the CLI gives for it."""
    return ApiError(422, "invalid_request", exc.message, {field: exc.message})


def fields_error(fields: dict[str, str]) -> ApiError:
    first = next(iter(fields.values()))
    return ApiError(422, "invalid_request", first, fields)


STATUS_OF: tuple[tuple[type[DialecticError], int, str], ...] = (
    (DebateNotFoundError, 404, "not_found"),
    (DebateBusyError, 409, "busy"),
    (DebateStateError, 409, "conflict"),
    (MissingApiKeyError, 503, "provider_unavailable"),
    (InvalidArgumentsError, 422, "invalid_request"),
    (ConfigError, 422, "invalid_config"),
    (StoreError, 503, "store_unavailable"),
    (ProviderError, 503, "provider_unavailable"),
)
"""The first entry ``exc`` is an instance of decides (subclasses come before their bases)."""


def api_error_for(exc: DialecticError) -> ApiError:
    for kind, status, code in STATUS_OF:
        if isinstance(exc, kind):
            return ApiError(status, code, exc.message)
    return ApiError(500, "internal", exc.message)


NOSNIFF = {"X-Content-Type-Options": "nosniff"}
"""On every response (:class:`~dialectic.web.security.RequestGuard` adds it); an error carries it
itself, since a 500 is answered outside the middleware."""


OPENAI_PREFIX = "/v1/"
"""The OpenAI-compatible API's paths (:mod:`dialectic.web.openai_api`): their errors take OpenAI's shape."""
OPENAI_TYPES = {401: "authentication_error", 403: "permission_error", 404: "not_found_error", 429: "rate_limit_error"}


def speaks_openai(path: str) -> bool:
    """Whether a request to ``path`` is answered in OpenAI's shapes (errors included)."""
    return path.startswith(OPENAI_PREFIX)


def error_response(error: ApiError, headers: Mapping[str, str] | None = None, *, openai: bool = False) -> JSONResponse:
    """``{error, detail, fields}``; with ``openai``, OpenAI's ``{"error": {message, type, param, code}}``
    (``param``: the first field named, ``code``: the short code a program tests)."""
    body: dict[str, Any]
    if openai:
        kind = OPENAI_TYPES.get(error.status, "invalid_request_error" if error.status < 500 else "server_error")
        param = next(iter(error.fields), None)
        body = {"error": {"message": error.detail, "type": kind, "param": param, "code": error.error}}
    else:
        body = {"error": error.error, "detail": error.detail}
        if error.fields:
            body["fields"] = error.fields
    return JSONResponse(body, status_code=error.status, headers={**NOSNIFF, **(headers or {})})


SERVER_PATH = re.compile(r"""(?<![\w.~:/\\-])(?:/|[A-Za-z]:\\)[^\s'"`,;:()<>\[\]]*[^\s'"`,;:()<>\[\].]""")
"""An absolute path (POSIX, or with a Windows drive) standing alone: not the ``/x`` of a URL or of ``a/b``."""
HIDDEN_PATH = "[server path]"


class ErrorScrubber:
    """An error as it may leave the server: on one line, its known locations named in words, other
    absolute paths hidden."""

    def __init__(self, known: Mapping[str, str] | None = None) -> None:
        places = {path: name for path, name in (known or {}).items() if len(path) > 1}  # never "/" alone
        self._known = sorted(places.items(), key=lambda item: len(item[0]), reverse=True)

    def text(self, text: str) -> str:
        for path, name in self._known:
            text = text.replace(path, name)
        return " ".join(SERVER_PATH.sub(HIDDEN_PATH, text).split())

    def __call__(self, error: ApiError) -> ApiError:
        fields = {name: self.text(message) for name, message in error.fields.items()}
        return ApiError(error.status, error.error, self.text(error.detail), fields, error.headers)


def install_error_handlers(app: FastAPI, server_paths: Mapping[str, str] | None = None) -> None:
    """Every failure, expected or not, leaves as ``{error, detail}``, naming no path of the server's.

    ``server_paths`` maps the server's own locations (its store, its configuration's directory) to
    the words an error says instead.
    """
    public = ErrorScrubber(server_paths)

    def answer(request: Request, error: ApiError, headers: Mapping[str, str] | None = None) -> JSONResponse:
        return error_response(public(error), headers=headers, openai=speaks_openai(request.url.path))

    @app.exception_handler(ApiError)
    async def _api(request: Request, exc: ApiError) -> JSONResponse:
        return answer(request, exc, exc.headers)

    @app.exception_handler(DialecticError)
    async def _dialectic(request: Request, exc: DialecticError) -> JSONResponse:
        return answer(request, api_error_for(exc))

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        return answer(request, validation_error(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return answer(request, ApiError(exc.status_code, code, str(exc.detail)), exc.headers)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        error = ApiError(500, "internal", "unexpected server error; the server's log has the details")
        return error_response(error, openai=speaks_openai(request.url.path))


def validation_error(exc: RequestValidationError) -> ApiError:
    """FastAPI's validation failure: 400 for a body that is not JSON, else 422 naming each field."""
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return ApiError(400, "bad_request", "the request body is not valid JSON")
    fields: dict[str, str] = {}
    for error in errors:
        location = [part for part in error.get("loc", ()) if part not in ("body", "query", "path", "header")]
        name = field_path(location) or "body"
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        if error.get("type") == UNKNOWN_KEY_ERROR:
            fields.setdefault(name, unknown_key_message(name, location, error.get("ctx")))
        else:
            fields.setdefault(name, f"{name}: {message}")
    return fields_error(fields)
