"""Shared by the MCP server's tests: a scripted configuration, and the server run as users run it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

SCRIPTED = {"provider": "scripted", "model": "m"}
CONFIG = {
    "agents": [
        {"id": "agent-architect", "name": "Architect", "role": "architect", **SCRIPTED},
        {"id": "agent-security", "name": "Security", "role": "security", **SCRIPTED},
    ],
    "judge": {"id": "judge", "name": "Judge", "role": "generalist", **SCRIPTED},
    "debate": {"rounds": 2},
}
TOKEN = "test-token-0123456789abcdef"
SLOW_SCRIPTED = Path(__file__).with_name("slow_scripted.py")
"""Runs the command line with a scripted model that takes a while to answer (see the file)."""


def write_config(directory: Path) -> Path:
    path = directory / "debate-config.json"
    path.write_text(json.dumps(CONFIG), encoding="utf-8")
    return path


def environ(tmp_path: Path) -> dict[str, str]:
    """The environment a server subprocess gets: no keys, no token, its own data directory."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "DIALECTIC_TOKEN"))}
    env["DIALECTIC_HOME"] = str(tmp_path / "home")
    return env


def command(*args: str, slow: bool = False) -> list[str]:
    """``python -m dialectic mcp ARGS`` (with ``slow``: on a scripted model that answers in tenths of a second)."""
    entry = [str(SLOW_SCRIPTED)] if slow else ["-m", "dialectic"]
    return [sys.executable, *entry, "mcp", *args]
