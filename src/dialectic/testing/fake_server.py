"""A fake OpenAI- and Anthropic-compatible HTTP server on 127.0.0.1, answering from the scripted model.

Tests and demos point the real SDK clients at it, so the adapters' whole HTTP path (request
shapes, response parsing, streaming, error statuses) runs without a network. Each request body
becomes a :class:`CompletionRequest` answered by a :class:`ScriptedProvider`; the answer is
written in the wire format the official SDKs parse:

* ``POST /v1/responses`` (OpenAI Responses; 404 when ``responses_api=False``),
* ``POST /v1/chat/completions`` (with ``stream: true``: SSE chunks, a usage chunk, ``[DONE]``),
* ``POST /v1/messages`` (Anthropic Messages, streamed as Anthropic events with ``stream: true``),
* ``GET /v1/models``.

Faults queued with :meth:`FakeLLMServer.inject` are consumed one per completion request, in order.
Run ``python -m dialectic.testing.fake_server --help`` for the command line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType, TracebackType
from typing import Any, Literal

from dialectic.llm.base import FINISH_LENGTH, Completion, CompletionRequest, JsonSchema, Message, Role
from dialectic.llm.scripted import Responder, ScriptedProvider

Api = Literal["responses", "chat", "anthropic"]
_APIS: dict[str, Api] = {"/v1/responses": "responses", "/v1/chat/completions": "chat", "/v1/messages": "anthropic"}
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_BROKEN_JSON = '{"id": "broken", "object": '


@dataclass(frozen=True)
class Fault:
    """One injected failure. ``status``: answer ``status`` (with ``Retry-After`` when ``retry_after``
    is set; ``body`` replaces the JSON error body). ``delay``: wait ``delay_s``, then answer normally.
    ``malformed``: 200 with a body that is not JSON (``body`` if given). ``truncate``: answer cut off
    by the token limit. ``disconnect``: close the connection without answering."""

    kind: Literal["status", "delay", "malformed", "truncate", "disconnect"]
    status: int = 500
    retry_after: float | None = None
    delay_s: float = 0.0
    body: str | None = None


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    """Header names are lower-cased."""


def _text_of(content: Any) -> str:
    """Message content as text: a string, or the text parts of a list of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _role(value: Any) -> Role:
    return "system" if value in ("system", "developer") else "assistant" if value == "assistant" else "user"


def _messages(items: Any) -> list[Message]:
    return [Message(_role(m.get("role")), _text_of(m.get("content"))) for m in items or [] if isinstance(m, dict)]


def completion_request(api: Api, body: dict[str, Any]) -> CompletionRequest:
    """The :class:`CompletionRequest` an OpenAI Responses / Chat or Anthropic Messages body asks for."""
    schema: JsonSchema | None = None
    if api == "responses":
        items = body.get("input")
        messages = [Message("system", body["instructions"])] if body.get("instructions") else []
        messages += _messages([{"role": "user", "content": items}] if isinstance(items, str) else items)
        fmt = (body.get("text") or {}).get("format") or {}
        if fmt.get("type") == "json_schema":
            schema = JsonSchema(fmt.get("name", "output"), fmt.get("schema") or {})
        max_tokens = body.get("max_output_tokens")
    elif api == "chat":
        messages = _messages(body.get("messages"))
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            spec = fmt.get("json_schema") or {}
            schema = JsonSchema(spec.get("name", "output"), spec.get("schema") or {})
        max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
    else:
        system = _text_of(body.get("system"))
        messages = ([Message("system", system)] if system else []) + _messages(body.get("messages"))
        chosen = (body.get("tool_choice") or {}).get("name")
        tool = next((t for t in body.get("tools") or [] if t.get("name") == chosen), None)
        if tool is not None:
            schema = JsonSchema(tool["name"], tool.get("input_schema") or {})
        max_tokens = body.get("max_tokens")
    return CompletionRequest(
        messages=tuple(messages),
        model=str(body.get("model", "")),
        temperature=body.get("temperature"),
        max_tokens=max_tokens,
        json_schema=schema,
    )


def _truncated(completion: Completion) -> Completion:
    words = completion.text.split(" ")
    return replace(
        completion, text=" ".join(words[: max(1, len(words) // 2)]), finish_reason=FINISH_LENGTH, structured=None
    )


def _pieces(text: str) -> list[str]:
    words = text.split(" ")
    return [word if i == 0 else " " + word for i, word in enumerate(words)]


def _new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


def responses_body(c: Completion, body: dict[str, Any]) -> dict[str, Any]:
    cut = c.cut_off
    message = {
        "type": "message",
        "id": _new_id("msg_"),
        "role": "assistant",
        "status": "incomplete" if cut else "completed",
        "content": [{"type": "output_text", "text": c.text, "annotations": []}],
    }
    return {
        "id": _new_id("resp_"),
        "object": "response",
        "created_at": int(time.time()),
        "model": c.model,
        "status": "incomplete" if cut else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "error": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "temperature": body.get("temperature"),
        "output": [message],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "text": body.get("text") or {"format": {"type": "text"}},
        "usage": {
            "input_tokens": c.usage.input_tokens,
            "output_tokens": c.usage.output_tokens,
            "total_tokens": c.usage.total_tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _chat_usage(c: Completion) -> dict[str, int]:
    return {
        "prompt_tokens": c.usage.input_tokens,
        "completion_tokens": c.usage.output_tokens,
        "total_tokens": c.usage.total_tokens,
    }


def chat_body(c: Completion) -> dict[str, Any]:
    return {
        "id": _new_id("chatcmpl-"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": c.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": c.text},
                "finish_reason": "length" if c.cut_off else "stop",
                "logprobs": None,
            }
        ],
        "usage": _chat_usage(c),
    }


def chat_chunks(c: Completion, include_usage: bool) -> Iterator[dict[str, Any]]:
    base = {
        "id": _new_id("chatcmpl-"),
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": c.model,
    }
    for i, piece in enumerate(_pieces(c.text)):
        delta = {"role": "assistant", "content": piece} if i == 0 else {"content": piece}
        yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    finish = "length" if c.cut_off else "stop"
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    if include_usage:
        yield {**base, "choices": [], "usage": _chat_usage(c)}


def anthropic_body(c: Completion, request: CompletionRequest) -> dict[str, Any]:
    """A Messages reply: a tool_use block for a structured request whose reply is a JSON object, else text."""
    if request.json_schema is not None and not c.cut_off and isinstance(c.structured, dict):
        content: list[dict[str, Any]] = [
            {"type": "tool_use", "id": _new_id("toolu_"), "name": request.json_schema.name, "input": c.structured}
        ]
        stop = "tool_use"
    else:
        content = [{"type": "text", "text": c.text}]
        stop = "max_tokens" if c.cut_off else "end_turn"
    return {
        "id": _new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": c.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": c.usage.input_tokens, "output_tokens": c.usage.output_tokens},
    }


def anthropic_events(c: Completion, request: CompletionRequest) -> Iterator[tuple[str, dict[str, Any]]]:
    message = anthropic_body(c, request)
    block = message["content"][0]
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": c.usage.input_tokens, "output_tokens": 0},
    }
    yield "message_start", {"type": "message_start", "message": start}
    if block["type"] == "tool_use":
        opening = {**block, "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
    else:
        opening = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": piece} for piece in _pieces(block["text"])]
    yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": opening}
    for delta in deltas:
        yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": c.usage.output_tokens},
        },
    )
    yield "message_stop", {"type": "message_stop"}


class FakeLLMServer:
    """The fake server. ``requests`` records every request received (faulted ones included);
    ``call_count`` counts the completions actually produced (faults of kind ``status``,
    ``malformed`` and ``disconnect``, 401s, 404s and ``fail_after`` failures are not counted;
    ``delay`` and ``truncate`` ones are). After ``fail_after`` counted completions, every later
    completion request gets ``always_fail_status``."""

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency_s: float = 0.0,
        responses_api: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
        fail_after: int | None = None,
        always_fail_status: int = 500,
        auth_key: str | None = None,
    ) -> None:
        self.scripted = ScriptedProvider(responder)
        self.latency_s = latency_s
        self.responses_api = responses_api
        self.fail_after = fail_after
        self.always_fail_status = always_fail_status
        self.auth_key = auth_key
        self.requests: list[RecordedRequest] = []
        self.call_count = 0
        self._address = (host, port)
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeLLMServer:
        handler = type("BoundHandler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(self._address, handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-llm-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the fake server is not running")
        return f"http://{self._address[0]}:{self._httpd.server_port}"

    @property
    def openai_base_url(self) -> str:
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    def inject(self, fault: Fault, times: int = 1) -> None:
        with self._lock:
            self._faults.extend([fault] * times)

    def paths(self) -> list[str]:
        """The paths of the recorded requests, in order (handy for assertions)."""
        with self._lock:
            return [r.path for r in self.requests]

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _take_fault(self) -> Fault | None:
        with self._lock:
            if self.fail_after is not None and self.call_count >= self.fail_after:
                return Fault("status", status=self.always_fail_status)
            return self._faults.popleft() if self._faults else None

    def _count(self) -> None:
        with self._lock:
            self.call_count += 1


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeLLM/1.0"
    fake: FakeLLMServer

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests and demos do not want an access log on stderr."""

    def do_GET(self) -> None:
        self.fake._record(RecordedRequest(self.path, {}, self._headers()))
        if self.path.rstrip("/") == "/v1/models":
            model = {"id": self.fake.scripted.model, "object": "model", "created": 0, "owned_by": "dialectic"}
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._send_json(404, {"error": {"message": "Not Found", "type": "not_found_error"}})

    def do_POST(self) -> None:
        try:
            self._serve_post()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (e.g. its timeout fired); nothing to answer

    def _serve_post(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?", 1)[0].rstrip("/")
        self.fake._record(RecordedRequest(path, body, self._headers()))
        api = _APIS.get(path)
        if api is None or (api == "responses" and not self.fake.responses_api):
            self._send(404, b"404 page not found", "text/plain")
            return
        if api == "responses" and body.get("stream"):
            self._send_error(api, 400, "the fake server does not stream /v1/responses")
            return
        key = self.fake.auth_key
        if key is not None and key not in (self.headers.get("x-api-key"), self._bearer()):
            self._send_error(api, 401, "invalid api key")
            return
        if self.fake.latency_s:
            time.sleep(self.fake.latency_s)
        fault = self.fake._take_fault()
        if fault is not None and fault.kind == "delay":
            time.sleep(fault.delay_s)
        elif fault is not None and fault.kind == "status":
            self._send_error(api, fault.status, f"injected failure ({fault.status})", fault.retry_after, fault.body)
            return
        elif fault is not None and fault.kind == "malformed":
            broken = fault.body or _BROKEN_JSON
            if body.get("stream"):
                self._send_sse([(None, broken)], done=api == "chat")
            else:
                self._send(200, broken.encode(), "application/json")
            return
        elif fault is not None and fault.kind == "disconnect":
            self.close_connection = True
            return
        request = completion_request(api, body)
        try:
            completion = asyncio.run(self.fake.scripted.complete(request))
        except Exception as exc:  # a scripted failure becomes a server error, as a real model's would
            self._send_error(api, 500, f"scripted model failed: {exc}")
            return
        if fault is not None and fault.kind == "truncate":
            completion = _truncated(completion)
        self.fake._count()
        if body.get("stream") and api == "chat":
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._send_sse(((None, json.dumps(c)) for c in chat_chunks(completion, include_usage)), done=True)
        elif body.get("stream"):
            self._send_sse(((name, json.dumps(e)) for name, e in anthropic_events(completion, request)), done=False)
        elif api == "responses":
            self._send_json(200, responses_body(completion, body))
        elif api == "chat":
            self._send_json(200, chat_body(completion))
        else:
            self._send_json(200, anthropic_body(completion, request))

    def _headers(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}

    def _bearer(self) -> str | None:
        value = self.headers.get("authorization") or ""
        return value[7:] if value.lower().startswith("bearer ") else None

    def _send(self, status: int, payload: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json")

    def _send_error(
        self, api: Api, status: int, message: str, retry_after: float | None = None, body: str | None = None
    ) -> None:
        kind = _ERROR_TYPES.get(status, "api_error")
        if body is None:
            error = {"message": message, "type": kind}
            payload = {"type": "error", "error": error} if api == "anthropic" else {"error": {**error, "code": None}}
            body = json.dumps(payload)
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else None
        self._send(status, body.encode(), "application/json", headers)

    def _send_sse(self, events: Iterable[tuple[str | None, str]], *, done: bool) -> None:
        """Stream ``(event name, data)`` pairs close-delimited (no Content-Length), then close.

        ``done`` ends the stream with OpenAI's ``data: [DONE]`` sentinel (Anthropic has none)."""
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, data in events:
            prefix = f"event: {name}\n" if name else ""
            self.wfile.write(f"{prefix}data: {data}\n\n".encode())
            self.wfile.flush()
        if done:
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dialectic.testing.fake_server",
        description="A fake OpenAI- and Anthropic-compatible LLM server.",
    )
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: any free port)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds to wait before each answer")
    parser.add_argument("--no-responses-api", action="store_true", help="answer 404 on /v1/responses")
    parser.add_argument("--fail-after", type=int, default=None, help="fail every request after N completions")
    parser.add_argument("--fail-status", type=int, default=500, help="status used by --fail-after")
    parser.add_argument("--auth-key", default=None, help="reject requests whose API key differs (401)")
    args = parser.parse_args(argv)
    stopping = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    server = FakeLLMServer(
        latency_s=args.latency,
        responses_api=not args.no_responses_api,
        port=args.port,
        fail_after=args.fail_after,
        always_fail_status=args.fail_status,
        auth_key=args.auth_key,
    )
    with server:
        print(server.url, flush=True)
        while not stopping.wait(0.2):
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
