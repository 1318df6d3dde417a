"""``dialectic mcp``'s flags and checks, as a user meets them: one-line errors and exit codes."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from dialectic.core.extras import install_hint
from tests.mcp.conftest import command, environ, write_config


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(*args), cwd=tmp_path, env=environ(tmp_path), capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--transport", "http", "--host", "0.0.0.0"),
            "error: --host 0.0.0.0 would let other machines reach the server",
        ),
        (("--transport", "ws"), "error: --transport ws: give stdio or http"),
        (("--port", "9000"), "error: --host and --port are for --transport http"),
    ],
)
def test_bad_flags_are_one_line_errors(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    result = run(tmp_path, *args)
    assert result.returncode in (2, 4), result.stderr
    assert message in result.stderr and result.stdout == "" and "Traceback" not in result.stderr


def test_a_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the MCP server needs the 'mcp' extra")
    write_config(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run(tmp_path, "--transport", "http", "--port", str(port))
    assert result.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in result.stderr


def test_without_the_mcp_extra_the_command_names_it(tmp_path: Path) -> None:
    """The SDK missing (stubbed out as ``None``): one line naming the extra, exit 4."""
    probe = "import sys; sys.modules['mcp'] = None\nfrom dialectic.cli.app import run\nsys.exit(run(['mcp']))\n"
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=environ(tmp_path), capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 4, result.stderr
    assert result.stderr == (
        "error: dialectic mcp needs the 'mcp' extra, which is not installed (no module named 'mcp'): "
        f"{install_hint('mcp')}\n"
    )


def test_the_help_loads_neither_the_sdk_nor_the_server(tmp_path: Path) -> None:
    probe = (
        "import json, sys\nfrom dialectic.cli.app import run\ncode = run(['mcp', '--help'])\n"
        "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=environ(tmp_path), capture_output=True, text=True, timeout=60
    )
    shown = json.loads(result.stdout.splitlines()[-1])
    assert shown["code"] == 0 and "--transport" in result.stdout
    assert not [m for m in shown["modules"] if m == "mcp" or m.startswith(("mcp.", "dialectic.mcp_server"))]
