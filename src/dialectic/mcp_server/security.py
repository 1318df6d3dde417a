"""Who may use the MCP server over HTTP: the address it binds to, and the token.

* The server binds to 127.0.0.1 unless told otherwise; any other address needs a token
  (``--token`` or ``DIALECTIC_TOKEN``, 16 characters or more), without which it refuses to start.
* With a token, every HTTP request must carry ``Authorization: Bearer TOKEN`` (compared in
  constant time), else 401.

The binding rules are ``dialectic serve``'s (:mod:`dialectic.core.binding`); nothing here needs
the MCP SDK.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BearerGuard:
    """ASGI middleware: with a token, a request without ``Authorization: Bearer TOKEN`` gets 401.

    It also runs ``on_shutdown`` when the server shuts down (the ASGI lifespan), before the app's own
    shutdown: the debates are cancelled and saved while the event loop still runs."""

    def __init__(self, app: ASGIApp, token: str | None, on_shutdown: Callable[[], Awaitable[None]]) -> None:
        self.app = app
        self.token = token.encode("utf-8") if token else None
        self.on_shutdown = on_shutdown

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, self._lifespan(receive), send)
            return
        if scope["type"] == "http" and self.token is not None and not self._authorized(scope):
            await _unauthorized(send)
            return
        await self.app(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        assert self.token is not None
        for name, value in scope.get("headers", []):
            if name.lower() == b"authorization":
                scheme, _, supplied = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(supplied.strip(), self.token)
        return False

    def _lifespan(self, receive: Receive) -> Receive:
        async def received() -> Message:
            message = await receive()
            if message["type"] == "lifespan.shutdown":
                await self.on_shutdown()
            return message

        return received


async def _unauthorized(send: Send) -> None:
    body = b'{"error": "unauthorized: send the server\'s token as Authorization: Bearer TOKEN"}'
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode("ascii")),
                (b"www-authenticate", b"Bearer"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
