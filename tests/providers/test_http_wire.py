"""The wire's transport: JSON out, raw responses back, and failures in the families the error table reads."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import httpx2
import pytest

from dialectic.core.json_values import JsonObject
from dialectic.llm.http_wire import JsonWire, WireConnectionError, WireStatusError, WireTimeout, plain_loopback
from dialectic.testing.fake_server import FakeLLMServer

Handler = Callable[[httpx2.Request], httpx2.Response]


def wire_with(handler: Handler) -> JsonWire:
    wire = JsonWire("http://127.0.0.1:9/v1", {"Authorization": "Bearer k"}, 5.0)
    wire._client = httpx2.AsyncClient(
        base_url=wire.base_url, headers=dict(wire._client.headers), transport=httpx2.MockTransport(handler)
    )
    return wire


def post(wire: JsonWire, stream: bool = False) -> httpx2.Response:
    async def scenario() -> httpx2.Response:
        try:
            return await wire.post("/chat/completions", {"model": "m", "text": "é"}, stream=stream)
        finally:
            await wire.aclose()

    return asyncio.run(scenario())


def test_a_post_goes_to_the_base_urls_path_as_json_with_the_headers() -> None:
    seen: list[httpx2.Request] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json={"ok": True})

    assert post(wire_with(answer)).json() == {"ok": True}
    (request,) = seen
    assert str(request.url) == "http://127.0.0.1:9/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer k" and request.headers["content-type"] == "application/json"
    assert json.loads(request.content) == {"model": "m", "text": "é"}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("content", "body"),
    [
        (b'{"error": {"message": "slow down"}}', {"error": {"message": "slow down"}}),
        (b"overloaded", "overloaded"),
        (b"", None),
    ],
)
def test_an_error_status_raises_with_the_body_read(stream: bool, content: bytes, body: object) -> None:
    wire = wire_with(lambda request: httpx2.Response(429, content=content, headers={"retry-after": "2"}))
    with pytest.raises(WireStatusError) as raised:
        post(wire, stream)
    assert raised.value.status_code == 429 and raised.value.body == body
    assert raised.value.response.headers["retry-after"] == "2"


@pytest.mark.parametrize(
    ("error", "family"),
    [(httpx2.ConnectError("refused"), WireConnectionError), (httpx2.ReadTimeout("slow"), WireTimeout)],
)
def test_a_transport_failure_is_a_connection_error_or_a_timeout(error: Exception, family: type) -> None:
    def fail(request: httpx2.Request) -> httpx2.Response:
        raise error

    with pytest.raises(family) as raised:
        post(wire_with(fail))
    assert raised.value.request is not None and raised.value.request.url.port == 9


@pytest.mark.parametrize(
    ("base_url", "plain"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://localhost:8080/v1", True),
        ("http://[::1]:8080/v1", True),
        ("https://127.0.0.1:8080/v1", False),
        ("http://10.0.0.5:8080/v1", False),
        ("https://api.openai.com/v1", False),
    ],
)
def test_only_plain_http_on_this_machine_skips_tls_and_redirects(base_url: str, plain: bool) -> None:
    """The certificate store is not loaded for a local plain-HTTP server, which then follows no redirect;
    anywhere else the client verifies TLS and follows redirects as the SDKs do."""
    wire = JsonWire(base_url, {}, 5.0)
    try:
        assert plain_loopback(wire.base_url) is plain
        assert wire._client.follow_redirects is not plain
    finally:
        asyncio.run(wire.aclose())


def test_one_wire_serves_two_event_loops_one_after_the_other() -> None:
    """A program that runs ``asyncio.run`` twice on one engine (a resume after a stop) gets a fresh pool on the
    second loop: a kept-alive connection of the first, closed loop is never sent on."""
    with FakeLLMServer(lambda call: "fine") as fake:
        wire = JsonWire(fake.openai_base_url, {"Authorization": "Bearer k"}, 5.0)
        body: JsonObject = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}

        async def once() -> int:
            return (await wire.post("chat/completions", body)).status_code

        assert asyncio.run(once()) == 200
        assert asyncio.run(once()) == 200
        assert fake.call_count == 2
