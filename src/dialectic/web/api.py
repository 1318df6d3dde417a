"""The JSON API under ``/api``: debates (start, list, read, stream, steer, download) and the server's health."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from fastapi.responses import PlainTextResponse
from pydantic import Field
from sse_starlette import EventSourceResponse, ServerSentEvent

from dialectic.core.domain import DebateState, utc_now
from dialectic.core.errors import DebateStateError, InvalidArgumentsError
from dialectic.engine.seats import check_turn_text, deadline_passed, turn_texts
from dialectic.loading.setup import check_ready
from dialectic.web.endpoint_models import list_models
from dialectic.web.errors import ApiError, ErrorScrubber, field_error
from dialectic.web.listing import debates_page
from dialectic.web.new_debate import ApiModel, NewDebate, resolve
from dialectic.web.security import SESSION_COOKIE
from dialectic.web.state import ServerState
from dialectic.web.validation import strict_int
from dialectic.web.views import STATUSES, export_text, options, report_text

POLL_S = 1.0
"""How often a stream of a debate another process runs looks for what that process saved."""
PING_S = 15


def context(request: Request) -> ServerState:
    ctx: ServerState = request.app.state.web
    return ctx


Ctx = Annotated[ServerState, Depends(context)]


def authorized(request: Request) -> None:
    context(request).token(request)


router = APIRouter(prefix="/api", dependencies=[Depends(authorized)])
session_router = APIRouter(prefix="/api")


class SessionRequest(ApiModel):
    token: str


@session_router.post("/session", status_code=204, tags=["server"])
def sign_in(body: SessionRequest, request: Request) -> Response:
    """Trade the server's token for a session cookie, so the page (and its event streams) can use the API.

    The cookie holds the token's HMAC under a key this server process drew at random, not the token."""
    ctx = context(request)
    if not ctx.token.matches(body.token):
        raise ApiError(401, "unauthorized", "that is not this server's token")
    response = Response(status_code=204)
    if ctx.token.enabled:
        response.set_cookie(SESSION_COOKIE, ctx.token.session(), httponly=True, samesite="strict", path="/api")
    return response


@router.get("/health", tags=["server"])
def health(ctx: Ctx) -> dict[str, Any]:
    """The server is up: its version, the debates it runs and its limit."""
    from importlib import metadata

    try:
        version = metadata.version("dialectic-debate")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return {
        "status": "ok",
        "version": version,
        "running": ctx.runs.count,
        "maxRunning": ctx.settings.max_running,
        "auth": ctx.token.enabled,
        "notices": ctx.notices,
    }


@router.get("/options", tags=["debates"])
def new_debate_options(ctx: Ctx) -> dict[str, Any]:
    """What a new debate may choose: the server's agents and judge, roles, providers, formats, defaults, limits."""
    return options(ctx.server)


@router.get("/models", tags=["debates"])
async def endpoint_models(ctx: Ctx) -> dict[str, Any]:
    """The panel a new debate may pick from: every allowed endpoint (by id) and the models it offers (its
    ``GET /v1/models``, then those the server's configurations name there); ``error`` when it could not list."""
    listed = await list_models(ctx.server.book(), ctx.providers)
    for entry in listed:
        if "error" in entry:
            entry["error"] = ctx.scrub(ErrorScrubber().text(entry["error"]))  # one line, no path of the server's
    return {"endpoints": listed}


class Created(ApiModel):
    id: str
    status: str
    warnings: list[str] = Field(default_factory=list)


@router.post("/debates", status_code=201, response_model=Created, tags=["debates"])
async def create_debate(body: NewDebate, ctx: Ctx, response: Response) -> Created:
    """Start a debate on the server's configuration (or the one sent) with the overrides given."""
    resolved = resolve(body, ctx.server)
    debate_id = await ctx.runs.start(resolved.request)
    response.headers["Location"] = f"/api/debates/{debate_id}"
    return Created(id=debate_id, status="running", warnings=[ctx.scrub(w) for w in resolved.warnings])


@router.get("/debates", tags=["debates"])
def list_debates(
    ctx: Ctx,
    status: Annotated[str | None, Query(description=f"One of: {', '.join(STATUSES)}.")] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[str | None, Query(description="The nextCursor of the previous page.")] = None,
) -> Response:
    """Debates, newest first, a page at a time: read from the store's index, not by folding each debate
    (see :mod:`dialectic.web.listing`)."""
    if status is not None and status not in STATUSES:
        raise ApiError(422, "invalid_request", f"unknown status '{status}' (known: {', '.join(STATUSES)})")
    return _json(ctx, debates_page(ctx.store, status=status, limit=limit, cursor=cursor, now=utc_now()))


@router.get("/debates/{debate_id}", tags=["debates"])
def get_debate(debate_id: str, ctx: Ctx) -> Response:
    """The debate's state, in the seed's ``DebateState`` shape (as ``dialectic export`` writes it)."""
    return _json(ctx, ctx.store.load(debate_id).to_json_dict())


@router.get("/debates/{debate_id}/events", tags=["debates"], response_class=EventSourceResponse)
async def debate_events(
    debate_id: str,
    ctx: Ctx,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
    after: Annotated[str | None, Query(description="Like Last-Event-ID, for a client that cannot send it.")] = None,
) -> EventSourceResponse:
    """Server-Sent Events: every stored change (id = its sequence number; ``Last-Event-ID`` replays what
    was missed), the live events between them (token deltas, calls, phases, warnings: ids ``N.k``), and
    ``end`` once the debate is at rest.

    Async on purpose: the feed is the event loop's (the engine's events reach it there), so the client
    subscribes on the loop too; a worker thread would race the events arriving meanwhile."""
    if last_event_id:
        seen = parse_event_id(last_event_id, "Last-Event-ID")
    else:
        seen = parse_event_id(after, "after")
    feed, subscriber = ctx.hub.subscribe(debate_id, seen)

    async def stream() -> AsyncIterator[bytes]:
        try:
            while True:
                item = await subscriber.next(POLL_S)
                if item is None:
                    if subscriber.done:
                        return
                    ctx.hub.poll(feed)
                    continue
                batch = [item, *subscriber.ready()]  # a burst goes out in one write
                yield b"".join(ServerSentEvent(data=o.data, event=o.event, id=o.id).encode() for o in batch)
                if subscriber.done:
                    return
        finally:
            ctx.hub.unsubscribe(feed, subscriber)

    return EventSourceResponse(stream(), ping=PING_S, headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


def parse_event_id(value: str | None, name: str) -> int:
    """The change sequence number an event id stands for (``12`` and ``12.3`` both mean change 12).

    Both parts are ASCII digits within SQLite's integers (:func:`~dialectic.web.validation.strict_int`);
    anything else is a 400 naming ``name``."""
    if value is None or not value.strip():
        return 0
    head, dot, live = value.strip().partition(".")
    if dot:
        strict_int(live, f"{name} (after its '.')")
    return strict_int(head, name)


class Answers(ApiModel):
    answers: dict[str, str] = Field(description="Question id → answer.")


class Accepted(ApiModel):
    id: str
    status: str


@router.post("/debates/{debate_id}/answers", status_code=202, response_model=Accepted, tags=["steering"])
async def answer_questions(debate_id: str, body: Answers, ctx: Ctx) -> Accepted:
    """Answer the pending clarifying questions; the debate resumes."""
    async with ctx.runs.steering(debate_id):
        state = ctx.store.load(debate_id)
        if state.status != "suspended" or not state.pending_questions() or ctx.runs.is_running(debate_id):
            raise DebateStateError(f"debate {debate_id} is not waiting for answers (status {state.status})")
        pending = {item.id for item in state.pending_questions()}
        unknown = sorted(set(body.answers) - pending)
        if not body.answers or unknown:
            message = (
                f"no pending question has the id {', '.join(unknown)} (pending: {', '.join(sorted(pending))})"
                if unknown
                else "give at least one answer"
            )
            raise ApiError(422, "invalid_request", message, {"answers": message})
        _check_resumable(ctx, state)
        await ctx.runs.resume(debate_id, body.answers)
    return Accepted(id=debate_id, status="running")


class TurnText(ApiModel):
    text: str = Field(description="What the seat says: the turn, as the person wrote it.")


@router.post("/debates/{debate_id}/turns/{key}", status_code=202, response_model=Accepted, tags=["steering"])
async def submit_turn(debate_id: str, key: str, body: TurnText, ctx: Ctx) -> Accepted:
    """Write a human seat's turn the debate waits for (``key``: the turn's, as its ``humanTurns`` list it, or
    the seat's id when it has one turn waiting); the debate resumes."""
    async with ctx.runs.steering(debate_id):
        state = ctx.store.load(debate_id)
        if ctx.runs.is_running(debate_id) or state.status != "suspended":
            raise DebateStateError(f"debate {debate_id} is not waiting for a human turn (status {state.status})")
        try:
            turns = turn_texts(state, [(key, body.text)])
        except DebateStateError:
            raise
        except InvalidArgumentsError as exc:
            raise field_error("text" if _breaks_turn_rules(body.text) else "key", exc) from None
        _check_resumable(ctx, state)
        await ctx.runs.resume(debate_id, turns=turns)
    return Accepted(id=debate_id, status="running")


def _breaks_turn_rules(text: str) -> bool:
    try:
        check_turn_text(text)
    except InvalidArgumentsError:
        return True
    return False


@router.post("/debates/{debate_id}/pause", status_code=202, response_model=Accepted, tags=["steering"])
async def pause_debate(debate_id: str, ctx: Ctx) -> Accepted:
    """Pause: the calls in flight finish and are saved, then the debate stops between steps as ``paused``."""
    async with ctx.runs.steering(debate_id):
        _require_here(ctx, debate_id)
        ctx.runs.pause(debate_id)
    return Accepted(id=debate_id, status="pausing")


@router.post("/debates/{debate_id}/resume", status_code=202, response_model=Accepted, tags=["steering"])
async def resume_debate(debate_id: str, ctx: Ctx) -> Accepted:
    """Resume a paused, interrupted, stale or failed debate (retry) from its saved cursor; or take back a
    pause asked of a debate running here that has not taken effect yet."""
    async with ctx.runs.steering(debate_id):
        if ctx.runs.withdraw_pause(debate_id):
            return Accepted(id=debate_id, status="running")
        state = ctx.store.load(debate_id)
        if state.status == "completed":
            raise DebateStateError(f"debate {debate_id} is already completed; nothing to resume")
        if state.status == "suspended" and state.pending_questions():
            raise DebateStateError(f"debate {debate_id} is waiting for answers: send them to its answers endpoint")
        waiting = [turn for turn in state.pending_turns() if not deadline_passed(turn)]
        if state.status == "suspended" and waiting:
            raise DebateStateError(
                f"debate {debate_id} is waiting for {waiting[0].agent_name}'s turn: send it to its turns endpoint"
            )
        _check_resumable(ctx, state)
        await ctx.runs.resume(debate_id)
    return Accepted(id=debate_id, status="running")


@router.post("/debates/{debate_id}/cancel", response_model=Accepted, tags=["steering"])
async def cancel_debate(debate_id: str, ctx: Ctx) -> Accepted:
    """Stop now: calls in flight are cancelled, what was saved is kept, the debate is ``interrupted`` (resumable).

    Cancelling a debate already interrupted answers the same (a cancel sent twice is one cancel)."""
    async with ctx.runs.steering(debate_id):
        if ctx.store.load(debate_id).status != "interrupted" or ctx.runs.is_running(debate_id):
            _require_here(ctx, debate_id)
            await ctx.runs.cancel(debate_id)
        return Accepted(id=debate_id, status=ctx.store.load(debate_id).status)


@router.get("/debates/{debate_id}/export", tags=["downloads"], response_class=PlainTextResponse)
def export_debate(debate_id: str, ctx: Ctx) -> Response:
    """The JSON export, as ``dialectic export`` writes it."""
    text = ctx.scrub(export_text(ctx.store.load(debate_id)))
    return _download(text, "application/json", f"{debate_id}.json")


@router.get("/debates/{debate_id}/report", tags=["downloads"], response_class=PlainTextResponse)
def report(debate_id: str, ctx: Ctx) -> Response:
    """The Markdown report, as ``dialectic report`` writes it."""
    text = ctx.scrub(report_text(ctx.store.load(debate_id)))
    return _download(text, "text/markdown; charset=utf-8", f"{debate_id}.md")


def _download(text: str, media_type: str, filename: str) -> Response:
    return Response(
        text.encode("utf-8"),
        media_type=media_type,
        headers={"Content-Disposition": f'attachment; filename="{filename}"', "Cache-Control": "no-store"},
    )


def _require_here(ctx: ServerState, debate_id: str) -> None:
    """404 for an unknown debate; 409 for one this server does not run (another process may)."""
    state = ctx.store.load(debate_id)
    if not ctx.runs.is_running(debate_id):
        raise DebateStateError(f"debate {debate_id} is not running on this server (status {state.status})")


def _check_resumable(ctx: ServerState, state: DebateState) -> None:
    """What ``dialectic resume`` checks first: the saved configuration's prompt files and providers."""
    if not state.config:
        return
    saved = state.config_or_defaults()
    check_ready(saved, state.config_dir())


def _json(ctx: ServerState, body: Any) -> Response:
    """``body`` as JSON, with any secret value the server knows of replaced."""
    return Response(ctx.scrub(json.dumps(body, ensure_ascii=False)), media_type="application/json")
