"""dialectic as a model: the OpenAI-compatible API under ``/v1`` (models, chat completions).

Any client of OpenAI's API (its SDKs, chat UIs, the ``llm`` CLI, curl) runs a debate by naming a
model: ``dialectic/<format>`` runs the server's panel under that format (every format of
:data:`~dialectic.core.config.FORMATS`), ``dialectic/<name>`` a configuration the operator named
with ``dialectic serve --model NAME=CONFIG``. The last user message is the problem, the earlier
ones its context; the reply is an ordinary ``chat.completion`` whose content is the debate's answer,
whose ``usage`` is the debate's total and whose ``id`` is the debate's (also in the
``X-Dialectic-Debate-Id`` header), so ``dialectic show ID`` and the page open it.

With ``stream: true`` the response starts at once: the debate's progress goes out as SSE comment
lines (and one at least every :data:`PING_S` seconds, so a client that times out on silence stays
connected), then the answer as ``chat.completion.chunk`` deltas, then ``data: [DONE]``.

The JSON API's guards apply unchanged: the token, the body limit, the loopback host check, the
endpoint allow-list, ``limits.maxProblemChars`` and ``--max-running`` (429). Errors take OpenAI's
shape (see :func:`~dialectic.web.errors.error_response`). A debate outlives its request: a client
that goes away leaves it running, saved, to be read on the page.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, StreamingResponse

from dialectic.core.config import FORMATS, AgentConfig, SystemConfig
from dialectic.core.domain import DebateState
from dialectic.core.errors import DialecticError
from dialectic.core.events import Event
from dialectic.core.ledger import debate_totals
from dialectic.engine import DebateRequest
from dialectic.loading.client_config import check_endpoints
from dialectic.loading.config import FIELD_NAMES, apply_overrides, check_prompt_files, with_local_limits
from dialectic.loading.setup import check_providers
from dialectic.web.api import authorized, context
from dialectic.web.errors import ApiError, api_error_for
from dialectic.web.new_debate import ServerConfig, problem_text
from dialectic.web.openai_responses import ResponseEvents, ResponsesRequest, as_chat, response_object
from dialectic.web.openai_wire import (
    DONE,
    MODEL_PREFIX,
    ChatRequest,
    answer_of,
    chunk,
    comment,
    completion,
    data_line,
    model_entry,
    models_list,
    pieces,
    problem_of,
    progress,
    refusals,
)
from dialectic.web.state import ServerState

PING_S = 15.0
"""The longest a streamed response stays silent while its debate runs."""
DEBATE_HEADER = "X-Dialectic-Debate-Id"
STARTED = int(time.time())
"""The ``created`` of every model listed: when this server process started."""


router = APIRouter(prefix="/v1", dependencies=[Depends(authorized)], tags=["openai"])


def offered(server: ServerConfig) -> list[str]:
    """The model ids this server answers to: one per format, then one per named configuration."""
    return [*(MODEL_PREFIX + name for name in FORMATS), *(MODEL_PREFIX + named.name for named in server.named)]


@router.get("/models")
def list_models(request: Request) -> dict[str, Any]:
    """The models this server offers, in OpenAI's list shape."""
    return models_list(offered(context(request).server), STARTED)


@router.get("/models/{model_id:path}")
def get_model(model_id: str, request: Request) -> dict[str, Any]:
    server = context(request).server
    if model_id not in offered(server):
        raise _not_offered(model_id, server)
    return model_entry(model_id, STARTED)


@router.post("/chat/completions", response_model=None)
async def chat_completions(body: ChatRequest, request: Request) -> JSONResponse | StreamingResponse:
    """Run a debate on the conversation's last user message; answer with its outcome as a chat completion."""
    refusals(body)
    run = await Running.start(context(request), body)
    if body.stream:
        return run.streaming(_chat_stream(run, body))
    state = await run.outcome()
    content = completion(run.debate_id, body.model, run.created, answer_of(state), debate_totals(state))
    return JSONResponse(content, headers=run.headers)


@router.post("/responses", response_model=None)
async def responses(body: ResponsesRequest, request: Request) -> JSONResponse | StreamingResponse:
    """OpenAI's Responses API: ``input`` (text, or messages) and ``instructions`` are the conversation."""
    chat = as_chat(body)
    refusals(chat)
    run = await Running.start(context(request), chat)
    if body.stream:
        return run.streaming(_responses_stream(run, body))
    state = await run.outcome()
    content = response_object(run.debate_id, body.model, run.created, answer_of(state), debate_totals(state))
    return JSONResponse(content, headers=run.headers)


def debate_request(body: ChatRequest, server: ServerConfig) -> DebateRequest:
    """The debate ``body`` asks for: its model's configuration, tuned by its parameters, checked as the JSON
    API checks a debate (4xx before anything is created)."""
    config, directory = _chosen(body.model, server)
    problem = problem_text(problem_of(body.messages), server.limits)
    config = with_local_limits(_tuned(config, body))
    check_prompt_files(config, directory)
    check_endpoints(
        [*((f"agents[{i}]", a) for i, a in enumerate(config.participants())), ("judge", config.judge)],
        server.endpoints(),
    )
    check_providers(config)
    return DebateRequest(problem=problem, config=config, config_dir=directory)


def _chosen(model: str, server: ServerConfig) -> tuple[SystemConfig, Path]:
    """The configuration ``model`` names, or a 404 naming the models offered."""
    name = model.removeprefix(MODEL_PREFIX) if model.startswith(MODEL_PREFIX) else None
    for named in server.named:
        if named.name == name:
            return apply_overrides(named.config, names=FIELD_NAMES)[0], named.directory
    if name in FORMATS:
        return apply_overrides(server.config, debate_format=name, names=FIELD_NAMES)[0], server.directory
    raise _not_offered(model, server)


def _not_offered(model: str, server: ServerConfig) -> ApiError:
    message = f"the model '{model}' does not exist on this server; it offers: {', '.join(offered(server))}"
    return ApiError(404, "model_not_found", message, {"model": message})


def _tuned(config: SystemConfig, body: ChatRequest) -> SystemConfig:
    """``config`` with the request's ``temperature`` for every participant, and its reply limit as every
    participant's ``maxTokens`` (a lower one configured stays)."""
    limit, temperature = body.reply_limit, body.temperature
    if limit is None and temperature is None:
        return config

    def tune(agent: AgentConfig, where: str) -> AgentConfig:
        values = agent.model_dump()
        if temperature is not None and not agent.is_human:
            values["temperature"] = temperature
        if limit is not None and not agent.is_human:
            values["max_tokens"] = min(agent.max_tokens or limit, limit)
        try:
            return AgentConfig.model_validate(values)
        except ValueError as exc:
            param = "max_tokens" if limit is not None else "temperature"
            message = f"{param}: {where}: {str(exc).splitlines()[-1].strip()}"
            raise ApiError(422, "invalid_request", message, {param: message}) from None

    agents = [tune(a, f"agents[{i}]") for i, a in enumerate(config.agents)]
    return config.model_copy(update={"agents": agents, "judge": tune(config.judge, "judge")})


@dataclass
class Running:
    """A debate started for one request: its id, the run's task, and (streamed) the server's events."""

    ctx: ServerState
    debate_id: str
    task: asyncio.Task[DebateState] | None
    events: asyncio.Queue[Event] | None
    unsubscribe: Callable[[], None]
    created: int = field(default_factory=lambda: int(time.time()))

    @classmethod
    async def start(cls, ctx: ServerState, body: ChatRequest) -> Running:
        """Check ``body``, then start its debate (a 4xx before anything is created; 429 when the server is full)."""
        debate = debate_request(body, ctx.server)
        queue: asyncio.Queue[Event] | None = asyncio.Queue() if body.stream else None
        unsubscribe = ctx.bus.subscribe(queue.put_nowait) if queue is not None else (lambda: None)
        try:
            debate_id = await ctx.runs.start(debate)
        except BaseException:
            unsubscribe()
            raise
        return cls(ctx, debate_id, ctx.runs.task_of(debate_id), queue, unsubscribe)

    @property
    def headers(self) -> dict[str, str]:
        return {DEBATE_HEADER: self.debate_id, "Cache-Control": "no-store"}

    def streaming(self, body: AsyncIterator[bytes]) -> StreamingResponse:
        async def closing() -> AsyncIterator[bytes]:
            try:
                async for part in body:
                    yield part
            finally:
                self.unsubscribe()

        headers = {**self.headers, "X-Accel-Buffering": "no"}
        return StreamingResponse(closing(), media_type="text/event-stream", headers=headers)

    async def progress(self) -> AsyncIterator[bytes]:
        """SSE comments saying what the debate does, until its run ends (one every :data:`PING_S` at least)."""
        yield comment(
            f"debate {self.debate_id} is running: dialectic show {self.debate_id}, or /#/debates/{self.debate_id}"
        )
        task, queue = self.task, self.events
        while task is not None and queue is not None and not task.done():
            getter = asyncio.ensure_future(queue.get())
            done, _ = await asyncio.wait({getter, task}, timeout=PING_S, return_when=asyncio.FIRST_COMPLETED)
            if getter not in done:
                getter.cancel()
                if not done:
                    yield comment("still deliberating")
                continue
            seen = [getter.result(), *_drain(queue)]
            lines = [line for e in seen if e.debate_id == self.debate_id and (line := progress(e)) is not None]
            if lines:
                yield b"".join(comment(self.ctx.scrub(line)) for line in lines)

    async def outcome(self) -> DebateState:
        """The debate once its run ends; an OpenAI-shaped error naming the debate when it did not complete."""
        return await _outcome(self.ctx, self.debate_id, self.task)


async def _chat_stream(run: Running, body: ChatRequest) -> AsyncIterator[bytes]:
    debate_id, model, created = run.debate_id, body.model, run.created
    yield chunk(debate_id, model, created, {"role": "assistant", "content": ""})
    async for line in run.progress():
        yield line
    try:
        state = await run.outcome()
    except ApiError as error:
        kind = "server_error" if error.status >= 500 else "invalid_request_error"
        message = run.ctx.scrub(error.detail)
        yield data_line({"error": {"message": message, "type": kind, "param": None, "code": error.error}})
        yield DONE
        return
    for piece in pieces(answer_of(state)):
        yield chunk(debate_id, model, created, {"content": piece})
    yield chunk(debate_id, model, created, finish="stop")
    if body.usage_wanted:
        yield chunk(debate_id, model, created, usage=debate_totals(state))
    yield DONE


async def _responses_stream(run: Running, body: ResponsesRequest) -> AsyncIterator[bytes]:
    events = ResponseEvents(run.debate_id, body.model, run.created)
    yield events.opening()
    async for line in run.progress():
        yield line
    try:
        state = await run.outcome()
    except ApiError as error:
        yield events.failed(run.ctx.scrub(error.detail), error.error)
        return
    yield events.answer(answer_of(state), debate_totals(state))


async def _outcome(ctx: ServerState, debate_id: str, task: asyncio.Task[DebateState] | None) -> DebateState:
    """The debate once its run ends; an OpenAI-shaped error naming the debate when it did not complete."""
    headers = {DEBATE_HEADER: debate_id}
    try:
        state = await asyncio.shield(task) if task is not None else ctx.store.load(debate_id)
    except DialecticError as exc:
        error = api_error_for(exc)
        raise ApiError(error.status, error.error, f"debate {debate_id}: {exc.message}", headers=headers) from None
    except asyncio.CancelledError:
        if task is None or not task.cancelled():
            raise  # this request was cancelled: the debate goes on
        state = ctx.store.load(debate_id)  # the run was cancelled (the page, a shutdown)
    if state.status != "completed":
        raise ApiError(
            409,
            "debate_not_completed",
            f"debate {debate_id} stopped {state.status}{f' ({state.error})' if state.error else ''}: "
            f"its page on this server, or dialectic show {debate_id}, says what it waits for; go on from there",
            headers=headers,
        )
    return state


def _drain(queue: asyncio.Queue[Event]) -> list[Event]:
    items: list[Event] = []
    while not queue.empty():
        items.append(queue.get_nowait())
    return items
