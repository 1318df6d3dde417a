"""A command loads only what it uses: the modules each command imports, checked as a list (not a timer).

Every case runs the CLI in a fresh interpreter (``run(argv)`` from :mod:`dialectic.cli.app`)
and reads back ``sys.modules`` as it is when the command has finished. ``--help`` and
``--version`` must load no part of the engine, the store, pydantic or an SDK; a debate must
load neither the bench harness nor the evaluation code, nor an SDK (the providers speak over
dialectic's own HTTP wire).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

import pytest

from dialectic.batch.runner import DEFAULT_CONCURRENCY as BATCH_CONCURRENCY
from dialectic.bench.arms import DEFAULT_ARMS
from dialectic.cli import batch_command, bench_command, browse_command, debate_command
from dialectic.core.config import FORMATS
from dialectic.core.domain import DebateStatus
from dialectic.loading.config import DEFAULT_CONFIG_FILENAME
from dialectic.store import open_store
from dialectic.store.leases import STALE
from dialectic.testing.fake_server import FakeLLMServer

PROBE = (
    "import json, sys\n"
    "from dialectic.cli.app import run\n"
    "code = run(json.loads(sys.argv[1]))\n"
    "sys.stdout.flush()\n"
    "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}))\n"
)
SDKS = ("openai", "anthropic", "llama_cpp")
HARNESSES = (
    "dialectic.bench",
    "dialectic.eval",
    "dialectic.batch",
    "dialectic.cluster",
    "dialectic.cli.bench_run",
    "dialectic.cli.eval_run",
    "dialectic.cli.batch_run",
)
NOT_FOR_A_COMMANDS_HELP = (
    *SDKS,
    *HARNESSES,
    "dialectic.engine",
    "dialectic.store",
    "dialectic.llm",
    "dialectic.agents",
    "dialectic.core.config",
    "dialectic.loading.config",
    "dialectic.core.domain",
    "dialectic.core.changes",
    "dialectic.reporting.report",
    "dialectic.cli.debate_run",
    "dialectic.cli.browse_run",
    "dialectic.cli.session",
    "dialectic.cli.command_setup",
    "dialectic.tracing",
    "jinja2",
    "yaml",
    "matplotlib",
    "rich",
    "dotenv",
    "asyncio",
    "sqlite3",
    "fastapi",
    "uvicorn",
    "starlette",
    "dialectic.web",
    "dialectic.cli.serve_run",
    "mcp",
    "dialectic.mcp_server",
    "dialectic.cli.mcp_run",
    "dialectic.front",
)
NOT_FOR_HELP = (*NOT_FOR_A_COMMANDS_HELP, "pydantic")
"""A command's own ``--help`` does load pydantic: typer coerces the unset ``--help`` flag of the
app through a pydantic ``TypeAdapter`` whenever it parses a command line that names a command."""
TRACING = ("opentelemetry", "dialectic.tracing.otel")
"""Loaded only by a traced run (``--trace``)."""
ONLY_WHEN_ASKED = ("yaml", "pathspec")
"""Loaded only for a YAML configuration, and by a walk of a context directory that holds a ``.gitignore``."""
NOT_FOR_A_SCRIPTED_DEBATE = (*SDKS, *HARNESSES, *TRACING, *ONLY_WHEN_ASKED, "matplotlib")
NOT_FOR_A_SERVER_DEBATE = (*SDKS, *HARNESSES, *TRACING, *ONLY_WHEN_ASKED, "matplotlib")
"""A debate on a hosted or local server goes over dialectic's own wire: neither SDK is imported."""
NOT_FOR_STORED_DEBATES = (*SDKS, *HARNESSES, *TRACING, *ONLY_WHEN_ASKED, "matplotlib")


@dataclass(frozen=True)
class Loaded:
    code: int
    modules: frozenset[str]
    stdout: str
    stderr: str

    def among(self, packages: Iterable[str]) -> list[str]:
        """The loaded modules that are ``packages`` or inside one of them."""
        return sorted(m for m in self.modules if any(m == p or m.startswith(p + ".") for p in packages))


def run_cli(argv: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> Loaded:
    """``argv`` run by the CLI in a new interpreter, and every module it had loaded at the end."""
    result = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(argv))],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    *printed, last = result.stdout.splitlines()
    report = json.loads(last)
    return Loaded(report["code"], frozenset(report["modules"]), "\n".join(printed), result.stderr)


def write_config(directory: Path, endpoint: dict[str, str]) -> Path:
    agents = [{"id": "agent-architect", "name": "System Architect", "role": "architect", **endpoint}]
    judge = {"id": "judge-main", "name": "Technical Judge", "role": "generalist", **endpoint}
    path = directory / "debate-config.json"
    path.write_text(json.dumps({"agents": agents, "judge": judge, "debate": {"rounds": 1}}), encoding="utf-8")
    return path


@pytest.mark.parametrize("argv", [["--help"], ["--version"], []])
def test_help_and_version_load_nothing_heavy(argv: list[str], tmp_path: Path) -> None:
    loaded = run_cli(argv, tmp_path)
    assert loaded.code == 0, loaded.stderr
    assert "Usage: dialectic" in loaded.stdout or loaded.stdout.startswith("dialectic ")
    assert "typer" in loaded.modules and "dialectic.cli.app" in loaded.modules  # the probe saw the CLI load
    assert loaded.among(NOT_FOR_HELP) == []


@pytest.mark.parametrize(
    "command", ["debate", "resume", "list", "show", "export", "report", "eval", "bench", "batch", "serve", "mcp"]
)
def test_a_commands_help_loads_none_of_its_implementation(command: str, tmp_path: Path) -> None:
    loaded = run_cli([command, "--help"], tmp_path)
    assert loaded.code == 0, loaded.stderr
    assert f"Usage: dialectic {command} " in loaded.stdout
    assert loaded.among(NOT_FOR_A_COMMANDS_HELP) == []


@pytest.fixture
def scripted_debate(tmp_path: Path) -> tuple[Loaded, Path]:
    config = write_config(tmp_path, {"provider": "scripted", "model": "m"})
    loaded = run_cli(["debate", "Design a cache for a read-heavy API.", "--config", str(config)], tmp_path)
    return loaded, tmp_path


def test_a_debate_on_the_scripted_model_loads_no_sdk_bench_or_eval(scripted_debate: tuple[Loaded, Path]) -> None:
    loaded, _ = scripted_debate
    assert loaded.code == 0, loaded.stderr
    assert "Debate completed" in loaded.stderr
    assert "dialectic.engine" in loaded.modules and "dialectic.llm.scripted" in loaded.modules
    assert loaded.among(NOT_FOR_A_SCRIPTED_DEBATE) == []


@pytest.mark.parametrize(("provider", "address"), [("openai", "openai_base_url"), ("anthropic", "anthropic_base_url")])
def test_a_debate_against_a_server_loads_no_sdk(provider: str, address: str, tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        config = write_config(tmp_path, {"provider": provider, "baseUrl": getattr(server, address)})
        loaded = run_cli(
            ["debate", "Design a cache for a read-heavy API.", "--config", str(config)],
            tmp_path,
            env={"OPENAI_API_KEY": "test-key", "ANTHROPIC_API_KEY": "test-key"},
        )
        assert server.paths(), "the debate made no request to the server"
        bodies = [r.body for r in server.requests if r.body]
    if provider == "anthropic":  # each participant's calls mark the stable prefix for the prompt cache
        assert all(b["system"][0]["cache_control"] == {"type": "ephemeral"} for b in bodies)
    assert loaded.code == 0, loaded.stderr
    assert f"dialectic.llm.{provider}_provider" in loaded.modules and "dialectic.llm.http_wire" in loaded.modules
    assert loaded.among(NOT_FOR_A_SERVER_DEBATE) == []


@pytest.mark.parametrize(
    "command",
    [["list"], ["show", "{id}"], ["export", "{id}"], ["report", "{id}"], ["resume", "{id}"]],
)
def test_commands_on_stored_debates_load_no_sdk_bench_or_eval(
    command: list[str], scripted_debate: tuple[Loaded, Path]
) -> None:
    debated, root = scripted_debate
    assert debated.code == 0, debated.stderr
    store = open_store(Path(os.environ["DIALECTIC_HOME"]))
    try:
        (debate_id,) = [listing.id for listing in store.list()]
    finally:
        store.close()
    loaded = run_cli([part.format(id=debate_id) for part in command], root)
    # resume of a completed debate is refused (exit 2), after its module has loaded everything it imports
    assert loaded.code == (2 if command[0] == "resume" else 0), loaded.stderr
    assert "dialectic.store" in loaded.modules
    assert loaded.among(NOT_FOR_STORED_DEBATES) == []


def test_the_help_states_the_defaults_the_code_uses() -> None:
    """The light modules write out three values their help shows; they must stay the ones the code uses."""
    assert debate_command.DEFAULT_CONFIG_FILENAME == DEFAULT_CONFIG_FILENAME
    assert browse_command.STATUSES == (*get_args(DebateStatus), STALE)
    assert bench_command.DEFAULT_ARMS == DEFAULT_ARMS
    assert batch_command.DEFAULT_CONCURRENCY == BATCH_CONCURRENCY
    assert debate_command.FORMATS_HELP == ", ".join(FORMATS)
