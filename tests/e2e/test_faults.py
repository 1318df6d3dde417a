"""Debates through the installed command against a fake server that fails a share of its calls.

The fault mix is the fake server's own: 429 with Retry-After, 500, a stalled reply (longer than
the agents' per-call timeout) and a dropped connection, drawn with a seed. Back-off is shrunk
(``debate.retry``) so retries cost milliseconds; what is tested is that every debate completes
and that a clean debate's contributions are all there — saved, or recorded as failed.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import pytest

from dialectic.testing.fake_server import FakeLLMServer, closed_port_url

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

PROBLEM = "Design a rate limiter for a public API"
ROLES = ("architect", "performance", "security")
CLEAN_CONTRIBUTIONS = 3 * 2 * 4  # 3 agents × 2 rounds × (proposal + 2 critiques + refinement)
SEEDS = range(1, 6)


def debate_id_in(stderr: str) -> str:
    found = re.search(r"Debate (deb-\d{8}-\d{6}-[0-9A-F]{4}) saved", stderr)
    assert found, stderr
    return found.group(1)


def debate_config(workspace: Workspace, server: FakeLLMServer, retry: dict[str, int], **agent: Any) -> str:
    path = workspace.write_config(server, ROLES, rounds=2, retry=retry)
    data = json.loads(path.read_text(encoding="utf-8"))
    for participant in (*data["agents"], data["judge"]):
        participant.update(agent)
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("fault_rate", [0.2, 0.4])
def test_debates_complete_when_a_share_of_calls_fail(
    workspace: Workspace, fast_retry: dict[str, int], fault_rate: float
) -> None:
    outcomes = []
    for seed in SEEDS:
        with FakeLLMServer(fault_rate=fault_rate, seed=seed, stall_s=5.0, retry_after_s=0.01) as server:
            config = debate_config(workspace, server, fast_retry, timeout=300)
            result = workspace.run("debate", PROBLEM, "-c", config, "--store", str(workspace.root / f"s{seed}"))
            assert result.returncode == 0, (seed, result.stderr[-2000:])
            debate_id = debate_id_in(result.stderr)
            exported = workspace.run("export", debate_id, "--store", str(workspace.root / f"s{seed}"))
            state = json.loads(exported.stdout)
            outcomes.append((state, sum(server.faults_served.values())))
    assert sum(faults for _, faults in outcomes) > 0, "no fault was injected"
    for state, _ in outcomes:
        assert state["status"] == "completed"
        if not state.get("dropped"):
            count = sum(len(r["contributions"]) for r in state["rounds"])
            assert count == CLEAN_CONTRIBUTIONS


def test_an_agent_whose_endpoint_is_down_is_dropped_and_the_debate_completes(
    workspace: Workspace, server: FakeLLMServer, fast_retry: dict[str, int]
) -> None:
    path = workspace.write_config(server, ROLES, rounds=2, retry=fast_retry)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["agents"][1]["baseUrl"] = closed_port_url() + "/v1"  # nothing listens there
    path.write_text(json.dumps(data), encoding="utf-8")
    result = workspace.run("debate", PROBLEM, "-c", str(path))
    assert result.returncode == 0, result.stderr
    assert "Performance Engineer dropped from the debate in round 1" in result.stderr
    debate_id = debate_id_in(result.stderr)
    state = workspace.export(debate_id)
    assert [d["agentId"] for d in state["dropped"]] == ["agent-performance"]
    assert "cannot connect" in state["dropped"][0]["reason"]
    shown = workspace.run("show", debate_id)
    assert "Dropped: Performance Engineer in round 1" in shown.stdout
    report = workspace.run("report", debate_id)
    assert "## Dropped agents" in report.stdout
    last = state["rounds"][-1]["contributions"]
    assert {c["agentId"] for c in last} == {"agent-architect", "agent-security"}
