"""Serving the MCP server: over stdio, or over streamable HTTP behind a token and a host check.

Over HTTP, as for ``dialectic serve``:

* the server binds to 127.0.0.1 unless told otherwise, and any other address needs a token
  (16 characters or more), without which it refuses to start;
* with a token, every request must carry ``Authorization: Bearer TOKEN`` (compared in constant
  time), else 401;
* on a loopback address, requests must name a loopback host (the SDK's DNS-rebinding guard,
  421 otherwise) and a browser's cross-origin request is refused (403), token or not.

When the server stops (a signal, stdin closed), the debates it runs are cancelled and saved as
``interrupted``: ``dialectic resume`` goes on with them.
"""

from __future__ import annotations

import socket

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from dialectic.core.binding import is_loopback
from dialectic.mcp_server.security import ASGIApp, BearerGuard
from dialectic.mcp_server.server import DebateService

MCP_PATH = "/mcp"


def transport_security(host: str) -> TransportSecuritySettings:
    """The SDK's Host and Origin checks: only loopback names on a loopback address (none elsewhere:
    the token guards it, and the names the server is reached by are not known here)."""
    if not is_loopback(host):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names = ("127.0.0.1", "localhost", "[::1]")
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[pattern for name in names for pattern in (name, f"{name}:*")],
        allowed_origins=[pattern for name in names for pattern in (f"http://{name}", f"http://{name}:*")],
    )


async def serve_stdio(server: MCPServer, service: DebateService) -> None:
    """Serve on stdin and stdout until stdin closes."""
    try:
        await server.run_stdio_async()
    finally:
        await service.close()


def http_app(server: MCPServer, service: DebateService, *, host: str, token: str | None) -> ASGIApp:
    """The ASGI app serving ``server`` at ``/mcp`` (streamable HTTP), behind the token."""
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=transport_security(host))
    return BearerGuard(app, token, service.close)


async def serve_http(server: MCPServer, service: DebateService, sock: socket.socket, *, token: str | None) -> None:
    """Serve streamable HTTP on the listening ``sock`` until a signal stops the server."""
    import uvicorn

    host = sock.getsockname()[0]
    app = http_app(server, service, host=host, token=token)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=5)
    try:
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        await service.close()  # a second time does nothing; this one covers a start that failed
