"""Who may use the server over HTTP: the bind check, the bearer token, the host check, the shutdown hook."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dialectic.mcp_server.security import BearerGuard

TOKEN = "a-token-of-enough-characters"


def answered(guard: BearerGuard, headers: list[tuple[bytes, bytes]]) -> tuple[int, list[str]]:
    """The status ``guard`` answers an HTTP request with, and what reached the app behind it."""
    reached: list[str] = []
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": []})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: Any) -> None:
        sent.append(message)

    guard.app = app
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
    asyncio.run(guard(scope, receive, send))
    return sent[0]["status"], reached


async def nothing() -> None:
    return None


def test_with_a_token_only_a_request_bearing_it_passes() -> None:
    guard = BearerGuard(lambda *a: nothing(), TOKEN, nothing)
    assert answered(guard, [(b"authorization", f"Bearer {TOKEN}".encode())]) == (200, ["/mcp"])
    assert answered(guard, [(b"Authorization", f"bearer  {TOKEN}".encode())]) == (200, ["/mcp"])
    for refused in ([], [(b"authorization", b"Bearer wrong")], [(b"authorization", TOKEN.encode())]):
        assert answered(guard, refused) == (401, [])
    assert answered(BearerGuard(lambda *a: nothing(), None, nothing), []) == (200, ["/mcp"])


def test_the_server_shutting_down_runs_the_hook_before_the_app_hears_of_it() -> None:
    order: list[str] = []

    async def hook() -> None:
        order.append("hook")

    async def app(scope: Any, receive: Any, send: Any) -> None:
        order.append((await receive())["type"])

    async def receive() -> dict[str, Any]:
        return {"type": "lifespan.shutdown"}

    async def send(message: Any) -> None:
        return None

    asyncio.run(BearerGuard(app, TOKEN, hook)({"type": "lifespan"}, receive, send))
    assert order == ["hook", "lifespan.shutdown"]


def test_the_host_check_is_on_for_a_loopback_address_only() -> None:
    pytest.importorskip("mcp", reason="the MCP server needs the 'mcp' extra")
    from dialectic.mcp_server.transports import transport_security

    loopback = transport_security("127.0.0.1")
    assert loopback.enable_dns_rebinding_protection and "localhost:*" in loopback.allowed_hosts
    assert "evil.example:*" not in loopback.allowed_hosts
    assert not transport_security("0.0.0.0").enable_dns_rebinding_protection
