"""Who may use the server, and what a request may weigh.

* The server binds to 127.0.0.1 unless told otherwise; any other address needs a token
  (``--token`` or ``DIALECTIC_TOKEN``), and without one it refuses to start.
* With a token, every API call and the event stream must carry it: ``Authorization: Bearer``,
  or the session cookie the page gets from ``POST /api/session`` (an ``EventSource`` cannot send
  a header). The cookie holds not the token but its HMAC under a key drawn at random when the
  server starts: a cookie that leaks (a browser profile, a proxy's log) neither reveals the
  token nor outlives the server process. Both are compared in constant time.
* Without a token (loopback only), requests must name a loopback host, so a web page that
  points its own host name at 127.0.0.1 (DNS rebinding) cannot reach the API.
* A state-changing request sent by a browser from another origin is refused (403) unless that
  origin was allowed with ``--cors``; so is a body larger than the limit (413).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from fastapi import Request

from dialectic.core.binding import is_loopback
from dialectic.web.errors import NOSNIFF, ApiError, error_response, speaks_openai

SESSION_COOKIE = "dialectic_session"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class TokenCheck:
    """The API's dependency: a request passes with the token, or with the session cookie made from it
    (when the server has a token)."""

    def __init__(self, token: str | None) -> None:
        self._token = token.encode() if token else None
        self._session = (
            hmac.new(secrets.token_bytes(32), self._token, hashlib.sha256).hexdigest().encode() if self._token else None
        )

    @property
    def enabled(self) -> bool:
        return self._token is not None

    def matches(self, supplied: str | None) -> bool:
        """Whether ``supplied`` is the token (any string when the server has none)."""
        return self._token is None or _same(supplied, self._token)

    def session(self) -> str:
        """The session cookie's value: the token's HMAC under this process's random key."""
        if self._session is None:
            raise ValueError("a server without a token has no sessions")
        return self._session.decode("ascii")

    def __call__(self, request: Request) -> None:
        if self._token is None or self._session is None:
            return
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            passed = _same(header[7:].strip(), self._token)
        else:
            passed = _same(request.cookies.get(SESSION_COOKIE), self._session)
        if not passed:
            raise ApiError(
                401,
                "unauthorized",
                "this server needs its token: send 'Authorization: Bearer TOKEN', or sign in on the page",
                headers={"WWW-Authenticate": "Bearer"},
            )


def _same(supplied: str | None, expected: bytes) -> bool:
    """``supplied == expected`` in constant time; text that is not UTF-8 (a lone surrogate) never matches."""
    if supplied is None:
        return False
    return hmac.compare_digest(supplied.encode("utf-8", "surrogatepass"), expected)


class RequestGuard:
    """ASGI middleware: the host check, the body-size limit, no state change from a foreign origin,
    and the security headers (``nosniff`` on every response, the page's policy on the page)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_body_bytes: int,
        allowed_origins: tuple[str, ...],
        loopback_only: bool,
        page_headers: dict[str, str],
        api_paths: tuple[str, ...],
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.allowed_origins = frozenset(o.rstrip("/") for o in allowed_origins)
        self.loopback_only = loopback_only
        self.page_headers = _raw_headers(page_headers)
        self.api_paths = api_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        is_page = not str(scope.get("path", "")).startswith(self.api_paths)
        openai = speaks_openai(str(scope.get("path", "")))
        extra = [*ALWAYS_HEADERS, *(self.page_headers if is_page else [])]

        async def headed_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = _with_headers(message.get("headers", []), extra)
            await send(message)

        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await error_response(refusal, openai=openai)(scope, receive, headed_send)
            return
        refused = False
        received = 0

        async def guarded_send(message: Message) -> None:
            if refused:
                return  # the 413 went out instead of whatever the app answers
            await headed_send(message)

        async def counted_receive() -> Message:
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request" and not refused:
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    await error_response(self._too_large(), openai=openai)(scope, receive, headed_send)
                    refused = True
                    return {"type": "http.disconnect"}
            return message

        await self.app(scope, counted_receive, guarded_send)

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> ApiError | None:
        if self.loopback_only and not is_loopback(_host_name(headers.get("host", ""))):
            return ApiError(400, "bad_host", "this server answers only requests addressed to a loopback host")
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body_bytes:
            return self._too_large()
        if scope["method"] in SAFE_METHODS:
            return None
        origin = headers.get("origin")
        if origin and origin != "null" and origin.rstrip("/") not in self.allowed_origins:
            if urlsplit(origin).netloc.lower() != headers.get("host", "").lower():
                return ApiError(403, "forbidden", f"requests from {origin} are not allowed (see --cors)")
        elif origin == "null":
            return ApiError(403, "forbidden", "requests from an opaque origin are not allowed")
        return None

    def _too_large(self) -> ApiError:
        return ApiError(
            413,
            "too_large",
            f"the request body is larger than the limit of {self.max_body_bytes:,} bytes (dialectic serve --max-body)",
        )


def _raw_headers(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]


def _with_headers(present: list[tuple[bytes, bytes]], extra: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``present`` plus each of ``extra`` whose name is not there yet (an error response has ``nosniff``)."""
    names = {name.lower() for name, _ in present}
    return [*present, *(header for header in extra if header[0] not in names)]


def _host_name(host: str) -> str:
    """The name in a ``Host`` header, without its port (``[::1]:8000`` → ``::1``)."""
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
"""Sent with the page and its files: only the server's own scripts run, even if HTML got in."""
ALWAYS_HEADERS = _raw_headers(NOSNIFF)
"""Sent with every response (JSON, the page, downloads, the event stream, errors): no content sniffing."""
