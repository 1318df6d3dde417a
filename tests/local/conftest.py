"""Running the installed ``dialectic`` command as a subprocess, without API keys, for the local-model tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

RunDialectic = Callable[..., subprocess.CompletedProcess[str]]


def dialectic_command() -> str:
    """The ``dialectic`` executable beside this interpreter, else the one on PATH."""
    beside = Path(sys.executable).with_name("dialectic")
    found = str(beside) if beside.exists() else shutil.which("dialectic")
    assert found, "the dialectic command is not installed (pip install -e .)"
    return found


@pytest.fixture
def run_dialectic() -> RunDialectic:
    """``run_dialectic(cwd, *args, timeout=…, env=…)``: the command with no ``*_API_KEY`` in its
    environment (so the local model is the default), stdin closed, output captured."""

    def run(
        cwd: Path, *args: str, timeout: float, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        environ = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        return subprocess.run(
            [dialectic_command(), *args],
            cwd=cwd,
            env={**environ, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )

    return run
