"""Real llama.cpp HTTP servers serving the embedded model, and the installed ``dialectic`` command run against them.

Two servers, each started once per session on a free port of 127.0.0.1 and stopped at the end:

* ``llama-server``, llama.cpp's own server, compiled by ``scripts/build_llama_server.sh`` from the
  llama.cpp tree of the pinned llama-cpp-python release (``make llama-server``; about 15 minutes
  the first time, cached per version);
* ``python -m llama_cpp.server``, llama-cpp-python's server (the ``server-tests`` extra), on the
  library the ``local`` extra compiles.

Both serve the GGUF file of the default local model (``config.DEFAULT_MODELS["local"]``), which
:func:`~dialectic.llm.local_models.prepare_model` joins and verifies in the user's cache.

Without a server's prerequisites (llama-cpp-python and its server extra, the model's part packages,
the compiled ``llama-server``) its tests skip saying what to install, except where
``DIALECTIC_REQUIRE_SERVERS=1`` is set (``.ci/run`` sets it): there a missing server fails them.
A server that is there but does not start (or stops answering) always fails. Each server writes
its log to a temporary file; a failed test shows the tail of the logs of the servers it used.

:class:`RecordingProxy` is a transparent HTTP proxy a test can put in front of a server to see
which endpoints dialectic called (neither server logs request paths by default: llama-server's
request log is compiled out, llama_cpp.server's is uvicorn's access log, in another format).
"""

from __future__ import annotations

import http.client
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NoReturn

import pytest

from dialectic.core.config import DEFAULT_MODELS
from dialectic.core.errors import ConfigError
from dialectic.llm.local_models import LLAMA_CPP_REQUIREMENT, ModelSpec, default_cache_dir, prepare_model, resolve_model
from tests.e2e.conftest import PROVIDER_ENV

REQUIRE_ENV = "DIALECTIC_REQUIRE_SERVERS"
BINARY_ENV = "DIALECTIC_LLAMA_SERVER"
"""A ``llama-server`` binary to use instead of the one ``scripts/build_llama_server.sh`` caches."""
LLAMA_CPP_VERSION = LLAMA_CPP_REQUIREMENT.partition("==")[2]
MODEL = DEFAULT_MODELS["local"]
"""The name the servers serve the model under, and the one the agents' configurations send."""
THREADS = "2"
READY_DEADLINE_S = 180.0
"""Loading a 0.5B model takes seconds; the deadline only bounds a server that never gets ready."""
STOP_GRACE_S = 15.0
LOG_TAIL_LINES = 60
SERVER_EXTRA_MODULES = ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings")

LLAMA_SERVER = "llama-server"
LLAMA_CPP_PYTHON = "llama-cpp-python"
SERVER_KINDS = (LLAMA_SERVER, LLAMA_CPP_PYTHON)

LLAMA_SERVER_CONTEXT = 24_576
LLAMA_SERVER_SLOTS = 3
"""Three slots of 8,192 tokens: the three agents of a debate round are served at once (batched), each
slot keeping its agent's prompt prefix cached between turns."""
UNLIMITED_REPLY_CAP = 1_024
"""llama-server's ``-n``: tokens of a reply whose request names no limit (an evaluation's: about 500 needed)."""
LLAMA_CPP_PYTHON_CONTEXT = 8_192
"""One sequence (llama_cpp.server serves one request at a time) with the window of a llama-server slot."""


def unavailable(reason: str) -> NoReturn:
    """Skip, or fail where the servers are required (CI)."""
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"the server tests must run here ({REQUIRE_ENV}=1), but {reason}", pytrace=False)
    pytest.skip(reason)


def llama_server_binary() -> Path | None:
    """``$DIALECTIC_LLAMA_SERVER``, else the binary ``scripts/build_llama_server.sh`` caches for the pinned release."""
    explicit = os.environ.get(BINARY_ENV)
    if explicit:
        return Path(explicit).expanduser()
    cached = default_cache_dir() / "llama-server" / LLAMA_CPP_VERSION / "llama-server"
    return cached if cached.exists() else None


def binary_version(binary: Path) -> str:
    """What ``llama-server --version`` prints (``version: N (commit)`` and the compiler line), on one line."""
    result = subprocess.run(
        [str(binary), "--version"], capture_output=True, text=True, timeout=60, check=False, stdin=subprocess.DEVNULL
    )
    return " ".join((result.stdout + result.stderr).split())


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def http_get(url: str, timeout: float = 5.0) -> tuple[int, Any]:
    """GET ``url``: the status and the JSON body (``None`` when it is not JSON); status 0 when nothing answered."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError, http.client.HTTPException):
        return 0, None
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, None


@dataclass
class RunningServer:
    """A started server: where it answers, its process and its log."""

    kind: str
    base_url: str
    """The OpenAI base URL, ``http://127.0.0.1:PORT/v1``."""
    process: subprocess.Popen[bytes]
    log_path: Path
    version: str
    n_ctx: int
    """Tokens one request may hold (per slot, for llama-server)."""

    @property
    def root(self) -> str:
        return self.base_url.removesuffix("/v1")

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError as error:
            return f"(no log: {error})"
        return "\n".join(text.splitlines()[-lines:])

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """Terminate, then kill after a grace period (the process leads its own session: its children go too)."""
        if self.process.poll() is None:
            with _suppress_lookup():
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                with _suppress_lookup():
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=STOP_GRACE_S)


class _suppress_lookup:
    """``os.killpg`` on a group that already exited raises ``ProcessLookupError``: nothing to do then."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> bool:
        return kind is not None and issubclass(kind, ProcessLookupError)


def _die_with_parent() -> None:
    """In the child, before it runs the server: on Linux, ask for SIGTERM when the test process dies, so a
    pytest killed before its fixtures' teardown leaves no server behind (elsewhere: nothing)."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def start_server(
    kind: str,
    command: Callable[[int], list[str]],
    log_path: Path,
    *,
    ready: Callable[[str], bool],
    version: str,
    n_ctx: int,
    attempts: int = 3,
) -> RunningServer:
    """Start ``command(port)`` on a free port and wait (bounded) until ``ready(root_url)``.

    The port is free when chosen, but another process may take it before the server binds it: a
    server that exits saying so is started again on another port."""
    for attempt in range(1, attempts + 1):
        port = free_port()
        with log_path.open("ab") as log:
            log.write(f"\n===== {kind}: {' '.join(command(port))}\n".encode())
            log.flush()
            process = subprocess.Popen(
                command(port),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        server = RunningServer(kind, f"http://127.0.0.1:{port}/v1", process, log_path, version, n_ctx)
        deadline = time.monotonic() + READY_DEADLINE_S
        while time.monotonic() < deadline:
            if ready(server.root):
                STARTED.append(server)
                return server
            try:  # the pause between two polls, which also notices a server that exited
                process.wait(timeout=0.25)
            except subprocess.TimeoutExpired:
                continue
            said = server.log_tail(20).lower()
            if any(words in said for words in _PORT_TAKEN) and attempt < attempts:
                break
            pytest.fail(
                f"{kind} exited ({process.returncode}) before it was ready; its log ends:\n{server.log_tail()}",
                pytrace=False,
            )
        else:
            server.stop()
            pytest.fail(
                f"{kind} was not ready within {READY_DEADLINE_S:.0f} s; its log ends:\n{server.log_tail()}",
                pytrace=False,
            )
    pytest.fail(f"{kind} found no free port in {attempts} attempts", pytrace=False)


_PORT_TAKEN = ("couldn't bind http server socket", "address already in use")
"""How llama-server and uvicorn say that the port was taken."""


def llama_server_ready(root: str) -> bool:
    """``/health`` answers 503 while the model loads, 200 once requests are served."""
    status, _ = http_get(root + "/health")
    return status == 200


def models_ready(root: str) -> bool:
    """llama_cpp.server loads the model before it listens; ``/v1/models`` answering means it is ready."""
    status, body = http_get(root + "/v1/models")
    return status == 200 and isinstance(body, dict) and bool(body.get("data"))


@pytest.fixture(scope="session")
def model_file() -> Path:
    """The verified GGUF file of the default local model."""
    spec = resolve_model(MODEL)
    assert isinstance(spec, ModelSpec)
    try:
        return prepare_model(spec)
    except ConfigError as error:
        unavailable(f"the local model is not installed ({error.message})")


def llama_server_command(binary: Path, model: Path, *, context: int, slots: int) -> Callable[[int], list[str]]:
    """``--jinja``: the model's own chat template (Qwen2.5's renders the tools; llama-server parses the
    tagged calls back into ``tool_calls``); ``--no-webui``: the build has no web UI assets anyway.
    ``-n``: the most tokens a reply may have when its request sets no limit, as ``dialectic eval``'s
    do: left free, the 0.5B model can fill a JSON string for thousands of tokens (the tests would
    wait on it for many minutes)."""

    def command(port: int) -> list[str]:
        return [
            str(binary),
            *("-m", str(model), "-a", MODEL, "--host", "127.0.0.1", "--port", str(port)),
            *("-c", str(context), "-np", str(slots), "-t", THREADS, "-tb", THREADS),
            *("--jinja", "--no-webui", "--metrics", "-n", str(UNLIMITED_REPLY_CAP)),
        ]

    return command


def launch_llama_server(
    tmp_path_factory: pytest.TempPathFactory, model: Path, *, context: int, slots: int, name: str
) -> RunningServer:
    binary = llama_server_binary()
    if binary is None or not os.access(binary, os.X_OK):
        unavailable(
            "llama.cpp's llama-server is not built (make llama-server, or scripts/build_llama_server.sh: "
            f"about 15 minutes the first time; or point ${BINARY_ENV} at one)"
        )
    log = tmp_path_factory.mktemp(name) / "server.log"
    return start_server(
        LLAMA_SERVER,
        llama_server_command(binary, model, context=context, slots=slots),
        log,
        ready=llama_server_ready,
        version=binary_version(binary),
        n_ctx=context // slots,
    )


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory, model_file: Path) -> Iterator[RunningServer]:
    """llama.cpp's ``llama-server`` on the embedded model: three slots of 8,192 tokens."""
    server = launch_llama_server(
        tmp_path_factory, model_file, context=LLAMA_SERVER_CONTEXT, slots=LLAMA_SERVER_SLOTS, name="llama-server"
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def llama_cpp_python_server(tmp_path_factory: pytest.TempPathFactory, model_file: Path) -> Iterator[RunningServer]:
    """``python -m llama_cpp.server`` on the embedded model (one request at a time)."""
    missing = [name for name in SERVER_EXTRA_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        unavailable(
            f"llama-cpp-python's server is not installed (missing {', '.join(missing)}: "
            "pip install -e '.[local,server-tests]')"
        )

    def command(port: int) -> list[str]:
        return [
            sys.executable,
            *("-m", "llama_cpp.server", "--model", str(model_file), "--model_alias", MODEL),
            *("--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(LLAMA_CPP_PYTHON_CONTEXT)),
            *("--n_threads", THREADS, "--n_threads_batch", THREADS),
            *("--logits_all", "false"),  # its default keeps the logits of every prompt token: slow, unused here
        ]

    import llama_cpp

    log = tmp_path_factory.mktemp("llama-cpp-python") / "server.log"
    server = start_server(
        LLAMA_CPP_PYTHON,
        command,
        log,
        ready=models_ready,
        version=f"llama-cpp-python {llama_cpp.__version__}",
        n_ctx=LLAMA_CPP_PYTHON_CONTEXT,
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=SERVER_KINDS)
def server(request: pytest.FixtureRequest) -> RunningServer:
    """Each of the two servers in turn (a test parametrized over them)."""
    name = "llama_server" if request.param == LLAMA_SERVER else "llama_cpp_python_server"
    running: RunningServer = request.getfixturevalue(name)
    if not running.alive():
        pytest.fail(f"{running.kind} has exited ({running.process.returncode}); its log ends:\n{running.log_tail()}")
    return running


# ---------------------------------------------------------------------------------------------------
# A recording proxy


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    status: int
    body: Any
    """The request's JSON body (``None`` for a GET or a body that is not JSON)."""


@dataclass
class RecordingProxy:
    """A transparent HTTP proxy on 127.0.0.1 that forwards every request to ``upstream`` and records it.

    Replies are passed through as they arrive (a streamed one included) and the connection is closed
    after each (HTTP/1.0), so no length or chunking has to be rewritten."""

    upstream: str
    """The server's root URL, ``http://127.0.0.1:PORT``."""
    requests: list[Recorded] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def paths(self, method: str = "POST") -> Counter[str]:
        with self._lock:
            return Counter(r.path for r in self.requests if r.method == method)

    def bodies(self, path: str) -> list[Any]:
        with self._lock:
            return [r.body for r in self.requests if r.path == path]

    def record(self, entry: Recorded) -> None:
        with self._lock:
            self.requests.append(entry)

    def __enter__(self) -> RecordingProxy:
        proxy = self
        host, _, port = self.upstream.removeprefix("http://").partition(":")

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # quiet: the proxy records instead
                return None

            def do_GET(self) -> None:
                self.forward()

            def do_POST(self) -> None:
                self.forward()

            def forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_HEADERS}
                connection = http.client.HTTPConnection(host, int(port), timeout=900)
                try:
                    connection.request(self.command, self.path, body=raw or None, headers=headers)
                    reply = connection.getresponse()
                except OSError as error:
                    proxy.record(Recorded(self.command, self.path, 502, body))
                    self.send_error(502, f"upstream: {error}")
                    return
                proxy.record(Recorded(self.command, self.path, reply.status, body))
                try:
                    self.send_response(reply.status)
                    for key, value in reply.getheaders():
                        if key.lower() not in _HOP_HEADERS:
                            self.send_header(key, value)
                    self.end_headers()
                    while chunk := reply.read1(65536):
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up on the request (its timeout): nothing left to pass on
                finally:
                    connection.close()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="recording-proxy", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)


_HOP_HEADERS = frozenset({"connection", "keep-alive", "transfer-encoding", "host", "proxy-connection", "upgrade"})


# ---------------------------------------------------------------------------------------------------
# Running dialectic

ROLES = (("architect", "System Architect"), ("performance", "Performance Engineer"), ("kiss", "Simplicity Advocate"))


def dialectic_executable() -> str:
    beside = Path(sys.executable).with_name("dialectic")
    found = str(beside) if beside.exists() else shutil.which("dialectic")
    if found is None:
        pytest.fail("the dialectic command is not installed (pip install -e .)")
    return found


def agent(
    agent_id: str, name: str, role: str, base_url: str, *, max_tokens: int, api: str = "auto", **extra: Any
) -> dict[str, Any]:
    """An agent on the server: the OpenAI provider at ``base_url`` (llama.cpp ignores the key)."""
    return {
        "id": agent_id,
        "name": name,
        "role": role,
        "provider": "openai",
        "model": MODEL,
        "baseUrl": base_url,
        "api": api,
        "temperature": 0.3,
        "maxTokens": max_tokens,
        "timeout": 300_000,
        **extra,
    }


def debate_config(
    base_url: str,
    *,
    agents: int,
    rounds: int,
    max_tokens: int,
    judge_max_tokens: int,
    api: str = "auto",
    agent_extra: Mapping[str, Any] | None = None,
    **debate: Any,
) -> dict[str, Any]:
    """A debate of ``agents`` of the default roles and a judge, every one on the server at ``base_url``.

    A reply cut off at ``maxTokens`` is not continued (``maxContinuations: 0``): a continuation is one
    more request, and the time of these tests is their requests."""
    return {
        "agents": [
            agent(f"agent-{role}", name, role, base_url, max_tokens=max_tokens, api=api, **(agent_extra or {}))
            for role, name in ROLES[:agents]
        ],
        "judge": agent(
            "judge-main",
            "Technical Judge",
            "generalist",
            base_url,
            max_tokens=judge_max_tokens,
            api=api,
            temperature=0.2,
        ),
        "debate": {"rounds": rounds, "timeoutPerRound": 900_000, "maxContinuations": 0, **debate},
    }


@dataclass
class Workspace:
    """A directory with its own dialectic store, and the command run in it without any real provider key."""

    root: Path
    env: dict[str, str]
    executable: str

    @property
    def store(self) -> Path:
        return self.root / "home"

    def write(self, name: str, data: Mapping[str, Any]) -> Path:
        path = self.root / name
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")
        return path

    def run(self, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
        started = time.perf_counter()
        result = subprocess.run(
            [self.executable, *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        print(f"dialectic {args[0]}: exit {result.returncode} in {time.perf_counter() - started:.0f} s")
        return result

    def export(self, debate_id: str) -> dict[str, Any]:
        result = self.run("export", debate_id, "--store", str(self.store), timeout=60)
        assert result.returncode == 0, result.stderr
        data: dict[str, Any] = json.loads(result.stdout)
        return data


def new_workspace(root: Path) -> Workspace:
    root.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_ENV}
    env.update({"OPENAI_API_KEY": "unused-by-llama-cpp", "DIALECTIC_HOME": str(root / "home"), "COLUMNS": "200"})
    return Workspace(root=root, env=env, executable=dialectic_executable())


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return new_workspace(tmp_path)


def saved_debate_id(stderr: str) -> str | None:
    """The id in the CLI's ``Debate deb-… saved to …`` line, if it printed one."""
    found = re.search(r"^Debate (deb-[0-9A-Za-z-]+) saved to ", stderr, re.MULTILINE)
    return found.group(1) if found else None


def explain(result: subprocess.CompletedProcess[str]) -> str:
    """What a failed command said, for an assertion message (the servers' logs come with the report)."""
    return f"exit {result.returncode}\n--- stderr (end) ---\n{result.stderr[-4000:]}"


# ---------------------------------------------------------------------------------------------------
# Reporting


STARTED: list[RunningServer] = []
"""Every server this session started, for the summary at the end."""


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Which servers ran (their versions and windows), so a test log says what the tests ran against."""
    if STARTED:
        terminalreporter.section("llama.cpp servers")
        for server in STARTED:
            terminalreporter.write_line(
                f"{server.kind}: {server.version}; {server.n_ctx:,} tokens per request; log {server.log_path}"
            )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed test gets the end of the log of every server it used, as a section of its report."""
    report: pytest.TestReport = yield
    if report.failed:
        funcargs: dict[str, Any] = getattr(item, "funcargs", {})
        seen: set[int] = set()
        for value in funcargs.values():
            if isinstance(value, RunningServer) and id(value) not in seen:
                seen.add(id(value))
                report.sections.append((f"{value.kind} log ({value.log_path}), last lines", value.log_tail()))
    return report
