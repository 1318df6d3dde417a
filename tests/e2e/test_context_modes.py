"""``--context DIR`` through the installed command: the modes, the saved choice, bad values (exit 2 and 4).

The fake server's OpenAI-compatible provider does no tool calls on this branch, so a debate
with tools runs on the built-in scripted provider (which offers them a reply without calls).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dialectic.testing.fake_server import FakeLLMServer
from tests.e2e.conftest import Workspace

NOTE = "Use Redis with a token bucket."


def scripted_config(workspace: Workspace, **context: Any) -> Path:
    agents = [
        {"id": f"agent-{role}", "name": role.title(), "role": role, "provider": "scripted", "model": "m"}
        for role in ("architect", "kiss")
    ]
    judge = {"id": "judge-main", "name": "Judge", "role": "generalist", "provider": "scripted", "model": "m"}
    debate: dict[str, Any] = {"rounds": 1}
    if context:
        debate["context"] = context
    path = workspace.root / "scripted.json"
    path.write_text(json.dumps({"agents": agents, "judge": judge, "debate": debate}), encoding="utf-8")
    return path


@pytest.fixture
def docs(workspace: Workspace) -> Path:
    folder = workspace.root / "docs"
    folder.mkdir()
    (folder / "notes.md").write_text(NOTE + "\n", encoding="utf-8")
    return folder


def only_debate(workspace: Workspace) -> dict[str, Any]:
    (debate_id,) = workspace.debate_ids()
    return workspace.export(debate_id)


def test_tools_is_the_default_when_every_provider_does_tool_calls(workspace: Workspace, docs: Path) -> None:
    config = scripted_config(workspace)
    result = workspace.run("debate", "Design a rate limiter", "--config", str(config), "--context", "docs", "-v")
    assert result.returncode == 0, result.stderr
    data = only_debate(workspace)
    assert data["config"]["debate"]["context"]["mode"] == "tools"
    assert data["config"]["debate"]["context"]["dir"] == str(docs.resolve())
    assert "context" not in data  # nothing pasted
    proposals = [c for r in data["rounds"] for c in r["contributions"] if c["type"] == "proposal"]
    assert proposals and all(c["toolCalls"] == [] for c in proposals)  # offered, not used by this model
    assert f"Context: {docs.resolve()} through tools (at most 6 tool calls per contribution)" in result.stderr


def test_paste_mode_from_the_flag_and_off_from_the_file(
    workspace: Workspace, server: FakeLLMServer, docs: Path
) -> None:
    config = workspace.write_config(server)
    result = workspace.run(
        "debate", "Design it", "--config", str(config), "--context", "docs", "--context-mode", "paste"
    )
    assert result.returncode == 0, result.stderr
    assert any(NOTE in json.dumps(r.body) for r in server.requests)
    assert only_debate(workspace)["config"]["debate"]["context"]["mode"] == "paste"

    server.requests.clear()
    off = workspace.write_config(server, name="off.json", context={"dir": "docs", "mode": "off"})
    result = workspace.run("debate", "Design it", "--config", str(off))
    assert result.returncode == 0, result.stderr
    assert server.requests and not any(NOTE in json.dumps(r.body) for r in server.requests)


def test_an_openai_compatible_server_gets_the_tools_by_default(
    workspace: Workspace, server: FakeLLMServer, docs: Path
) -> None:
    """The OpenAI provider does native tool calling, so a context directory is read through tools, not pasted."""
    config = workspace.write_config(server, context={"dir": "docs"})  # relative to the config file
    result = workspace.run("debate", "Design it", "--config", str(config))
    assert result.returncode == 0, result.stderr
    data = only_debate(workspace)
    assert data["config"]["debate"]["context"] == {
        "dir": str(docs.resolve()),
        "mode": "tools",
        "maxToolCalls": 6,
        "judgeTools": False,
    }
    assert not data.get("context")  # nothing pasted
    offered = [r for r in server.requests if "list_files" in json.dumps(r.body)]
    assert offered, "no request offered the tools"


@pytest.mark.parametrize(
    ("args", "context", "code", "needle"),
    [
        (["--context", "docs", "--context-mode", "bogus"], None, 2, "--context-mode bogus: unknown mode"),
        (["--context-mode", "tools"], None, 2, "--context-mode needs a context directory"),
        (["--context", "nowhere"], None, 2, "context directory not found: nowhere"),
        (["--context", "docs/notes.md"], None, 2, "context directory is not a directory"),
        ([], {"dir": "docs", "mode": "bogus"}, 4, "debate.context.mode"),
        ([], {"dir": "docs", "maxToolCalls": 0}, 4, "debate.context.maxToolCalls"),
        ([], {"dir": "missing"}, 4, "debate.context.dir not found"),
    ],
)
def test_bad_context_values_exit_before_anything_is_made(
    workspace: Workspace, docs: Path, args: list[str], context: dict[str, Any] | None, code: int, needle: str
) -> None:
    config = scripted_config(workspace, **(context or {}))
    result = workspace.run("debate", "Design it", "--config", str(config), *args)
    assert result.returncode == code, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], result.stderr
    assert workspace.debate_ids() == []


def test_resume_keeps_the_saved_mode_and_directory(workspace: Workspace, docs: Path) -> None:
    config = scripted_config(workspace)
    args = ("debate", "Design it", "--config", str(config), "--context", "docs", "--budget-tokens", "1500")
    stopped = workspace.run(*args)
    assert stopped.returncode == 3, stopped.stderr  # the budget stops it part way
    (debate_id,) = workspace.debate_ids()
    before = workspace.export(debate_id)
    assert before["status"] == "failed"
    resumed = workspace.run("resume", debate_id, "--budget-tokens", "1000000", "-v")
    assert resumed.returncode == 0, resumed.stderr
    after = workspace.export(debate_id)
    assert after["status"] == "completed"
    assert after["config"]["debate"]["context"] == before["config"]["debate"]["context"]
    refinements = [c for r in after["rounds"] for c in r["contributions"] if c["type"] == "refinement"]
    assert refinements and all(c["toolCalls"] == [] for c in refinements)


@pytest.mark.parametrize("mode", ["tools", "paste"])
def test_a_symlink_loop_in_the_directory_is_skipped_with_a_warning(workspace: Workspace, docs: Path, mode: str) -> None:
    (docs / "loop").symlink_to("loop")
    (docs / "a").symlink_to("b")
    (docs / "b").symlink_to("a")
    config = scripted_config(workspace)
    args = ("debate", "Design it", "--config", str(config), "--context", "docs", "--context-mode", mode)
    result = workspace.run(*args)
    assert result.returncode == 0, result.stderr
    assert "a (is a symlink loop), b (is a symlink loop), loop (is a symlink loop)" in result.stderr
    assert "unexpected" not in result.stderr
    data = only_debate(workspace)
    assert data["status"] == "completed" and data["config"]["debate"]["context"]["mode"] == mode
    if mode == "paste":
        assert NOTE in data["context"]
