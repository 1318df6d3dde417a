"""``dialectic serve`` as a user runs it: the installed command, as a subprocess."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dialectic.cli import serve_command
from dialectic.web.state import DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_RUNNING, ServeSettings

DIALECTIC = str(Path(sys.executable).parent / "dialectic")
CONFIG = {
    "agents": [{"id": "agent-architect", "name": "System Architect", "role": "architect", "provider": "scripted"}],
    "judge": {"id": "judge-main", "name": "Technical Judge", "role": "generalist", "provider": "scripted"},
    "debate": {"rounds": 1},
}


def test_the_help_states_the_defaults_the_server_uses() -> None:
    assert serve_command.DEFAULT_MAX_RUNNING == DEFAULT_MAX_RUNNING
    assert serve_command.DEFAULT_MAX_BODY == DEFAULT_MAX_BODY_BYTES
    assert serve_command.DEFAULT_HOST == ServeSettings().host


def environ(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "DIALECTIC_TOKEN"))}
    env["DIALECTIC_HOME"] = str(tmp_path / "home")
    return env


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DIALECTIC, "serve", *args], cwd=tmp_path, env=environ(tmp_path), capture_output=True, text=True, timeout=60
    )


def test_another_address_without_a_token_is_refused(tmp_path: Path) -> None:
    result = run(tmp_path, "--host", "0.0.0.0", "--port", "0")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("error: --host 0.0.0.0 would let other machines reach the server")
    short = run(tmp_path, "--token", "short", "--port", "0")
    assert short.returncode == 2 and "at least 16 characters" in short.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--port", "70000"), "--port must be between 0 and 65535"),
        (("--max-running", "0"), "--max-running must be at least 1"),
        (("--cors", "example.org"), "--cors example.org: give an origin"),
        (("-c", "missing.json"), "missing.json"),
    ],
)
def test_bad_flags_are_one_line_errors(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    result = run(tmp_path, *args)
    assert result.returncode in (2, 4) and message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("panel", "--model panel: give NAME=CONFIG"),
        ("Bad Name=x.json", "--model Bad Name=x.json: give NAME=CONFIG, NAME in lower-case letters"),
        ("adaptive=debate-config.json", "dialectic/adaptive is the adaptive format's model already"),
        ("panel=missing.json", "missing.json"),
    ],
)
def test_a_bad_model_flag_is_a_one_line_error(tmp_path: Path, value: str, message: str) -> None:
    (tmp_path / "debate-config.json").write_text(json.dumps(CONFIG), encoding="utf-8")
    result = run(tmp_path, "--port", "0", "--model", value)
    assert result.returncode in (2, 4) and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_a_model_named_twice_is_refused(tmp_path: Path) -> None:
    (tmp_path / "debate-config.json").write_text(json.dumps(CONFIG), encoding="utf-8")
    result = run(tmp_path, "--port", "0", "--model", "a=debate-config.json", "--model", "a=debate-config.json")
    assert result.returncode == 2 and "--model a=debate-config.json: the name a is given twice" in result.stderr


def test_a_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "debate-config.json").write_text(json.dumps(CONFIG), encoding="utf-8")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run(tmp_path, "--port", str(port))
    assert result.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in result.stderr


@pytest.mark.parametrize("module", ["fastapi", "uvicorn", "sse_starlette", "markdown_it", "nh3"])
def test_without_the_web_extra_serve_names_it(tmp_path: Path, module: str) -> None:
    """Each library of the ``web`` extra, missing (stubbed out as ``None``): one line naming the extra, exit 4."""
    probe = (
        f"import sys; sys.modules[{module!r}] = None\n"
        "from dialectic.cli.app import run\n"
        "sys.exit(run(['serve', '--port', '0']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=environ(tmp_path), capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 4, result.stderr
    assert result.stderr == (
        f"error: dialectic serve needs the 'web' extra, which is not installed (no module named '{module}'): "
        "pip install 'dialectic-debate[web]'\n"
    )


@contextmanager
def serving(cwd: Path, env: dict[str, str], store: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``dialectic serve`` on ``store`` with :data:`CONFIG`, on a free port: its URL and its process."""
    (cwd / "debate-config.json").write_text(json.dumps(CONFIG), encoding="utf-8")
    process = subprocess.Popen(
        [DIALECTIC, "serve", "--port", "0", "--store", store],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("Serving on http://127.0.0.1:"), line
    try:
        yield line.split()[2], process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    with serving(tmp_path, environ(tmp_path), str(tmp_path / "store")) as started:
        yield started


def http(url: str, body: dict[str, object] | None = None) -> tuple[int, str]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, response.read().decode("utf-8")


def test_a_debate_started_on_the_server_is_in_the_clis_store(
    server: tuple[str, subprocess.Popen[str]], tmp_path: Path
) -> None:
    url, process = server
    assert json.loads(http(url + "api/health")[1])["status"] == "ok"
    status, body = http(url + "api/debates", {"problem": "Design a cache"})
    debate_id = json.loads(body)["id"]
    assert status == 201
    _, events = http(url + f"api/debates/{debate_id}/events")  # ends once the debate is at rest
    assert "event: end" in events
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == -signal.SIGTERM  # uvicorn stops gracefully, then ends by the signal
    assert process.stderr is not None
    logged = process.stderr.read().splitlines()
    assert re.fullmatch(r"GET /api/health 200 \d+ ms", logged[0]), logged
    assert re.fullmatch(r"POST /api/debates 201 \d+ ms", logged[1]), logged
    # the event stream's line comes when the stream is closed: before or after the shutdown line
    assert any(re.fullmatch(rf"GET /api/debates/{debate_id}/events 200 \d+ ms", line) for line in logged), logged
    assert "Shutting down (SIGTERM)" in logged[2:] and len(logged) == 4, logged
    listed = subprocess.run(
        [DIALECTIC, "list", "--json", "--store", str(tmp_path / "store")],
        env=environ(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert [(d["id"], d["status"]) for d in json.loads(listed.stdout)] == [(debate_id, "completed")]
