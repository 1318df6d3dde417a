"""``serve``'s request log: one line per request, refusals included, without query strings."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import httpx2 as httpx

from dialectic.cli.serve_run import shutdown_line
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import ScriptedProvider
from dialectic.store import MemoryStore
from dialectic.testing.harness import make_config
from dialectic.web.app import create_app
from dialectic.web.new_debate import ServerConfig
from dialectic.web.request_log import RequestLog, request_line
from dialectic.web.state import ServeSettings, build_context
from tests.web.conftest import BASE_URL


def test_every_request_is_one_line_with_its_status(tmp_path: Path) -> None:
    logged: list[str] = []

    async def main() -> None:
        ctx = build_context(
            MemoryStore(),
            ServerConfig(make_config(agents=2, rounds=1), tmp_path),
            ServeSettings(),
            ProviderPool(overrides={"scripted": ScriptedProvider()}),
        )
        app = create_app(ctx, request_log=logged.append)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL) as client:
            await client.get("/api/health")
            await client.get("/api/debates?status=completed&limit=5")
            await client.get("/api/debates/deb-20250101-000000-ABCD")
            await client.post("/api/debates", json={"problem": "x"}, headers={"Origin": "https://elsewhere.example"})
        await ctx.runs.shutdown()

    asyncio.run(main())
    assert [line.rsplit(" ", 2)[0] for line in logged] == [
        "GET /api/health 200",
        "GET /api/debates 200",  # no query string: nothing it carries reaches the log
        "GET /api/debates/deb-20250101-000000-ABCD 404",
        "POST /api/debates 403",  # refused by the guard, logged all the same
    ]
    assert all(line.endswith(" ms") for line in logged)


def test_the_line_counts_milliseconds_on_the_clock_given() -> None:
    ticks = itertools.count(0.0, 0.25)
    logged: list[str] = []

    async def app(scope: object, receive: object, send: object) -> None:
        raise RuntimeError("boom")

    log = RequestLog(app, write=logged.append, clock=lambda: next(ticks))  # type: ignore[arg-type]
    try:
        asyncio.run(log({"type": "http", "method": "GET", "path": "/x"}, None, None))  # type: ignore[arg-type]
    except RuntimeError:
        pass
    assert logged == ["GET /x 500 250 ms"]  # an app that failed was answered 500 by the server-error middleware
    assert request_line("GET", "/y", None, 0.0) == "GET /y - 0 ms"


def test_the_shutdown_line_counts_the_debates_it_interrupts() -> None:
    assert shutdown_line(15, 0) == "Shutting down (SIGTERM)"
    assert shutdown_line(1, 2) == (
        "Shutting down (SIGHUP): 2 running debates saved as interrupted (resume from the page or the CLI)"
    )
