"""A judge that always fails does not sink the debate: ``dialectic debate`` exits 0, a participant wrote the
synthesis, and the report, the export and ``show`` name it."""

from __future__ import annotations

import json
import re

import pytest

from dialectic.testing.fake_server import FakeLLMServer
from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

PROBLEM = "Design a rate limiter for a public API"


def test_a_judge_that_always_fails_is_replaced_by_a_participant(
    workspace: Workspace, server: FakeLLMServer, fast_retry: dict[str, int]
) -> None:
    with FakeLLMServer(fail_after=0) as broken:  # every completion answered 500
        path = workspace.write_config(server, ("architect", "security"), retry=fast_retry)
        data = json.loads(path.read_text(encoding="utf-8"))
        data["judge"]["baseUrl"] = broken.openai_base_url
        path.write_text(json.dumps(data), encoding="utf-8")
        result = workspace.run("debate", PROBLEM, "-c", str(path))
        assert broken.faults_served["500"] > 0  # the judge was asked, and failed every time
    assert result.returncode == 0, result.stderr
    assert "System Architect writes the synthesis in its place (judge.fallback)" in result.stderr
    found = re.search(r"deb-[0-9A-Za-z-]+", result.stderr)
    assert found is not None
    debate_id = found.group(0)
    state = workspace.export(debate_id)
    assert state["status"] == "completed"
    assert state["finalSolution"]["synthesizedBy"] == "agent-architect"
    assert "500" in state["finalSolution"]["judgeFailure"]
    report = workspace.run("report", debate_id)
    assert report.returncode == 0
    assert "**Synthesized by:** System Architect" in report.stdout
    assert "System Architect wrote the synthesis in its place (judge.fallback)" in report.stdout
