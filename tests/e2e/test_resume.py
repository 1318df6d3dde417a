"""A debate killed mid-way (SIGKILL) or interrupted (Ctrl-C, SIGTERM, SIGHUP) resumes without redoing saved work."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from dialectic.core.domain import DebateState
from dialectic.store import open_store
from dialectic.testing.fake_server import FakeLLMServer

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

COMPLETION_PATHS = ("/v1/responses", "/v1/chat/completions")
ROLES = ("architect", "performance", "kiss")
PROBLEM = "Design a rate limiter for a public API"


def completions(server: FakeLLMServer) -> int:
    return sum(1 for path in server.paths() if path in COMPLETION_PATHS)


def wait_for(workspace: Workspace, ready: Callable[[DebateState], bool], process: subprocess.Popen[bytes]) -> str:
    """Poll the store until the (only) debate satisfies ``ready``; return its id."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, "the debate ended before the test could stop it"
        ids = workspace.debate_ids()
        if ids:
            store = open_store(workspace.home)
            try:
                state = store.load(ids[0])
            finally:
                store.close()
            if ready(state):
                return state.id
        time.sleep(0.02)
    raise AssertionError("the debate never reached the expected point")


def saved_contributions(exported: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for r in exported["rounds"] for c in r["contributions"]]


def llm_results_saved(state: DebateState) -> int:
    """How many LLM calls' results the saved state holds (carried-over proposals made no call)."""
    made = [c for c in state.all_contributions() if not c.metadata.carried_over]
    summaries = sum(len(r.summaries) for r in state.rounds)
    return len(made) + summaries


def test_resume_after_kill_redoes_only_the_calls_in_flight(workspace: Workspace) -> None:
    with FakeLLMServer(latency_s=0.3) as server:
        config = workspace.write_config(server, ROLES, rounds=2)
        baseline = workspace.run("debate", PROBLEM, "-c", str(config), "--store", str(workspace.root / "baseline"))
        assert baseline.returncode == 0, baseline.stderr
        needed = completions(server)
        assert needed > 0

        before_run = completions(server)
        process = workspace.spawn("debate", PROBLEM, "-c", str(config), log_name="killed")
        try:
            debate_id = wait_for(workspace, lambda s: len(s.all_contributions()) >= len(ROLES), process)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
        time.sleep(0.2)  # let the server record any request that was still on the wire
        sent_before_kill = completions(server) - before_run

        killed = workspace.export(debate_id)
        assert killed["status"] == "running"
        store = open_store(workspace.home)
        try:
            in_flight = sent_before_kill - llm_results_saved(store.load(debate_id))
        finally:
            store.close()
        # at most a round's proposals and critiques run at once (3 + 3 × 2), whatever the timing of the kill
        assert 0 <= in_flight <= len(ROLES) * len(ROLES)

        resumed = workspace.run("resume", debate_id)
        assert resumed.returncode == 0, resumed.stderr
        assert resumed.stdout.strip()
        total = completions(server) - before_run

    assert needed <= total <= needed + in_flight, (needed, total, in_flight)
    final = workspace.export(debate_id)
    assert final["status"] == "completed"
    for before_round, after_round in zip(killed["rounds"], final["rounds"], strict=False):
        before = before_round["contributions"]
        assert after_round["contributions"][: len(before)] == before, "a saved contribution was redone"
    reference = workspace.run("export", saved_id(baseline.stderr), "--store", str(workspace.root / "baseline"))
    assert reference.returncode == 0
    assert essence(final) == essence(json.loads(reference.stdout))


def saved_id(stderr: str) -> str:
    match = re.search(r"Debate (deb-\S+) saved to ", stderr)
    assert match is not None, stderr
    return match.group(1)


def essence(exported: dict[str, Any]) -> list[tuple[int, str, str, str]]:
    """Who contributed what in which round, sorted: (round, type, author, target).

    Contents are left out on purpose: from round 2 on, the prompts list the previous round's
    contributions in the order they arrived, so two uninterrupted runs may already differ.
    """
    return sorted(
        (r["roundNumber"], c["type"], c["agentId"], c.get("targetAgentId", ""))
        for r in exported["rounds"]
        for c in r["contributions"]
    )


def test_ctrl_c_saves_the_debate_as_interrupted_and_resume_completes(workspace: Workspace) -> None:
    # 1 s a call: on a loaded machine the debate must still be running when Ctrl-C reaches it
    with FakeLLMServer(latency_s=1.0) as server:
        config = workspace.write_config(server, ROLES, rounds=1)
        process = workspace.spawn("debate", PROBLEM, "-c", str(config), log_name="interrupted")
        debate_id = wait_for(workspace, lambda s: len(s.all_contributions()) >= 1, process)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130
        stderr = (workspace.root / "interrupted.stderr").read_text(encoding="utf-8")
        assert "Traceback" not in stderr
        assert f"resume it with: dialectic resume {debate_id}" in stderr
        assert stderr.count(f"dialectic resume {debate_id}") == 1, stderr
        assert workspace.export(debate_id)["status"] == "interrupted"
        kept = saved_contributions(workspace.export(debate_id))

        resumed = workspace.run("resume", debate_id)
        assert resumed.returncode == 0, resumed.stderr
    final = workspace.export(debate_id)
    assert final["status"] == "completed"
    assert saved_contributions(final)[: len(kept)] == kept


@pytest.mark.parametrize(("stop", "exit_code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_and_sighup_save_the_debate_as_interrupted_and_resume_completes(
    workspace: Workspace, stop: signal.Signals, exit_code: int
) -> None:
    with FakeLLMServer(latency_s=0.3) as server:
        config = workspace.write_config(server, ROLES, rounds=2)  # long enough that the signal lands mid-run
        process = workspace.spawn("debate", PROBLEM, "-c", str(config), log_name="stopped")
        debate_id = wait_for(workspace, lambda s: len(s.all_contributions()) >= 1, process)
        process.send_signal(stop)
        assert process.wait(timeout=30) == exit_code
        stderr = (workspace.root / "stopped.stderr").read_text(encoding="utf-8")
        assert "Traceback" not in stderr
        notice = stderr.strip().splitlines()[-1]
        assert notice == (
            f"terminated by {stop.name}; debate {debate_id} was saved as interrupted; "
            f"resume it with: dialectic resume {debate_id}"
        )
        assert stderr.count(f"dialectic resume {debate_id}") == 1, stderr
        assert (workspace.root / "stopped.stdout").read_text(encoding="utf-8") == ""
        assert workspace.export(debate_id)["status"] == "interrupted"
        kept = saved_contributions(workspace.export(debate_id))

        resumed = workspace.run("resume", debate_id)
        assert resumed.returncode == 0, resumed.stderr
        assert resumed.stdout.strip()
    final = workspace.export(debate_id)
    assert final["status"] == "completed"
    assert saved_contributions(final)[: len(kept)] == kept
    agents = len(ROLES)
    per_round = agents + agents * (agents - 1) + agents  # proposals, critiques, refinements
    assert len(saved_contributions(final)) == 2 * per_round
