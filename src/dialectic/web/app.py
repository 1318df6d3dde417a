"""The FastAPI application: the API, the page, the guards, and what happens at start-up and shutdown."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

from dialectic.core.binding import is_loopback
from dialectic.core.domain import utc_now
from dialectic.core.errors import DialecticError
from dialectic.store import MEMORY_LOCATION
from dialectic.store.base import DebateStore
from dialectic.store.leases import STALE
from dialectic.web.api import router, session_router
from dialectic.web.api_docs import api_docs_html
from dialectic.web.errors import install_error_handlers
from dialectic.web.openai_api import router as openai_router
from dialectic.web.request_log import RequestLog
from dialectic.web.security import PAGE_HEADERS, RequestGuard
from dialectic.web.state import ServerState
from dialectic.web.views import shown

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).parent / "static"
API_DOCS_PATHS = ("/api", "/v1", "/openapi.json")


def stale_debates(store: DebateStore) -> list[str]:
    """Debates saved as running that no live process runs: a server (or a CLI run) died under them."""
    now = utc_now()
    return [d.id for d in store.list(status="running") if shown(store, d, now) == STALE]


def server_paths(ctx: ServerState) -> dict[str, str]:
    """The server's own locations, each with the words an error says instead (it must not name them)."""
    store, directory = "the server's debate store", "the server's configuration directory"
    paths = {str(ctx.server.directory.absolute()): directory, ctx.store.location: store}
    if ctx.store.location != MEMORY_LOCATION:  # a file's path, perhaps relative: both forms
        paths[str(Path(ctx.store.location).absolute())] = store
    return paths


def create_app(ctx: ServerState, *, request_log: Callable[[str], None] | None = None) -> FastAPI:
    """The app of ``ctx``; with ``request_log``, a line for each request served is handed to it."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await _take_up_orphans(ctx)
        try:
            yield
        finally:
            await ctx.runs.shutdown()
            await ctx.providers.aclose()

    app = FastAPI(
        title="dialectic",
        summary="Start, watch, steer and download multi-agent debates.",
        lifespan=lifespan,
        docs_url=None,  # Swagger UI and ReDoc load their scripts from a CDN: see dialectic.web.api_docs
        redoc_url=None,
    )
    app.state.web = ctx
    install_error_handlers(app, server_paths(ctx))
    app.include_router(session_router)
    app.include_router(router)
    app.include_router(openai_router)

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-store"})

    @app.get("/docs", include_in_schema=False)
    def api_docs() -> HTMLResponse:
        return HTMLResponse(api_docs_html(app.openapi()))

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    if ctx.settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(ctx.settings.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
        )
    app.add_middleware(
        RequestGuard,
        max_body_bytes=ctx.settings.max_body_bytes,
        allowed_origins=ctx.settings.cors_origins,
        loopback_only=ctx.settings.token is None and is_loopback(ctx.settings.host),
        page_headers=PAGE_HEADERS,
        api_paths=API_DOCS_PATHS,
    )
    if request_log is not None:  # outermost: a request the guard refuses is logged too
        app.add_middleware(RequestLog, write=request_log)
    return app


async def _take_up_orphans(ctx: ServerState) -> None:
    """Say which debates a previous server (or CLI run) left running; resume them with ``--resume-orphans``."""
    orphans = stale_debates(ctx.store)
    if orphans and not ctx.settings.resume_orphans:
        ctx.notices.append(
            f"{len(orphans)} debate(s) were running when the process running them stopped: {', '.join(orphans)}; "
            "resume them from the page, or start the server with --resume-orphans"
        )
    elif orphans:
        for debate_id in orphans:
            try:
                await ctx.runs.resume(debate_id)
            except DialecticError as exc:
                ctx.notices.append(f"could not resume debate {debate_id}: {exc.message}")
            else:
                ctx.notices.append(f"resumed debate {debate_id}, left running by a process that stopped")
    for notice in ctx.notices:
        log.warning(notice)
    for listed in ctx.store.list(status="suspended", limit=None):
        try:  # a human turn's deadline that passes while this server runs: its fallback model plays the turn
            ctx.runs.watch_deadlines(ctx.store.load(listed.id))
        except DialecticError as exc:
            log.warning("could not read suspended debate %s: %s", listed.id, exc.message)
