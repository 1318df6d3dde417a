"""What the Ray batch tests share: a local Ray cluster, the ``dialectic`` command against the fake server.

Not a test module: imported by ``tests/batch/test_ray_*.py``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dialectic.batch.store import BatchItem, BatchStore
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script
from dialectic.testing.fake_server import FakeLLMServer

KEPT_OUT = (
    "RAY_ADDRESS",
    "RAY_AUTH_TOKEN_PATH",
    "DIALECTIC_STORE",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "OPENROUTER_API_KEY",
)
RAY_ENV = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32), "RAY_USAGE_STATS_ENABLED": "0"}
"""The test clusters use token authentication with a token of their own: given in the environment of the
cluster and of the commands, so that nothing is read from or written to ``~/.ray``."""


def require_ray() -> None:
    """Skip the calling test module where Ray (the ``[ray]`` extra) is not installed; fail it instead when
    ``DIALECTIC_REQUIRE_RAY`` is set (CI: the tests must run there)."""
    if importlib.util.find_spec("ray") is not None:
        return
    if os.environ.get("DIALECTIC_REQUIRE_RAY"):
        pytest.fail("DIALECTIC_REQUIRE_RAY is set, but Ray is not installed (pip install -e '.[dev]')", pytrace=False)
    pytest.skip("the [ray] extra is not installed", allow_module_level=True)


def dialectic_executable() -> str:
    beside = Path(sys.executable).with_name("dialectic")
    return str(beside) if beside.exists() else shutil.which("dialectic") or "dialectic"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def local_cluster(cpus: int = 2) -> Iterator[str]:
    """``ray start --head`` on 127.0.0.1 (a free port, ``cpus`` CPUs, its own temp dir); its address.

    Stopped with ``ray stop --force`` at the end."""
    ray = str(Path(sys.executable).with_name("ray"))
    temp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))  # short: Ray's unix sockets live there
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in KEPT_OUT} | RAY_ENV
    command = [
        ray,
        "start",
        "--head",
        f"--port={port}",
        f"--num-cpus={cpus}",
        "--include-dashboard=false",
        "--node-ip-address=127.0.0.1",
        f"--temp-dir={temp}",
        "--disable-usage-stats",
    ]
    try:
        started = subprocess.run(command, env=env, capture_output=True, text=True, timeout=180, check=False)
        assert started.returncode == 0, started.stderr + started.stdout
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([ray, "stop", "--force"], env=env, capture_output=True, timeout=120, check=False)
        shutil.rmtree(temp, ignore_errors=True)


@dataclass
class Place:
    """A test's directory: ``DIALECTIC_HOME`` inside it, the command's output in files beside."""

    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in KEPT_OUT}
        return env | RAY_ENV | {"DIALECTIC_HOME": str(self.home), "OPENAI_API_KEY": "test-key"}

    def run(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = 170
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [dialectic_executable(), *args],
            cwd=self.root,
            env=env or self.env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def spawn(self, *args: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [dialectic_executable(), *args],
            cwd=self.root,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=(self.root / "run.stdout").open("wb"),
            stderr=(self.root / "run.stderr").open("wb"),
        )

    def stderr(self) -> str:
        path = self.root / "run.stderr"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def write_config(
        self, server: FakeLLMServer, roles: Sequence[str] = ("architect", "security"), **debate: Any
    ) -> Path:
        endpoint = {"provider": "openai", "baseUrl": server.openai_base_url}
        agents = [{"id": f"agent-{role}", "name": role.title(), "role": role, **endpoint} for role in roles]
        judge = {"id": "judge-main", "name": "Judge", "role": "generalist", **endpoint}
        path = self.root / "debate-config.json"
        path.write_text(json.dumps({"agents": agents, "judge": judge, "debate": {"rounds": 1, **debate}}))
        return path

    def write_problems(self, count: int) -> Path:
        path = self.root / "problems.jsonl"
        path.write_text(
            "".join(json.dumps({"id": f"p{i:03d}", "problem": f"Design cache {i}"}) + "\n" for i in range(count))
        )
        return path

    def items(self) -> list[BatchItem]:
        path = self.home / "batch.sqlite3"
        if not path.exists():
            return []
        with BatchStore(path) as store:
            runs = [row[0] for row in store._db.execute("SELECT id FROM batch_runs")]
            return store.items(runs[0]) if runs else []


def result_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


class PeakCounter:
    """A fake server's script that holds each request a moment and counts how many were in flight at once."""

    def __init__(self, script: Callable[[CompletionRequest], Script], hold_s: float = 0.05) -> None:
        self.script = script
        self.hold_s = hold_s
        self.most = 0
        self._in_flight = 0
        self._lock = threading.Lock()

    def __call__(self, request: CompletionRequest) -> Script:
        with self._lock:
            self._in_flight += 1
            self.most = max(self.most, self._in_flight)
        try:
            time.sleep(self.hold_s)  # long enough for the requests sent together to overlap here
            return self.script(request)
        finally:
            with self._lock:
                self._in_flight -= 1
