"""Context windows through the command: a bad ``contextWindow``, ``contextStrategy: fail`` and its resume.

The fake server plays llama-server with an 8,192-token context; the configuration claims a
1,500-token window, so the debate stops as ``fail`` says once a prompt passes 90% of it, and
``dialectic resume ID --context-window`` with the server's real size finishes it.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import pytest

from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import ScriptedReply, default_reply
from dialectic.testing.fake_server import FakeLLMServer

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

PADDING = " ".join(["The design keeps a bounded queue per tenant and sheds load early."] * 4)


def wordy(request: CompletionRequest) -> ScriptedReply:
    reply = default_reply(request)
    return reply if request.json_schema is not None else ScriptedReply(text=f"{reply.text}\n{PADDING}")


def sized(workspace: Workspace, server: FakeLLMServer, window: Any, **debate: Any) -> str:
    path = workspace.write_config(server, ("architect", "performance", "kiss"), rounds=3, **debate)
    config = json.loads(path.read_text(encoding="utf-8"))
    for agent in config["agents"]:
        agent["contextWindow"] = window
    path.write_text(json.dumps(config), encoding="utf-8")
    return str(path)


def test_a_window_too_small_is_one_config_error_line(workspace: Workspace) -> None:
    with FakeLLMServer() as server:
        result = workspace.run("debate", "Design a cache", "-c", sized(workspace, server, 10))
    assert result.returncode == 4, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "agents[0].contextWindow: must be a number of tokens, at least 256 (got 10)" in lines[0]
    assert workspace.debate_ids() == []


def test_fail_stops_with_one_line_and_a_larger_window_resumes_the_debate(workspace: Workspace) -> None:
    with FakeLLMServer(wordy, strict=True, n_ctx=8192) as server:
        config = sized(workspace, server, 1500, contextStrategy="fail")
        stopped = workspace.run("debate", "Design a rate limiter", "-c", config)
        assert stopped.returncode == 3, stopped.stderr
        assert "Traceback" not in stopped.stderr
        last = stopped.stderr.splitlines()[-1]
        assert last.startswith("error: ") and "contextStrategy is fail" in last and "--context-window" in last
        saved = re.search(r"Debate (deb-\S+) saved to .*\(failed; continue it with", stopped.stderr)
        assert saved is not None, stopped.stderr
        debate_id = saved.group(1)
        assert "warning: " in stopped.stderr and "of its 1,500-token context window" in stopped.stderr

        shown = workspace.run("show", debate_id)
        assert "Status   failed" in shown.stdout and "Context windows (past 90%: fail):" in shown.stdout
        assert "window configured; failed on 1×" in shown.stdout

        too_small = workspace.run("resume", debate_id, "--context-window", "agent-kiss=100")
        assert too_small.returncode == 2 and "at least 256" in too_small.stderr

        resumed = workspace.run("resume", debate_id, "--context-window", "8192", "--verbose")
        assert resumed.returncode == 0, resumed.stderr
        assert "Context windows (past 90%: fail):" in resumed.stderr
    exported = workspace.export(debate_id)
    assert exported["status"] == "completed"
    assert {a["contextWindow"] for a in exported["config"]["agents"]} == {8192}
    assert {w["window"] for w in exported["windows"].values()} == {8192}
    report = workspace.run("report", debate_id)
    assert "## Context windows" in report.stdout and "| 8,192 (configured) |" in report.stdout
