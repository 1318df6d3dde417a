"""One line per request served: ``GET /api/health 200 3 ms``.

``dialectic serve`` writes them on stderr (its stdout carries only the "Serving on" line). The
path is logged without its query string, and nothing of the headers or the body: a token or a
problem's text never reaches the log. A request the client leaves before its answer ends (an
event stream closed by the page) is logged with the status it was answered with, when it ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send


def request_line(method: str, path: str, status: int | None, elapsed_s: float) -> str:
    """The line of one request; ``-`` for a status never sent (the app failed before answering)."""
    return f"{method} {path} {status if status is not None else '-'} {round(elapsed_s * 1000)} ms"


class RequestLog:
    """ASGI middleware that hands :func:`request_line` of every HTTP request to ``write`` once it ends."""

    def __init__(
        self, app: ASGIApp, *, write: Callable[[str], None], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.app = app
        self.write = write
        self.clock = clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = self.clock()
        status: int | None = None
        written = False

        def log() -> None:
            nonlocal written
            if not written:
                written = True
                method, path = str(scope.get("method", "")), str(scope.get("path", ""))
                self.write(request_line(method, path, status, self.clock() - started))

        async def noted_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                log()  # the answer is complete: logged now, not when the app's call returns

        try:
            await self.app(scope, receive, noted_send)
        except Exception:
            status = status or 500  # answered so by the server-error middleware, outside this one
            raise
        finally:
            log()
