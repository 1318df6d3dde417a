"""A fake OpenAI- and Anthropic-compatible HTTP server on 127.0.0.1, answering from the scripted model.

Tests and demos point the real SDK clients at it, so the adapters' whole HTTP path (request
shapes, response parsing, streaming, error statuses) runs without a network. Each request body
becomes a :class:`CompletionRequest` answered by a :class:`ScriptedProvider`; the answer is
written in the wire format the official SDKs parse (:mod:`dialectic.testing.wire`). Tools
offered in a body reach the responder as ``request.tools``, earlier calls and their results as
assistant ``tool_calls`` and ``tool`` messages, and a scripted reply's ``tool_calls`` go back as
each API writes calls:

* ``POST /v1/responses`` (OpenAI Responses; 404 when ``responses_api=False``),
* ``POST /v1/chat/completions`` (with ``stream: true``: SSE chunks, a usage chunk, ``[DONE]``),
* ``POST /v1/messages`` (Anthropic Messages, streamed as Anthropic events with ``stream: true``),
* ``GET /v1/models`` (the scripted model, then the ids given as ``models``).

Strict mode (``strict=True``, ``--strict``) behaves as llama.cpp's ``llama-server`` (the tree in
llama-cpp-python 0.3.36), so what works against the fake also works against it:

* ``/v1/responses`` refuses, with 400 "Cannot determine type of 'item'", an ``input`` item it cannot
  classify: an untyped item passes only with role ``user``/``system``/``developer``, so an
  assistant turn must be ``{"type": "message", "role": "assistant", ...}``
  (:func:`~dialectic.testing.wire.responses_input_error` has the rules);
* ``/v1/responses`` ignores ``text.format``: the scripted model is asked without a JSON schema
  (Chat Completions still honours ``response_format``);
* a Responses reply is always ``completed`` (no ``incomplete_details``), even when cut at
  ``max_output_tokens``; a cut chat reply still says ``finish_reason: "length"``;
* every reply's ``model`` is :data:`~dialectic.testing.wire.MODEL_PATH` (the GGUF it "loaded"),
  not the model asked for; chat replies (and a stream's last chunk) carry llama's ``timings``;
  usage counts input tokens as :func:`~dialectic.testing.wire.prompt_tokens` does;
* a context window of ``n_ctx`` tokens (4096 unless given): a prompt of ``n_ctx`` tokens or more gets
  400 ``exceed_context_size_error`` (with ``n_prompt_tokens`` and ``n_ctx``), and a reply stops
  where the window ends (``n_ctx`` given without ``strict`` does the same);
* ``GET /props`` (``n_ctx`` per slot, ``total_slots`` = ``slots``) and a llama-style ``GET /v1/models``.

In either mode, ``max_completion_tokens`` is read as ``max_tokens`` on chat completions, and
``stream_usage=False`` (``--no-stream-usage``) leaves the usage chunk out of a chat stream even when
``stream_options.include_usage`` asks for it, as some servers do.

What goes wrong, and when (:mod:`dialectic.testing.faults`):

* faults queued with :meth:`FakeLLMServer.inject` are consumed one per completion request, in order;
* with ``fault_rate`` > 0, every other completion request fails with that probability, with a kind
  drawn evenly from ``fault_kinds`` (``429`` with ``Retry-After: retry_after_s``, ``500``,
  ``stall``: no answer for ``stall_s`` seconds, ``disconnect``), seeded by ``seed``;
* ``latency_s`` delays every completion, by a seeded lognormal draw around it when
  ``latency_sigma`` > 0;
* ``chunk_delay_s`` paces every streamed answer: a pause before each chunk after the first, so a
  client watching the stream sees the reply arrive word by word.

An endpoint that is **down** for a test: ``FakeLLMServer(fail_after=0)`` answers every completion
with ``always_fail_status`` (500 by default: retried, then given up on);
``fault_rate=1.0, fault_kinds=("disconnect",)`` drops every connection; and
:func:`closed_port_url` gives a URL where nothing listens (connection refused).

Run ``python -m dialectic.testing.fake_server --help`` for the command line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType, TracebackType
from typing import Any

from dialectic.core.domain import Usage
from dialectic.llm.base import Completion, CompletionRequest
from dialectic.llm.scripted import Responder, ScriptedProvider
from dialectic.testing.faults import (
    DEFAULT_RETRY_AFTER_S,
    DEFAULT_STALL_S,
    FAULT_KINDS,
    Fault,
    Latency,
    RandomFaults,
    parse_fault_kinds,
)
from dialectic.testing.wire import (
    APIS,
    MODEL_PATH,
    Api,
    anthropic_body,
    anthropic_events,
    chat_body,
    chat_chunks,
    completion_request,
    cut_off,
    error_body,
    llama_error_body,
    llama_models,
    llama_props,
    prompt_tokens,
    responses_body,
    responses_input_error,
    timings,
)

__all__ = [
    "DEFAULT_STRICT_N_CTX",
    "MODEL_PATH",
    "FakeLLMServer",
    "Fault",
    "RecordedRequest",
    "closed_port_url",
    "completion_request",
    "main",
]

DEFAULT_STRICT_N_CTX = 4096
"""The context window of a strict server when ``n_ctx`` is not given (llama-server's own default)."""

_BROKEN_JSON = '{"id": "broken", "object": '


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    """Header names are lower-cased."""
    received_at: float = field(default_factory=time.monotonic)
    """``time.monotonic()`` when the request arrived (comparable across processes on one machine)."""


def closed_port_url(host: str = "127.0.0.1") -> str:
    """``http://host:port`` of a port nothing listens on (a connection there is refused).

    The port was free a moment ago; another process could take it, which on 127.0.0.1 in a
    test run is unlikely but possible.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port = probe.getsockname()[1]
    return f"http://{host}:{port}"


class FakeLLMServer:
    """The fake server. ``requests`` records every request received (faulted ones included);
    ``call_count`` counts the completions actually produced (faults of kind ``status``, ``stall``,
    ``malformed`` and ``disconnect``, 401s, 404s and ``fail_after`` failures are not counted;
    ``delay`` and ``truncate`` ones are). After ``fail_after`` counted completions, every later
    completion request gets ``always_fail_status``. ``faults_served`` counts the faults given, by
    :attr:`Fault.label` (``"429"``, ``"500"``, ``"stall"``, ``"disconnect"``…).

    ``strict`` behaves as llama-server (see the module's docstring); ``n_ctx`` is the context window
    of a request in tokens (strict default :data:`DEFAULT_STRICT_N_CTX`; ``None`` without ``strict``:
    unlimited), ``slots`` the number of slots ``/props`` reports; ``stream_usage=False`` sends no
    usage chunk in a chat stream. Requests refused with 400 for their input or their size are not
    counted and take no fault."""

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency_s: float = 0.0,
        latency_sigma: float = 0.0,
        responses_api: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
        fail_after: int | None = None,
        always_fail_status: int = 500,
        auth_key: str | None = None,
        fault_rate: float = 0.0,
        fault_kinds: Iterable[str] = FAULT_KINDS,
        seed: int = 0,
        stall_s: float = DEFAULT_STALL_S,
        retry_after_s: float = DEFAULT_RETRY_AFTER_S,
        chunk_delay_s: float = 0.0,
        strict: bool = False,
        n_ctx: int | None = None,
        slots: int = 1,
        stream_usage: bool = True,
        models: Sequence[str] = (),
    ) -> None:
        if (n_ctx is not None and n_ctx < 1) or slots < 1:
            raise ValueError("the context size and the number of slots must be at least 1")
        self.strict = strict
        self.n_ctx = DEFAULT_STRICT_N_CTX if n_ctx is None and strict else n_ctx
        self.slots = slots
        self.stream_usage = stream_usage
        self.models = tuple(models)
        """Model ids ``GET /v1/models`` lists after the scripted model's (any model asked for is answered)."""
        self.scripted = ScriptedProvider(responder)
        self.chunk_delay_s = chunk_delay_s
        self.latency = Latency(latency_s, latency_sigma, seed=seed)
        self.random_faults = RandomFaults(
            fault_rate, fault_kinds, seed=seed, stall_s=stall_s, retry_after_s=retry_after_s
        )
        self.responses_api = responses_api
        self.fail_after = fail_after
        self.always_fail_status = always_fail_status
        self.auth_key = auth_key
        self.requests: list[RecordedRequest] = []
        self.call_count = 0
        self.answered_at: list[float] = []
        """``time.monotonic()`` when each completion was about to be sent (benchmarks time the client with it)."""
        self.faults_served: Counter[str] = Counter()
        self._address = (host, port)
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeLLMServer:
        self._stopping.clear()
        handler = type("BoundHandler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(self._address, handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-llm-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # ends every pause (latency, delays, stalls) at once
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

    def pause(self, seconds: float) -> bool:
        """Wait ``seconds`` unless the server stops first; True if it is stopping."""
        return seconds > 0 and self._stopping.wait(seconds)

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_delay(self) -> float:
        with self._lock:
            return self.latency.next()

    def _take_fault(self) -> Fault | None:
        """``fail_after`` first, then a queued fault, then the random mix."""
        with self._lock:
            if self.fail_after is not None and self.call_count >= self.fail_after:
                fault: Fault | None = Fault("status", status=self.always_fail_status)
            elif self._faults:
                fault = self._faults.popleft()
            else:
                fault = self.random_faults.next()
            if fault is not None:
                self.faults_served[fault.label] += 1
            return fault

    def _count(self) -> None:
        with self._lock:
            self.call_count += 1

    def _prepare(self, api: Api, body: dict[str, Any]) -> CompletionRequest | str:
        """The request the scripted model is to answer, or the JSON body of the 400 that refuses it."""
        if self.strict and api == "responses" and (error := responses_input_error(body)) is not None:
            return llama_error_body(error)
        request = completion_request(api, body)
        if self.strict and api == "responses":
            request = request.with_changes(json_schema=None)  # llama-server reads no ``text.format``
        if self.n_ctx is None:
            return request
        used = prompt_tokens(request)
        room = self.n_ctx - used
        if room <= 0:  # llama-server wants room for one generated token at least
            message = (
                f"request ({used} tokens) exceeds the available context size ({self.n_ctx} tokens), try increasing it"
            )
            return llama_error_body(message, "exceed_context_size_error", n_prompt_tokens=used, n_ctx=self.n_ctx)
        return request.with_changes(max_tokens=room if request.max_tokens is None else min(request.max_tokens, room))

    def _as_served(self, completion: Completion, request: CompletionRequest) -> Completion:
        """Strict: the reply under the loaded model's name, its input tokens counted as the window counts them."""
        if not self.strict:
            return completion
        used, out = prompt_tokens(request), completion.usage.output_tokens
        usage = Usage(input_tokens=used, output_tokens=out, total_tokens=used + out)
        return replace(completion, model=MODEL_PATH, usage=usage)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes: no 40 ms delayed-ACK stall
    server_version = "FakeLLM/1.0"
    fake: FakeLLMServer

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests and demos do not want an access log on stderr."""

    def do_GET(self) -> None:
        self.fake._record(RecordedRequest(self.path, {}, self._headers()))
        path, n_ctx = self.path.rstrip("/"), self.fake.n_ctx
        if path == "/v1/models" and self.fake.strict and n_ctx is not None:
            self._send_json(200, llama_models(n_ctx))
        elif path == "/v1/models":
            ids = [self.fake.scripted.model, *(m for m in self.fake.models if m != self.fake.scripted.model)]
            listed = [{"id": i, "object": "model", "created": 0, "owned_by": "dialectic"} for i in ids]
            self._send_json(200, {"object": "list", "data": listed})
        elif path == "/props" and self.fake.strict and n_ctx is not None:
            self._send_json(200, llama_props(n_ctx, self.fake.slots))
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
        api = APIS.get(path)
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
        request = self.fake._prepare(api, body)
        if isinstance(request, str):
            self._send(400, request.encode(), "application/json")
            return
        if self.fake.pause(self.fake._next_delay()):
            return
        fault = self.fake._take_fault()
        if fault is not None and not self._serve_fault(api, body, fault):
            return
        self._answer(api, body, request, fault)

    def _serve_fault(self, api: Api, body: dict[str, Any], fault: Fault) -> bool:
        """Serve the failure part of ``fault``; True when the request is still to be answered."""
        if fault.kind == "delay":
            return not self.fake.pause(fault.delay_s)
        if fault.kind == "status":
            self._send_error(api, fault.status, f"injected failure ({fault.status})", fault.retry_after, fault.body)
        elif fault.kind == "malformed":
            broken = fault.body or _BROKEN_JSON
            if body.get("stream"):
                self._send_sse([(None, broken)], done=api == "chat")
            else:
                self._send(200, broken.encode(), "application/json")
        elif fault.kind == "stall":
            self.fake.pause(fault.delay_s)
            self.close_connection = True
        elif fault.kind == "disconnect":
            self.close_connection = True
        return fault.kind == "truncate"

    def _answer(self, api: Api, body: dict[str, Any], request: CompletionRequest, fault: Fault | None) -> None:
        try:
            completion = asyncio.run(self.fake.scripted.complete(request))
        except Exception as exc:  # a scripted failure becomes a server error, as a real model's would
            self._send_error(api, 500, f"scripted model failed: {exc}")
            return
        if fault is not None and fault.kind == "truncate":
            completion = cut_off(completion)
        completion = self.fake._as_served(completion, request)
        strict = self.fake.strict
        self.fake._count()
        self.fake.answered_at.append(time.monotonic())
        chunk_delay = fault.chunk_delay_s if fault is not None and fault.chunk_delay_s else self.fake.chunk_delay_s
        if body.get("stream") and api == "chat":
            include_usage = self.fake.stream_usage and bool((body.get("stream_options") or {}).get("include_usage"))
            chunks = list(chat_chunks(completion, include_usage))
            if strict:
                chunks[-1]["timings"] = timings(completion)
            self._send_sse(((None, json.dumps(c)) for c in chunks), done=True, chunk_delay_s=chunk_delay)
        elif body.get("stream"):
            events = ((name, json.dumps(e)) for name, e in anthropic_events(completion, request))
            self._send_sse(events, done=False, chunk_delay_s=chunk_delay)
        elif api == "responses":
            self._send_json(200, responses_body(completion, body, always_completed=strict))
        elif api == "chat":
            scored = chat_body(completion, logprobs=body.get("logprobs") is True)
            self._send_json(200, scored | ({"timings": timings(completion)} if strict else {}))
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
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else None
        payload = body if body is not None else error_body(api, status, message)
        self._send(status, payload.encode(), "application/json", headers)

    def _send_sse(self, events: Iterable[tuple[str | None, str]], *, done: bool, chunk_delay_s: float = 0.0) -> None:
        """Stream ``(event name, data)`` pairs close-delimited (no Content-Length), then close.

        ``done`` ends the stream with OpenAI's ``data: [DONE]`` sentinel (Anthropic has none);
        ``chunk_delay_s`` pauses before every event after the first."""
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for index, (name, data) in enumerate(events):
            if index and self.fake.pause(chunk_delay_s):
                return
            prefix = f"event: {name}\n" if name else ""
            self.wfile.write(f"{prefix}data: {data}\n\n".encode())
            self.wfile.flush()
        if done:
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m dialectic.testing.fake_server",
        description="A fake OpenAI- and Anthropic-compatible LLM server.",
    )
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: any free port)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds to wait before each answer (median)")
    parser.add_argument(
        "--latency-sigma",
        type=float,
        default=0.0,
        help="spread of the latency: a lognormal draw around --latency with this sigma (0: constant)",
    )
    parser.add_argument("--no-responses-api", action="store_true", help="answer 404 on /v1/responses")
    parser.add_argument("--fail-after", type=int, default=None, help="fail every request after N completions")
    parser.add_argument("--fail-status", type=int, default=500, help="status used by --fail-after")
    parser.add_argument("--auth-key", default=None, help="reject requests whose API key differs (401)")
    parser.add_argument(
        "--fault-rate", type=float, default=0.0, help="share of completion requests that fail, 0..1 (default 0)"
    )
    parser.add_argument(
        "--fault-kinds",
        default=",".join(FAULT_KINDS),
        help=f"comma-separated kinds drawn evenly for a failing request (default {','.join(FAULT_KINDS)})",
    )
    parser.add_argument(
        "--stall",
        type=float,
        default=DEFAULT_STALL_S,
        help=f"seconds a 'stall' fault keeps a request unanswered (default {DEFAULT_STALL_S:g})",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the fault and latency draws (default 0)")
    parser.add_argument(
        "--chunk-delay", type=float, default=0.0, help="seconds between the chunks of a streamed answer (default 0)"
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="behave as llama.cpp's llama-server: typed Responses input items (400 otherwise), text.format "
        "ignored on /v1/responses, replies always 'completed', a context window, /props, the GGUF path as "
        "every reply's model",
    )
    parser.add_argument(
        "--ctx-size",
        type=int,
        default=None,
        metavar="N",
        help=f"context size of a request in tokens (default {DEFAULT_STRICT_N_CTX} with --strict, else unlimited)",
    )
    parser.add_argument(
        "--parallel", type=int, default=1, metavar="N", help="number of slots, as /props reports it (default 1)"
    )
    parser.add_argument(
        "--no-stream-usage",
        action="store_true",
        help="send no usage chunk in a chat stream, even when stream_options.include_usage asks for it",
    )
    return parser


def _server(args: argparse.Namespace) -> FakeLLMServer:
    """The server the parsed command line asks for (``ValueError`` for settings it refuses)."""
    return FakeLLMServer(
        latency_s=args.latency,
        latency_sigma=args.latency_sigma,
        responses_api=not args.no_responses_api,
        port=args.port,
        fail_after=args.fail_after,
        always_fail_status=args.fail_status,
        auth_key=args.auth_key,
        fault_rate=args.fault_rate,
        fault_kinds=parse_fault_kinds(args.fault_kinds),
        seed=args.seed,
        stall_s=args.stall,
        chunk_delay_s=args.chunk_delay,
        strict=args.strict,
        n_ctx=args.ctx_size,
        slots=args.parallel,
        stream_usage=not args.no_stream_usage,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        server = _server(args)
    except ValueError as exc:
        parser.error(str(exc))
    stopping = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    with server:
        print(server.url, flush=True)
        while not stopping.wait(0.2):
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
