"""End-to-end fixtures: the installed ``dialectic`` command, run as a subprocess against the fake server.

Every test runs in its own temporary directory with ``DIALECTIC_HOME`` inside it and
``OPENAI_API_KEY=test-key``; agents reach the :class:`FakeLLMServer` through ``baseUrl``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dialectic.store import open_store
from dialectic.testing.fake_server import FakeLLMServer

ROLE_NAMES = {
    "architect": "System Architect",
    "performance": "Performance Engineer",
    "security": "Security Engineer",
    "kiss": "Simplicity Advocate",
}
PROVIDER_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENROUTER_API_KEY",
    "OPENROUTER_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    *(f"{preset}_{part}" for preset in ("LLAMACPP", "OLLAMA", "VLLM", "LMSTUDIO") for part in ("API_KEY", "BASE_URL")),
    "DIALECTIC_HOME",
    "DIALECTIC_STORE",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "LANGFUSE_PUBLIC_KEY",
    "LANGFUSE_SECRET_KEY",
)
"""Variables of the developer's environment that would point a test's command elsewhere: left out."""


def dialectic_executable() -> str:
    beside = Path(sys.executable).parent / "dialectic"
    if beside.exists():
        return str(beside)
    found = shutil.which("dialectic")
    if found is None:
        pytest.fail("the dialectic command is not installed (pip install -e .)")
    return found


@dataclass
class Workspace:
    root: Path
    home: Path
    env: dict[str, str]
    executable: str

    def run(
        self,
        *args: str,
        stdin: str | None = None,
        env: Mapping[str, str | None] | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``dialectic *args``; ``stdin`` text is piped, otherwise stdin is /dev/null."""
        return subprocess.run(
            [self.executable, *args],
            cwd=self.root,
            env=self.environ(env),
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def spawn(self, *args: str, log_name: str = "run") -> subprocess.Popen[bytes]:
        """Start ``dialectic *args`` in the background, its output going to files in the workspace."""
        out = (self.root / f"{log_name}.stdout").open("wb")
        err = (self.root / f"{log_name}.stderr").open("wb")
        return subprocess.Popen(
            [self.executable, *args],
            cwd=self.root,
            env=self.environ(None),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )

    def environ(self, overrides: Mapping[str, str | None] | None) -> dict[str, str]:
        env = dict(self.env)
        for key, value in (overrides or {}).items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    def write_config(
        self,
        server: FakeLLMServer | None,
        roles: Sequence[str] = ("architect", "security"),
        *,
        rounds: int = 1,
        name: str = "debate-config.json",
        **debate: Any,
    ) -> Path:
        """A complete config (agents, judge, debate) whose agents talk to ``server``."""
        endpoint = (
            {"provider": "openai", "baseUrl": server.openai_base_url} if server is not None else {"provider": "openai"}
        )
        agents = [{"id": f"agent-{role}", "name": ROLE_NAMES[role], "role": role, **endpoint} for role in roles]
        judge = {"id": "judge-main", "name": "Technical Judge", "role": "generalist", **endpoint}
        path = self.root / name
        path.write_text(
            json.dumps({"agents": agents, "judge": judge, "debate": {"rounds": rounds, **debate}}, indent=2),
            encoding="utf-8",
        )
        return path

    def export(self, debate_id: str) -> dict[str, Any]:
        result = self.run("export", debate_id)
        assert result.returncode == 0, result.stderr
        data: dict[str, Any] = json.loads(result.stdout)
        return data

    def debate_ids(self) -> list[str]:
        if not self.home.exists():
            return []
        store = open_store(self.home)
        try:
            return [listing.id for listing in store.list()]
        finally:
            store.close()


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_ENV}
    home = tmp_path / "home"
    env.update({"OPENAI_API_KEY": "test-key", "DIALECTIC_HOME": str(home), "COLUMNS": "200"})
    return Workspace(root=tmp_path, home=home, env=env, executable=dialectic_executable())


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def fast_retry() -> dict[str, int]:
    """``debate.retry`` for tests that exercise retries: the usual attempts, without the real back-off."""
    return {"baseDelayMs": 1, "maxDelayMs": 5, "jitterMs": 1, "maxRetryAfterMs": 5}
