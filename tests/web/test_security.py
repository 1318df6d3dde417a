"""Security: the token (on and off), the host and origin checks, the body limit, sanitised Markdown, no secret out."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx2 as httpx
import pytest

from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import ScriptedProvider, default_reply
from dialectic.web.app import create_app
from dialectic.web.errors import ApiError, ErrorScrubber
from dialectic.web.markdown import render_markdown
from dialectic.web.security import SESSION_COOKIE, TokenCheck
from dialectic.web.state import ServeSettings
from tests.web.conftest import BASE_URL, Api

TOKEN = "a-long-enough-test-token-0123"


def test_with_a_token_every_api_call_and_the_stream_need_it(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        bare = await api.client.get("/api/health")
        assert bare.status_code == 401 and bare.json()["error"] == "unauthorized"
        assert bare.headers["www-authenticate"] == "Bearer"
        wrong = await api.client.get("/api/health", headers={"Authorization": "Bearer not-the-token-at-all"})
        assert wrong.status_code == 401
        right = {"Authorization": f"Bearer {TOKEN}"}
        assert (await api.client.get("/api/health", headers=right)).json()["auth"] is True
        created = await api.client.post("/api/debates", json={"problem": "Design a cache"}, headers=right)
        assert created.status_code == 201
        debate_id = created.json()["id"]
        assert (await api.client.post("/api/debates", json={"problem": "Design a cache"})).status_code == 401
        await api.finished(debate_id)
        assert (await api.client.get(f"/api/debates/{debate_id}/events")).status_code == 401
        for path in ("", "/export", "/report"):
            assert (await api.client.get(f"/api/debates/{debate_id}{path}")).status_code == 401
        assert (await api.client.get("/api/debates")).status_code == 401
        assert (await api.client.get("/")).status_code == 200  # the page itself holds no data

    serve(scenario, settings=ServeSettings(token=TOKEN))


def test_the_page_signs_in_for_a_cookie_that_opens_the_api_and_the_stream(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        refused = await api.client.post("/api/session", json={"token": "nope"})
        assert refused.status_code == 401 and "set-cookie" not in refused.headers
        signed = await api.client.post("/api/session", json={"token": TOKEN})
        assert signed.status_code == 204
        cookie = signed.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/api" in cookie
        assert (await api.client.get("/api/health")).status_code == 200  # the client keeps the cookie
        debate_id = await api.start()
        await api.finished(debate_id)
        assert (await api.events(debate_id))[-1].event == "end"

    serve(scenario, settings=ServeSettings(token=TOKEN))


def test_without_a_token_the_api_is_open_on_loopback(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        assert (await api.client.get("/api/health")).status_code == 200
        assert (await api.client.post("/api/session", json={"token": "anything"})).status_code == 204

    serve(scenario)


def test_a_request_addressed_to_another_host_is_refused_on_loopback(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        rebound = await api.client.get("/api/health", headers={"Host": "attacker.example:8000"})
        assert rebound.status_code == 400 and rebound.json()["error"] == "bad_host"
        assert (await api.client.get("/api/health", headers={"Host": "localhost:8000"})).status_code == 200

    serve(scenario)


def test_a_state_change_from_another_origin_is_refused_unless_allowed(serve: Callable[..., None]) -> None:
    allowed = "https://dashboard.example"

    async def scenario(api: Api) -> None:
        foreign = await api.client.post(
            "/api/debates", json={"problem": "Design a cache"}, headers={"Origin": "https://evil.example"}
        )
        assert foreign.status_code == 403 and foreign.json()["error"] == "forbidden"
        opaque = await api.client.post("/api/debates", json={"problem": "x"}, headers={"Origin": "null"})
        assert opaque.status_code == 403
        assert len(api.ctx.store.list()) == 0
        own = {"Origin": "http://127.0.0.1:8000"}
        same = await api.client.post("/api/debates", json={"problem": "Design a cache"}, headers=own)
        assert same.status_code == 201
        cors = await api.client.post("/api/debates", json={"problem": "Design a cache"}, headers={"Origin": allowed})
        assert cors.status_code == 201 and cors.headers["access-control-allow-origin"] == allowed
        read = await api.client.get("/api/health", headers={"Origin": "https://evil.example"})
        assert read.status_code == 200 and "access-control-allow-origin" not in read.headers

    serve(scenario, settings=ServeSettings(cors_origins=(allowed,)))


def test_no_cors_unless_asked(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        preflight = await api.client.options(
            "/api/debates", headers={"Origin": "https://a.example", "Access-Control-Request-Method": "POST"}
        )
        assert "access-control-allow-origin" not in preflight.headers

    serve(scenario)


def test_a_body_over_the_limit_is_refused_with_413(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        big = await api.client.post("/api/debates", json={"problem": "x" * 5000})
        assert big.status_code == 413 and big.json()["error"] == "too_large"
        assert "2,048 bytes" in big.json()["detail"]

        async def chunks():  # no Content-Length: counted as it arrives
            for _ in range(5):
                yield b"x" * 1000

        streamed = await api.client.post("/api/debates", content=chunks(), headers={"content-type": "application/json"})
        assert streamed.status_code == 413
        assert len(api.ctx.store.list()) == 0

    serve(scenario, settings=ServeSettings(max_body_bytes=2048))


def test_a_script_in_a_models_reply_is_shown_as_text(serve: Callable[..., None]) -> None:
    hostile = '<script>alert("owned")</script> **bold** [click](javascript:alert(1)) <img src=x onerror=alert(2)>'

    def respond(request: CompletionRequest) -> str | object:
        return default_reply(request) if request.json_schema is not None else hostile

    async def scenario(api: Api) -> None:
        debate_id = await api.start()
        await api.finished(debate_id)
        events = await api.events(debate_id)
        html = next(e.data["contribution"]["contentHtml"] for e in events if e.event == "contribution_recorded")
        assert "&lt;script&gt;" in html and "<script" not in html
        assert "<strong>bold</strong>" in html and 'href="javascript' not in html and "<img" not in html

    serve(scenario, provider=ScriptedProvider(respond))  # type: ignore[arg-type]


def test_markdown_keeps_what_markdown_makes_and_drops_the_rest() -> None:
    html = render_markdown(
        "# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[docs](https://example.org) `code`\n\n![x](http://t/p.png)"
    )
    assert "<h1>Title</h1>" in html and "<table>" in html and "<code>code</code>" in html
    assert 'href="https://example.org"' in html and 'rel="noopener noreferrer nofollow"' in html
    assert "<img" not in html


def test_no_response_carries_a_key_or_the_token(serve: Callable[..., None], monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-live-0123456789abcdefSECRET"
    monkeypatch.setenv("OPENAI_API_KEY", key)

    def leaky(request: CompletionRequest) -> str | object:
        if request.json_schema is not None:
            return default_reply(request)
        return f"the key is {key} and the token is {TOKEN}"

    async def scenario(api: Api) -> None:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        created = await api.client.post("/api/debates", json={"problem": "Design a cache"}, headers=auth)
        debate_id = created.json()["id"]
        await api.finished(debate_id)
        bodies = [
            (await api.client.get(f"/api/debates/{debate_id}{path}", headers=auth)).text
            for path in ("", "/events", "/export", "/report")
        ]
        bodies.append((await api.client.get("/api/debates", headers=auth)).text)
        for body in bodies:
            assert key not in body and TOKEN not in body
        assert "[redacted]" in bodies[0]

    serve(scenario, settings=ServeSettings(token=TOKEN), provider=ScriptedProvider(leaky))  # type: ignore[arg-type]


def test_the_session_cookie_holds_a_keyed_hash_not_the_token(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        signed = await api.client.post("/api/session", json={"token": TOKEN})
        cookie = signed.headers["set-cookie"]
        assert TOKEN not in cookie and cookie.startswith(f"{SESSION_COOKIE}=")
        value = api.client.cookies[SESSION_COOKIE]
        assert len(value) == 64 and value == api.ctx.token.session()
        assert (await api.client.get("/api/health")).status_code == 200
        api.client.cookies.clear()
        other_process = TokenCheck(TOKEN).session()  # another key: a cookie of an earlier server run
        for forged in (TOKEN, value[:-1] + ("0" if value[-1] != "0" else "1"), other_process, "²", ""):
            cookie = f"{SESSION_COOKIE}={forged}".encode("latin-1")
            assert (await api.client.get("/api/health", headers={"Cookie": cookie})).status_code == 401, forged
        assert (await api.client.get("/api/health", headers={"Cookie": f"{SESSION_COOKIE}={value}"})).status_code == 200

    serve(scenario, settings=ServeSettings(token=TOKEN))


def test_a_404_names_no_path_of_the_server(serve: Callable[..., None], tmp_path: Path) -> None:
    async def scenario(api: Api) -> None:
        for path in ("", "/events", "/export", "/report", "/pause", "/resume", "/cancel"):
            method = "POST" if path in ("/pause", "/resume", "/cancel") else "GET"
            missing = await api.client.request(method, f"/api/debates/deb-nope{path}")
            assert missing.status_code == 404, path
            detail = missing.json()["detail"]
            assert detail == "no debate with id 'deb-nope' in the server's debate store", detail
            assert str(tmp_path) not in missing.text

    serve(scenario)


def test_an_absolute_path_in_any_error_is_hidden_and_it_stays_on_one_line() -> None:
    public = ErrorScrubber({"/srv/dialectic/debates.sqlite3": "the server's debate store", "/": "never"})
    error = ApiError(
        503,
        "store_unavailable",
        "cannot read the debate store /srv/dialectic/debates.sqlite3: disk I/O error; see /var/log/x.log.",
        {"config": "prompt file '/etc/dialectic/p.md' not found (C:\\Users\\me\\p.md)"},
    )
    shown = public(error)
    assert shown.detail == "cannot read the debate store the server's debate store: disk I/O error; see [server path]."
    assert shown.fields == {"config": "prompt file '[server path]' not found ([server path])"}
    kept = "use https://example.org/v1/x or a/b, 1/2 and I/O"
    assert public.text(kept) == kept
    assert public.text("no debate with id 'a\nb\r\nc'") == "no debate with id 'a b c'"


def test_every_response_carries_nosniff(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        debate_id = await api.start()
        await api.finished(debate_id)
        responses = [
            await api.client.get(path)
            for path in (
                "/",
                "/static/app.js",
                "/api/health",
                "/api/debates",
                f"/api/debates/{debate_id}",
                f"/api/debates/{debate_id}/events",
                f"/api/debates/{debate_id}/export",
                f"/api/debates/{debate_id}/report",
                "/api/debates/deb-nope",
                "/api/nothing-here",
                "/openapi.json",
            )
        ]
        responses.append(await api.client.get("/api/health", headers={"Host": "attacker.example"}))  # the guard's 400
        responses.append(await api.client.post("/api/debates", json={"problem": "x" * 5000}))  # the guard's 413
        responses.append(
            await api.client.post("/api/debates", content=b"{", headers={"content-type": "application/json"})
        )
        for response in responses:
            assert response.headers.get_list("x-content-type-options") == ["nosniff"], response.request.url

    serve(scenario, settings=ServeSettings(max_body_bytes=2048))


def test_an_unexpected_error_is_a_500_with_nosniff(serve: Callable[..., None], monkeypatch: pytest.MonkeyPatch) -> None:
    """A 500 is answered outside the middleware (by Starlette's outermost layer): the error carries the header."""

    def broken(*args: object) -> None:
        raise RuntimeError("boom at /srv/secret/place")

    async def scenario(api: Api) -> None:
        monkeypatch.setattr(api.ctx.store, "page", broken)
        transport = httpx.ASGITransport(app=create_app(api.ctx), raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            response = await client.get("/api/debates")
        assert response.status_code == 500 and response.headers["x-content-type-options"] == "nosniff"
        assert "/srv" not in response.text

    serve(scenario)
