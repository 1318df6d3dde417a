"""One runner per debate, as a user meets it: two ``dialectic resume`` at once, and a killed run.

The fake server holds every completion behind a gate while the test needs a run to be
alive mid-debate; the runs themselves are real ``dialectic`` processes.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import ScriptedReply, default_reply
from dialectic.store import open_store
from dialectic.testing.fake_server import FakeLLMServer

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

ROLES = ("architect", "performance", "kiss")
PROBLEM = "Design a rate limiter for a public API"
COMPLETION_PATHS = ("/v1/responses", "/v1/chat/completions")
TRIALS = 10
DEADLINE_S = 90


class Gate:
    """While closed, every completion the fake server is asked for waits."""

    def __init__(self) -> None:
        self._open = threading.Event()
        self._open.set()

    def close(self) -> None:
        self._open.clear()

    def open(self) -> None:
        self._open.set()

    def respond(self, request: CompletionRequest) -> ScriptedReply:
        self._open.wait(timeout=DEADLINE_S)
        return default_reply(request)


def completions(server: FakeLLMServer) -> int:
    return sum(1 for path in server.paths() if path in COMPLETION_PATHS)


def contributions(exported: dict[str, Any]) -> int:
    return sum(len(r["contributions"]) for r in exported["rounds"])


def export(workspace: Workspace, debate_id: str, store: Path | None = None) -> dict[str, Any]:
    args = ("export", debate_id, *(("--store", str(store)) if store is not None else ()))
    result = workspace.run(*args)
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def created_debate(store_dir: Path, process: subprocess.Popen[bytes]) -> str:
    """Poll the store until the process has created its debate and holds its lease; return the id."""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        assert process.poll() is None, "the run ended before its debate was created"
        if (store_dir / "debates.sqlite3").exists():
            with open_store(store_dir) as store:
                listed = store.list()
                if listed and store.read_lease(listed[0].id) is not None:
                    return listed[0].id
        time.sleep(0.02)
    raise AssertionError("the debate was never created")


def first_to_exit(processes: list[subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        for process in processes:
            if process.poll() is not None:
                return process
        time.sleep(0.02)
    raise AssertionError("neither run exited")


def stderr_of(workspace: Workspace, log_name: str) -> str:
    return (workspace.root / f"{log_name}.stderr").read_text(encoding="utf-8")


def test_two_resumes_at_once_only_one_runs(workspace: Workspace) -> None:
    gate = Gate()
    with FakeLLMServer(gate.respond, latency_s=0.01) as server:
        config = workspace.write_config(server, ROLES, rounds=2)

        clean_store = workspace.root / "clean"
        before = completions(server)
        clean = workspace.run("debate", PROBLEM, "-c", str(config), "--store", str(clean_store), "-o", "clean.json")
        assert clean.returncode == 0, clean.stderr
        clean_calls = completions(server) - before
        clean_count = contributions(json.loads((workspace.root / "clean.json").read_text(encoding="utf-8")))
        assert clean_count == 2 * (3 + 6 + 3)

        # a debate interrupted before it saved anything: every trial resumes a copy of it
        seed_store = workspace.root / "seed"
        gate.close()
        seeding = workspace.spawn("debate", PROBLEM, "-c", str(config), "--store", str(seed_store), log_name="seed")
        debate_id = created_debate(seed_store, seeding)
        seeding.send_signal(signal.SIGINT)
        assert seeding.wait(timeout=DEADLINE_S) == 130
        gate.open()
        assert export(workspace, debate_id, seed_store)["status"] == "interrupted"

        for trial in range(TRIALS):
            store = workspace.root / f"trial-{trial}"
            shutil.copytree(seed_store, store)
            gate.close()
            before = completions(server)
            names = [f"trial-{trial}-{side}" for side in ("a", "b")]
            runs = [workspace.spawn("resume", debate_id, "--store", str(store), log_name=name) for name in names]
            loser = first_to_exit(runs)
            winner = runs[1 - runs.index(loser)]
            loser_stderr = stderr_of(workspace, names[runs.index(loser)])
            gate.open()
            assert winner.wait(timeout=DEADLINE_S) == 0, stderr_of(workspace, names[runs.index(winner)])

            assert loser.returncode == 2, loser_stderr
            assert loser_stderr.splitlines() == [
                next(line for line in loser_stderr.splitlines() if line.startswith("error: "))
            ]
            assert f"error: debate {debate_id} is being run by pid {winner.pid} on host " in loser_stderr
            assert " since " in loser_stderr
            final = export(workspace, debate_id, store)
            assert final["status"] == "completed"
            assert contributions(final) == clean_count, f"trial {trial}"
            assert completions(server) - before == clean_calls, f"trial {trial}"


def test_a_killed_run_shows_as_stale_and_resumes_with_a_takeover_notice(workspace: Workspace) -> None:
    gate = Gate()
    with FakeLLMServer(gate.respond) as server:
        config = workspace.write_config(server, ROLES, rounds=1)
        gate.close()
        run = workspace.spawn("debate", PROBLEM, "-c", str(config), log_name="killed")
        try:
            debate_id = created_debate(workspace.home, run)

            listed = json.loads(workspace.run("list", "--json").stdout)
            assert [(row["id"], row["status"]) for row in listed] == [(debate_id, "running")]
            shown = workspace.run("show", debate_id).stdout
            assert f"Status   running (pid {run.pid} on host " in shown
            refused = workspace.run("resume", debate_id)
            assert refused.returncode == 2
            assert f"is being run by pid {run.pid}" in refused.stderr
        finally:
            run.send_signal(signal.SIGKILL)
            run.wait(timeout=DEADLINE_S)

        table = workspace.run("list")
        assert table.returncode == 0
        row = next(line for line in table.stdout.splitlines() if debate_id in line)
        assert "stale" in row.split()
        stale = json.loads(workspace.run("list", "--json", "--status", "stale").stdout)
        assert [(r["id"], r["status"]) for r in stale] == [(debate_id, "stale")]
        assert json.loads(workspace.run("list", "--json", "--status", "running").stdout) == []
        shown = workspace.run("show", debate_id).stdout
        assert f"continue it with: dialectic resume {debate_id})" in shown
        assert "Status   stale (saved as running, but no process runs it any more;" in shown

        gate.open()
        resumed = workspace.run("resume", debate_id)
    assert resumed.returncode == 0, resumed.stderr
    assert f"warning: took over debate {debate_id} from pid {run.pid} on host " in resumed.stderr
    assert "that process is gone" in resumed.stderr
    final = export(workspace, debate_id)
    assert final["status"] == "completed"
    assert contributions(final) == 3 + 6 + 3
    assert json.loads(workspace.run("list", "--json").stdout)[0]["status"] == "completed"
