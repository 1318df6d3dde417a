"""A seat a person plays, at the command line: turns typed (piped) into ``dialectic debate``, a debate with no
input that suspends and resumes with ``--turn-file``, ``--editor``, and bad turn files refused in one line."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from dialectic.testing.fake_server import FakeLLMServer

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

ID = r"deb-\d{8}-\d{6}-[0-9A-F]{4}"
PROBLEM = "Design a rate limiter for a public API"


def config_with_alice(workspace: Workspace, server: FakeLLMServer, **debate: Any) -> Path:
    """The architect on the fake server, and Alice, a seat a person plays."""
    path = workspace.write_config(server, ("architect",), **debate)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["agents"].append({"id": "agent-alice", "name": "Alice", "role": "security", "provider": "human"})
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def alices(exported: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for r in exported["rounds"] for c in r["contributions"] if c["agentId"] == "agent-alice"]


def suspended(workspace: Workspace, server: FakeLLMServer) -> str:
    """A free-form debate, run with no input: it stops at Alice's turn."""
    config = config_with_alice(workspace, server, format="free-form")
    result = workspace.run("debate", PROBLEM, "-c", str(config))
    assert result.returncode == 0, result.stderr
    match = re.search(rf"Debate ({ID}) is waiting for a human turn", result.stderr)
    assert match is not None, result.stderr
    return match.group(1)


def test_turns_written_at_the_terminal_complete_the_debate(workspace: Workspace, server: FakeLLMServer) -> None:
    config = config_with_alice(workspace, server)
    turns = "Per-key token buckets.\nKeys are hashed.\n.\nThe architect forgets abuse.\n.\nBuckets, and a ban list.\n"
    result = workspace.run("debate", PROBLEM, "-c", str(config), stdin=turns)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()  # the solution
    debate_id = re.search(rf"Debate ({ID}) saved to", result.stderr).group(1)  # type: ignore[union-attr]
    exported = workspace.export(debate_id)
    assert exported["status"] == "completed"
    written = {c["type"]: c for c in alices(exported)}
    assert written["proposal"]["content"] == "Per-key token buckets.\nKeys are hashed."
    assert written["critique"]["content"] == "The architect forgets abuse."
    assert written["refinement"]["content"] == "Buckets, and a ban list."
    assert {c["metadata"]["playedBy"] for c in written.values()} == {"person"}
    assert "proposal: Alice done (written by a person)" in result.stderr
    report = workspace.run("report", debate_id)
    assert report.returncode == 0 and "Alice (security) (human)" in report.stdout


def test_with_no_input_it_suspends_and_resume_with_a_turn_file_completes(
    workspace: Workspace, server: FakeLLMServer
) -> None:
    debate_id = suspended(workspace, server)
    asked = len(server.requests)
    exported = workspace.export(debate_id)
    assert exported["status"] == "suspended"
    [turn] = exported["humanTurns"]
    assert turn["key"] == "agent-alice:response:1" and "text" not in turn
    shown = workspace.run("show", debate_id)
    assert "Human turns waiting: 1" in shown.stdout and "agent-alice:response:1" in shown.stdout
    (workspace.root / "turn.txt").write_text("Hash the keys; ban abusers.\n", encoding="utf-8")
    result = workspace.run("resume", debate_id, "--turn-file", "turn.txt")
    assert result.returncode == 0, result.stderr
    exported = workspace.export(debate_id)
    assert exported["status"] == "completed"
    [written] = alices(exported)
    assert written["content"] == "Hash the keys; ban abusers." and written["metadata"]["playedBy"] == "person"
    later = [json.dumps(r.body) for r in server.requests[asked:]]
    assert not any("Take your turn" in body and "System Architect" in body for body in later)  # not asked again


def test_a_turn_written_in_the_editor(workspace: Workspace, server: FakeLLMServer) -> None:
    debate_id = suspended(workspace, server)
    editor = workspace.root / "editor.sh"
    editor.write_text('#!/bin/sh\ngrep -q "Take your turn" "$1" && echo "Written in the editor." >> "$1"\n')
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    result = workspace.run("resume", debate_id, "--editor", env={"EDITOR": str(editor), "VISUAL": None})
    assert result.returncode == 0, result.stderr
    [written] = alices(workspace.export(debate_id))
    assert written["content"] == "Written in the editor."


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--turn-file", "missing.txt"), "missing.txt"),
        (("--turn-file", "empty.txt"), "the file is empty"),
        (("--turn-file", "agent-bob:response:1=turn.txt"), "'agent-bob:response:1' is not a human turn it waits for"),
        (("--turn-file", "turn.txt", "--turn-file", "turn.txt"), "2 texts for the 1 human turn"),
    ],
)
def test_a_bad_turn_file_is_one_line_and_changes_nothing(
    workspace: Workspace, server: FakeLLMServer, args: tuple[str, ...], words: str
) -> None:
    debate_id = suspended(workspace, server)
    (workspace.root / "empty.txt").write_text(" \n", encoding="utf-8")
    (workspace.root / "turn.txt").write_text("A turn.", encoding="utf-8")
    before = workspace.export(debate_id)
    result = workspace.run("resume", debate_id, *args)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], result.stderr
    assert workspace.export(debate_id) == before


def test_a_turn_file_for_a_debate_that_waits_for_none_is_refused(workspace: Workspace, server: FakeLLMServer) -> None:
    config = workspace.write_config(server, ("architect",))
    done = workspace.run("debate", PROBLEM, "-c", str(config))
    assert done.returncode == 0, done.stderr
    debate_id = re.search(rf"Debate ({ID}) saved to", done.stderr).group(1)  # type: ignore[union-attr]
    (workspace.root / "turn.txt").write_text("A turn.", encoding="utf-8")
    result = workspace.run("resume", debate_id, "--turn-file", "turn.txt")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"error: debate {debate_id} is already completed; see it with: dialectic show {debate_id}"
    ]
