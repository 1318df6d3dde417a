"""Every deliberation protocol is selectable from the command line and shows up in show and report."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from dialectic.testing.fake_server import FakeLLMServer

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e


def debate_id_in(stderr: str) -> str:
    found = re.search(r"Debate (deb-\d{8}-\d{6}-[0-9A-F]{4}) saved", stderr)
    assert found, stderr
    return found.group(1)


@pytest.mark.parametrize(
    "name", ["free-form", "round-limited", "structured", "convergence-seeking", "simultaneous", "vote"]
)
def test_format_flag_runs_the_protocol(workspace: Workspace, server: FakeLLMServer, name: str) -> None:
    config = workspace.write_config(server, ("architect", "security"), rounds=2)
    result = workspace.run("debate", "Design a cache", "-c", str(config), "--format", name)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
    assert f"({name})" in result.stderr  # "Started debate … (free-form): 2 agents, 2 rounds"
    debate_id = debate_id_in(result.stderr)
    shown = workspace.run("show", debate_id)
    assert f"Format: {name}" in shown.stdout
    state = workspace.export(debate_id)
    assert state["config"]["debate"]["format"] == name
    report = workspace.run("report", debate_id).stdout
    assert f"- **Format:** {name}" in report
    if name != "critique-refine":
        assert "verdict" in state and "## Verdict" in report


def test_an_unknown_format_is_refused_before_anything_is_sent(workspace: Workspace, server: FakeLLMServer) -> None:
    config = workspace.write_config(server)
    result = workspace.run("debate", "Design a cache", "-c", str(config), "--format", "shouting")
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1].startswith("error: --format shouting: unknown format")
    assert server.requests == [] and workspace.debate_ids() == []


def test_max_answers_sets_the_adaptive_budget_saved_with_the_debate(
    workspace: Workspace, server: FakeLLMServer
) -> None:
    config = workspace.write_config(server, ("architect", "security"), rounds=1)
    args = ("debate", "What is 17 * 3?", "-c", str(config), "--format", "adaptive", "--max-answers", "9")
    result = workspace.run(*args)
    assert result.returncode == 0, result.stderr
    state = workspace.export(debate_id_in(result.stderr))
    assert state["config"]["debate"]["format"] == "adaptive"
    assert state["config"]["debate"]["answers"]["maxAnswers"] == 9
    answers = [c for r in state["rounds"] for c in r["contributions"]]
    assert 2 <= len(answers) <= 9


@pytest.mark.parametrize("budget", ["1", "65"])
def test_a_max_answers_out_of_range_is_refused_before_anything_is_sent(
    workspace: Workspace, server: FakeLLMServer, budget: str
) -> None:
    config = workspace.write_config(server)
    result = workspace.run("debate", "What is 17 * 3?", "-c", str(config), "--max-answers", budget)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == f"error: --max-answers must be between 2 and 64 (got {budget})"
    assert server.requests == [] and workspace.debate_ids() == []
