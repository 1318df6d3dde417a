"""A debate traced to a real OTLP/HTTP receiver on 127.0.0.1, through the installed command."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("opentelemetry.proto")

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e


class Receiver:
    """Accepts OTLP/HTTP protobuf posts on ``/v1/traces`` and keeps every span (with its headers)."""

    def __init__(self) -> None:
        self.spans: list[Any] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                with receiver.lock:
                    receiver.headers.append({k.lower(): v for k, v in self.headers.items()})
                    for resource in request.resource_spans:
                        for scope in resource.scope_spans:
                            receiver.spans.extend(scope.spans)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def names(self) -> list[str]:
        return [s.name for s in self.spans]

    def trace_ids(self) -> set[str]:
        return {s.trace_id.hex() for s in self.spans}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    r.thread.start()
    try:
        yield r
    finally:
        r.server.shutdown()
        r.server.server_close()


def attributes(span: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in span.attributes:
        value = kv.value
        out[kv.key] = getattr(value, value.WhichOneof("value")) if value.WhichOneof("value") else None
    return out


def test_the_otlp_endpoint_in_the_environment_turns_tracing_on(workspace: Workspace, receiver: Receiver) -> None:
    result = workspace.run(
        "debate", "Design a rate limiter", "--provider", "scripted", "--rounds", "1",
        env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"tracing to the OTLP endpoint {receiver.endpoint}/v1/traces" in result.stderr
    (debate_id,) = workspace.debate_ids()
    exported = workspace.export(debate_id)

    assert receiver.trace_ids() == {exported["traceId"]}
    assert receiver.names().count("debate") == 1
    requests = [s for s in receiver.spans if s.name.startswith("chat ")]
    assert len(requests) == exported["totals"]["attempts"]
    tokens_in = sum(attributes(s)["gen_ai.usage.input_tokens"] for s in requests)
    assert tokens_in == exported["totals"]["inputTokens"]
    assert all(attributes(s)["gen_ai.system"] == "scripted" for s in requests)
    assert all("gen_ai.prompt" not in attributes(s) for s in requests)


def test_a_debate_stopped_by_its_budget_and_resumed_is_one_trace(workspace: Workspace, receiver: Receiver) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}
    first = workspace.run(
        "debate", "Design a rate limiter", "--provider", "scripted", "--rounds", "1", "--budget-tokens", "1500",
        "--trace", env=env,
    )  # fmt: skip
    assert first.returncode == 3, first.stderr
    assert "error: budget reached:" in first.stderr
    (debate_id,) = workspace.debate_ids()
    spans_before = len(receiver.spans)
    assert spans_before > 0

    again = workspace.run("resume", debate_id, "--budget-tokens", "100000", "--trace-content", env=env)
    assert again.returncode == 0, again.stderr
    assert "(with prompts and replies)" in again.stderr
    exported = workspace.export(debate_id)

    assert receiver.trace_ids() == {exported["traceId"]}
    roots = [s for s in receiver.spans if s.name == "debate"]
    assert [attributes(r)["dialectic.debate.resumed"] for r in roots] == [False, True]
    later = receiver.spans[spans_before:]
    assert any("gen_ai.prompt" in attributes(s) for s in later if s.name.startswith("chat "))
    assert len([s for s in receiver.spans if s.name.startswith("chat ")]) == exported["totals"]["attempts"]
