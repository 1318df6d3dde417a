"""Debates run through the installed command: output, export, report, clarifications."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import pytest

from dialectic.testing.fake_server import FakeLLMServer

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

ID_PATTERN = r"deb-\d{8}-\d{6}-[0-9A-F]{4}"


def saved_id(stderr: str) -> str:
    match = re.search(rf"Debate ({ID_PATTERN}) saved to ", stderr)
    assert match is not None, stderr
    return match.group(1)


def test_happy_debate_prints_the_solution_and_saves_it(workspace: Workspace, server: FakeLLMServer) -> None:
    config = workspace.write_config(server)
    result = workspace.run("debate", "Design a rate limiter", "-c", str(config))
    assert result.returncode == 0, result.stderr
    debate_id = saved_id(result.stderr)
    assert str(workspace.home) in result.stderr.splitlines()[-1]
    exported = workspace.export(debate_id)
    assert result.stdout.strip() == exported["finalSolution"]["description"].strip()
    assert result.stdout.strip()
    assert "Round 1/1" in result.stderr
    assert "proposal: System Architect done" in result.stderr


def test_json_output_has_the_seed_shape(workspace: Workspace, server: FakeLLMServer) -> None:
    config = workspace.write_config(server)
    result = workspace.run("debate", "Design a rate limiter", "-c", str(config), "-o", "out/result.json")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    data: dict[str, Any] = json.loads((workspace.root / "out" / "result.json").read_text(encoding="utf-8"))
    assert re.fullmatch(ID_PATTERN, data["id"])
    assert data["status"] == "completed"
    assert data["problem"] == "Design a rate limiter"
    assert data["currentRound"] == 1
    assert {"createdAt", "updatedAt", "promptSources", "finalSolution"} <= data.keys()
    contributions = data["rounds"][0]["contributions"]
    assert sorted(c["type"] for c in contributions) == ["critique"] * 2 + ["proposal"] * 2 + ["refinement"] * 2
    for c in contributions:
        assert {"agentId", "agentRole", "type", "content", "metadata"} <= c.keys()
        assert {"tokensUsed", "latencyMs", "model"} <= c["metadata"].keys()
    critiques = [c for c in contributions if c["type"] == "critique"]
    assert {c["targetAgentId"] for c in critiques} == {"agent-architect", "agent-security"}
    assert data["finalSolution"]["description"]
    assert [a["agentId"] for a in data["promptSources"]["agents"]] == ["agent-architect", "agent-security"]
    assert data == workspace.export(data["id"])


def test_text_output_and_report(workspace: Workspace, server: FakeLLMServer) -> None:
    config = workspace.write_config(server)
    result = workspace.run(
        "debate", "Design a rate limiter", "-c", str(config), "-o", "solution.txt", "--report", "reports/run"
    )
    assert result.returncode == 0, result.stderr
    debate_id = saved_id(result.stderr)
    solution = (workspace.root / "solution.txt").read_text(encoding="utf-8")
    assert solution.strip() == workspace.export(debate_id)["finalSolution"]["description"].strip()
    report = workspace.root / "reports" / "run.md"
    assert f"Generated report: {report.relative_to(workspace.root)}" in result.stderr
    text = report.read_text(encoding="utf-8")
    assert text.startswith("# Debate report: Design a rate limiter")
    headings = [line for line in text.splitlines() if line.startswith("## ") or line.startswith("### Round")]
    for section in (
        "## Problem",
        "## Agents",
        "## Judge",
        "## Rounds",
        "### Round 1",
        "## Final synthesis",
        "## Totals",
    ):
        assert section in headings, section
    lines = result.stderr.splitlines()
    assert lines[-1].startswith(f"Debate {debate_id} saved to ")


def test_verbose_shows_prompt_sources_and_totals(workspace: Workspace, server: FakeLLMServer) -> None:
    config = workspace.write_config(server)
    result = workspace.run("debate", "Design a rate limiter", "-c", str(config), "--verbose")
    assert result.returncode == 0, result.stderr
    assert "System Architect (architect): system built-in default" in result.stderr
    assert "Summarization: enabled, threshold 5000 chars" in result.stderr
    assert re.search(r"Totals: 1 round, 6 contributions, [\d.]+s", result.stderr)
    assert re.search(r"Usage: 7 calls · [\d,]+ tokens \([\d,]+ input · [\d,]+ output\) · cost \$[\d.]+", result.stderr)


def test_agents_flag_filters_roles(workspace: Workspace, server: FakeLLMServer) -> None:
    config = workspace.write_config(server, roles=("architect", "security", "performance"))
    result = workspace.run("debate", "Design a rate limiter", "-c", str(config), "--agents", "security,performance")
    assert result.returncode == 0, result.stderr
    exported = workspace.export(saved_id(result.stderr))
    assert [a["id"] for a in exported["agents"]] == ["agent-security", "agent-performance"]


def test_list_and_show(workspace: Workspace, server: FakeLLMServer) -> None:
    config = workspace.write_config(server)
    debate_id = saved_id(workspace.run("debate", "Design a rate limiter", "-c", str(config)).stderr)
    listing = workspace.run("list")
    assert listing.returncode == 0
    assert debate_id in listing.stdout and "completed" in listing.stdout
    rows = json.loads(workspace.run("list", "--json", "--status", "completed").stdout)
    assert [row["id"] for row in rows] == [debate_id]
    assert json.loads(workspace.run("list", "--json", "--status", "failed").stdout) == []
    show = workspace.run("show", debate_id)
    assert show.returncode == 0
    assert "Status   completed" in show.stdout
    assert "Round 1: 2 proposals, 2 critiques, 2 refinements" in show.stdout
    report = workspace.run("report", debate_id, "-o", "r")
    assert report.returncode == 0
    assert (workspace.root / "r.md").exists()


def pending_answers(stderr: str) -> dict[str, str]:
    """The example answers object printed under the pending questions."""
    lines = stderr.splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith("Write the answers to a JSON file"))
    example: dict[str, str] = json.loads(lines[index + 1])
    return example


def clarified(workspace: Workspace, debate_id: str) -> list[tuple[str, str | None]]:
    exported = workspace.export(debate_id)
    return [(item["id"], item.get("answer")) for group in exported["clarifications"] for item in group["items"]]


def test_clarify_with_piped_answers_completes(workspace: Workspace, server: FakeLLMServer) -> None:
    config = workspace.write_config(server, clarificationsMaxIterations=1)
    result = workspace.run("debate", "Design a rate limiter", "-c", str(config), "--clarify", stdin="10k users\n\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
    assert "[System Architect (architect)] Q (q1):" in result.stderr
    assert clarified(workspace, saved_id(result.stderr)) == [("q1", "10k users"), ("q2", "NA")]


def test_clarify_when_piped_lines_run_out_answers_the_rest_na_and_completes(
    workspace: Workspace, server: FakeLLMServer
) -> None:
    config = workspace.write_config(server, clarificationsMaxIterations=1)
    result = workspace.run("debate", "Design a rate limiter", "-c", str(config), "--clarify", stdin="10k users\n")
    assert result.returncode == 0, result.stderr
    debate_id = saved_id(result.stderr)
    assert result.stdout.strip() == workspace.export(debate_id)["finalSolution"]["description"].strip()
    assert "warning: stdin ran out of answers: 1 question answered NA" in result.stderr
    assert "  [Security Engineer (security)] Q (q2):" in result.stderr
    assert clarified(workspace, debate_id) == [("q1", "10k users"), ("q2", "NA")]


def test_clarify_without_stdin_lists_questions_then_resume_completes(
    workspace: Workspace, server: FakeLLMServer
) -> None:
    config = workspace.write_config(server, clarificationsMaxIterations=1)
    result = workspace.run("debate", "Design a rate limiter", "-c", str(config), "--clarify")
    assert result.returncode == 0, result.stderr
    debate_id = saved_id(result.stderr)
    assert "is waiting for answers to 2 clarifying questions:" in result.stderr
    assert "[Security Engineer (security)] Q (q2):" in result.stderr
    assert pending_answers(result.stderr) == {"q1": "NA", "q2": "NA"}
    again = workspace.run("resume", debate_id)
    assert again.returncode == 0
    assert "is waiting for answers" in again.stderr
    (workspace.root / "a.json").write_text(json.dumps({"q1": "lots", "q2": "none"}), encoding="utf-8")
    resumed = workspace.run("resume", debate_id, "--answers", "a.json", "-o", "final.json")
    assert resumed.returncode == 0, resumed.stderr
    final = json.loads((workspace.root / "final.json").read_text(encoding="utf-8"))
    assert final["status"] == "completed"
    assert clarified(workspace, debate_id) == [("q1", "lots"), ("q2", "none")]
    done = workspace.run("resume", debate_id)
    assert done.returncode == 2
    assert "already completed" in done.stderr
