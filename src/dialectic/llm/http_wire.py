"""Our own HTTP wire to the hosted APIs: JSON over httpx, with the failure families the error table reads.

The ``openai`` and ``anthropic`` SDKs were carried for their transport alone (the adapters already
read replies and streamed events as raw JSON): importing them took most of a debate's start-up
(``import anthropic`` alone above a second on a small machine). This module is that transport:
one pooled :class:`httpx2.AsyncClient` per provider with its base URL, its headers and an explicit
inactivity timeout (:mod:`dialectic.llm.timeouts`), the wire-timing hooks
(:mod:`dialectic.llm.wire_timing`), and no retries (:mod:`dialectic.llm.retry` does those).

Failures come out as the same families the SDKs raised, so :mod:`dialectic.llm.provider_errors`
keeps one table for both adapters: a timeout while sending (:class:`WireTimeout`), a connection
that failed (:class:`WireConnectionError`), a status code (:class:`WireStatusError`, with the body
parsed as JSON when it is), an error reported inside a stream (:class:`WireError`). A network error
met while a stream is read goes through as httpx's own, as the SDKs let it.
"""

from __future__ import annotations

import asyncio
import json

import httpx2

from dialectic.core.json_values import JsonObject
from dialectic.llm.timeouts import http_timeout_parts
from dialectic.llm.wire_timing import EVENT_HOOKS

JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "dialectic"}
LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
"""The SDKs' own pool limits: a busy ``dialectic serve`` runs many calls on one endpoint at once."""
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def plain_loopback(url: httpx2.URL) -> bool:
    """Whether ``url`` is plain HTTP on this machine (a llama-server, a local vLLM): no TLS is spoken there,
    so the client skips loading the certificate store (a tenth of a debate's start-up); it then follows
    no redirects either, so nothing can lead it to an unverified HTTPS host."""
    return url.scheme == "http" and url.host in LOOPBACK_HOSTS


class WireError(Exception):
    """A failure of an API call; raised as is for an error event inside a stream."""

    def __init__(self, message: str, request: httpx2.Request | None = None, *, body: object | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.request = request
        self.body = body


class WireConnectionError(WireError):
    """The request could not be sent or its reply's headers never came (refused, reset, DNS)."""


class WireTimeout(WireConnectionError):
    """No answer within the call's inactivity timeout."""


class WireShapeError(WireError):
    """A reply of a shape the adapter cannot use (kept for the table's family; adapters raise their own)."""


class WireStatusError(WireError):
    """The server answered with an error status; ``body`` is its JSON (or its text when not JSON)."""

    def __init__(self, message: str, *, response: httpx2.Response, body: object | None) -> None:
        super().__init__(message, response.request, body=body)
        self.response = response
        self.status_code = response.status_code


def http_timeout(seconds: float | None) -> httpx2.Timeout:
    """An explicit httpx timeout: ``read`` applies to every read, so a stream times out on inactivity."""
    return httpx2.Timeout(**http_timeout_parts(seconds))


def error_body(response: httpx2.Response) -> object | None:
    """An error reply's body: its JSON when it is JSON, else its text (``None`` when empty)."""
    text = response.text
    if not text.strip():
        return None
    try:
        body: object = json.loads(text)
    except ValueError:
        return text
    return body


class JsonWire:
    """POSTs JSON to one API's base URL and hands back the raw :class:`httpx2.Response`."""

    def __init__(self, base_url: str, headers: dict[str, str], timeout_s: float | None) -> None:
        self.base_url = httpx2.URL(base_url.rstrip("/") + "/")
        self.timeout = http_timeout(timeout_s)
        self._headers = {**JSON_HEADERS, **headers}
        self._client = self._new_client()
        self._loop: asyncio.AbstractEventLoop | None = None

    def _new_client(self) -> httpx2.AsyncClient:
        local = plain_loopback(self.base_url)
        return httpx2.AsyncClient(
            base_url=self.base_url,
            headers=self._headers,
            timeout=self.timeout,
            limits=LIMITS,
            verify=not local,
            follow_redirects=not local,  # elsewhere as the SDKs' clients do
            event_hooks=EVENT_HOOKS,
        )

    def _on_this_loop(self) -> httpx2.AsyncClient:
        """The client for the running event loop.

        A pooled connection belongs to the loop that opened it: a program that runs two debates one after
        the other with ``asyncio.run`` on one engine (a resume after a stop, say) would otherwise send on
        a connection of a closed loop ("Event loop is closed"). The old client is dropped, not closed:
        its loop is gone, so there is nothing left to close it on."""
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        elif self._loop is not loop:
            self._loop, self._client = loop, self._new_client()
        return self._client

    async def post(
        self, path: str, body: JsonObject, *, timeout_s: float | None = None, stream: bool = False
    ) -> httpx2.Response:
        """POST ``body`` to ``path`` (relative to the base URL); an error status raises :class:`WireStatusError`.

        With ``stream`` the body is left unread: the caller reads its lines and closes it."""
        content = json.dumps(body, ensure_ascii=False).encode()
        timeout = http_timeout(timeout_s) if timeout_s is not None else self.timeout
        request = self._on_this_loop().build_request("POST", path.lstrip("/"), content=content, timeout=timeout)
        return await self._send(request, stream=stream)

    async def get(self, url: str, *, timeout_s: float | None = None) -> httpx2.Response:
        """GET ``url`` (absolute, or relative to the base URL) with the client's headers."""
        timeout = http_timeout(timeout_s) if timeout_s is not None else self.timeout
        request = self._on_this_loop().build_request("GET", url if "://" in url else url.lstrip("/"), timeout=timeout)
        return await self._send(request, stream=False)

    async def _send(self, request: httpx2.Request, *, stream: bool) -> httpx2.Response:
        try:
            response = await self._client.send(request, stream=stream)
        except httpx2.TimeoutException as error:
            raise WireTimeout("Request timed out.", request) from error
        except httpx2.TransportError as error:
            raise WireConnectionError("Connection error.", request) from error
        if response.status_code >= 400:
            if stream:
                try:
                    await response.aread()
                finally:
                    await response.aclose()
            body = error_body(response)
            raise WireStatusError(f"Error code: {response.status_code}", response=response, body=body)
        return response

    async def aclose(self) -> None:
        await self._client.aclose()
