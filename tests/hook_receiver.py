"""A real webhook receiver on 127.0.0.1 for the post-debate hook tests: it records every POST and answers
with the statuses it is told, in order (then 200)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from dialectic.reporting.hooks import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify_signature

SECRET = "hook-test-secret"


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.body)
        return data

    def signed_with(self, secret: str) -> bool:
        return verify_signature(self.body, secret, self.headers.get(SIGNATURE_HEADER))

    @property
    def timestamp(self) -> int:
        return int(self.headers[TIMESTAMP_HEADER])


class HookReceiver:
    """Records POSTs; ``statuses`` are the answers to the first requests (then 200)."""

    def __init__(self, statuses: list[int] | None = None) -> None:
        self.statuses = list(statuses or [])
        self.received: list[Received] = []
        self.arrived = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with receiver.arrived:
                    receiver.received.append(Received(self.path, {k: v for k, v in self.headers.items()}, body))
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                    receiver.arrived.notify_all()
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.received) >= count, timeout)
            return list(self.received)

    @contextmanager
    def running(self) -> Iterator[HookReceiver]:
        thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()
            thread.join(5)


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens: a receiver that is down."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/hook"
