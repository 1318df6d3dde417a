"""Small conventions of the installed command: --version, the README's piped answers, redacted errors,
a one-agent debate, exit codes."""

from __future__ import annotations

import json
import re
from importlib import metadata
from typing import TYPE_CHECKING

import pytest

from dialectic.testing.fake_server import FakeLLMServer, Fault

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e


def saved_id(stderr: str) -> str:
    match = re.search(r"Debate (deb-\S+) saved to ", stderr)
    assert match is not None, stderr
    return match.group(1)


def test_version(workspace: Workspace) -> None:
    result = workspace.run("--version")
    assert result.returncode == 0
    assert result.stdout == f"dialectic {metadata.version('dialectic-debate')}\n"


def test_the_readmes_piped_answers_example_produces_a_solution(workspace: Workspace, server: FakeLLMServer) -> None:
    """Three agents ask more questions (and follow-ups) than the two piped lines answer."""
    workspace.write_config(server, ("architect", "performance", "kiss"))  # ./debate-config.json, default iterations
    result = workspace.run("debate", "Design a rate limiter", "--clarify", stdin="10k users\nEU only\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip(), result.stderr
    debate_id = saved_id(result.stderr)
    exported = workspace.export(debate_id)
    assert exported["status"] == "completed"
    assert result.stdout.strip() == exported["finalSolution"]["description"].strip()
    answers = {item["id"]: item.get("answer") for group in exported["clarifications"] for item in group["items"]}
    assert (answers.pop("q1"), answers.pop("q2")) == ("10k users", "EU only")
    assert answers and set(answers.values()) == {"NA"}
    assert "warning: stdin ran out of answers" in result.stderr


def test_clarify_with_nothing_on_stdin_still_waits_for_answers(workspace: Workspace, server: FakeLLMServer) -> None:
    config = workspace.write_config(server, clarificationsMaxIterations=1)
    result = workspace.run("debate", "Design a rate limiter", "-c", str(config), "--clarify", stdin="")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    debate_id = saved_id(result.stderr)
    assert workspace.export(debate_id)["status"] == "suspended"
    assert f"dialectic resume {debate_id} --answers answers.json" in result.stderr


def test_verbose_never_shows_a_key_the_provider_echoes(workspace: Workspace) -> None:
    key = "sk-proj-Zx81Qw72Er63Ty54Ui45"
    own_key = "teamcredential-plain-words"
    with FakeLLMServer() as server:
        echoed = json.dumps(
            {
                "error": {
                    "message": f"Invalid key {key} (own {own_key}); request had Authorization: Bearer {key}",
                    "type": "invalid_request_error",
                    "code": None,
                }
            }
        )
        server.inject(Fault("status", status=400, body=echoed), times=200)
        endpoint = {"provider": "openai", "baseUrl": server.openai_base_url}
        config = {
            "agents": [
                {"id": "a1", "name": "System Architect", "role": "architect", **endpoint},
                {"id": "a2", "name": "Security Engineer", "role": "security", **endpoint, "apiKeyEnv": "TEAM_CRED"},
            ],
            "judge": {"id": "j", "name": "Judge", "role": "generalist", **endpoint},
            "debate": {"rounds": 1},
        }
        path = workspace.root / "echo.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        result = workspace.run(
            "debate", "Design a cache", "-c", str(path), "-v", env={"OPENAI_API_KEY": key, "TEAM_CRED": own_key}
        )
    assert result.returncode == 3, result.stderr
    sent = {r.headers.get("authorization") for r in server.requests}
    assert sent and sent <= {f"Bearer {key}", f"Bearer {own_key}"}  # the keys really went out (and came back)
    assert key not in result.stderr and own_key not in result.stderr
    assert key not in result.stdout and own_key not in result.stdout
    assert "[redacted]" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_one_agent_debate_is_warned_about_and_runs(workspace: Workspace, server: FakeLLMServer) -> None:
    config = workspace.write_config(server, ("architect",), rounds=2)
    result = workspace.run("debate", "Design a rate limiter", "-c", str(config))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
    lines = result.stderr.splitlines()
    started = next(i for i, line in enumerate(lines) if line.startswith("Started debate"))
    assert lines[started].endswith(": 1 agent, 2 rounds")
    assert lines[started + 1].startswith("warning: only one agent (System Architect) takes part")
    assert "critique:" not in result.stderr.replace("critique: 0 expected", "").replace("critique: done", "")
