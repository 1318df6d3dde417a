"""``dialectic replay`` and ``debate --cache`` against the fake server, counting the requests it receives."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import ScriptedReply, default_reply
from dialectic.testing.fake_server import FakeLLMServer

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

COMPLETION_PATHS = ("/v1/responses", "/v1/chat/completions")
ROLES = ("architect", "security")
PROBLEM = "Design a rate limiter for a public API"


def completions(server: FakeLLMServer) -> int:
    return sum(1 for path in server.paths() if path in COMPLETION_PATHS)


def answer_by_system_prompt(request: CompletionRequest) -> ScriptedReply:
    """The scripted model's reply, with free text that names the system prompt: a changed prompt, a changed reply."""
    reply = default_reply(request)
    if reply.structured is not None:
        return reply
    system = next((m.content for m in request.messages if m.role == "system"), "")
    return ScriptedReply(text=f"{reply.text}\n- As told: {system.splitlines()[0] if system else 'nothing'}")


def saved_id(stderr: str) -> str:
    match = re.search(r"Debate (deb-\S+) saved to ", stderr)
    assert match is not None, stderr
    return match.group(1)


def transcript(exported: dict[str, Any]) -> list[tuple[int, str, str, str, str]]:
    """Every contribution's round, type, author, target and text (sorted: the order calls finished in is
    left out), and the solution's text."""
    rows = sorted(
        (r["roundNumber"], c["type"], c["agentId"], c.get("targetAgentId", ""), c["content"])
        for r in exported["rounds"]
        for c in r["contributions"]
    )
    return [*rows, (0, "solution", "", "", exported["finalSolution"]["description"])]


def debated(workspace: Workspace, config: Path) -> subprocess.CompletedProcess[str]:
    """``dialectic debate`` on ``config``, which must succeed."""
    result = workspace.run("debate", PROBLEM, "-c", str(config))
    assert result.returncode == 0, result.stderr
    return result


def ledger_figures(exported: dict[str, Any]) -> tuple[int, int, int]:
    """The ledger's (cached, requests, tokens) summed over the debate's calls."""
    entries = exported["ledger"]
    tokens = sum(e.get("inputTokens", 0) + e.get("outputTokens", 0) for e in entries)
    return sum(e.get("cached", 0) for e in entries), sum(e.get("requests", 0) for e in entries), tokens


def test_a_replay_with_the_same_config_makes_no_request_and_repeats_the_transcript(workspace: Workspace) -> None:
    with FakeLLMServer() as server:
        first = debated(workspace, workspace.write_config(server, ROLES, rounds=2))
        original = saved_id(first.stderr)
        sent = completions(server)
        assert sent > 0

        replay = workspace.run("replay", original, "--verbose")
        assert replay.returncode == 0, replay.stderr
        assert completions(server) == sent, "a replay with the same config asked the provider"

    replayed = saved_id(replay.stderr)
    assert replayed != original
    assert replay.stdout == first.stdout
    assert transcript(workspace.export(replayed)) == transcript(workspace.export(original))
    exported = workspace.export(replayed)
    assert exported["replayOf"] == original
    cached, requests, tokens = ledger_figures(exported)
    assert (requests, tokens) == (0, 0) and cached == ledger_figures(workspace.export(original))[1]
    assert "from the call cache" in replay.stderr
    assert f"Call cache: {cached} hits · 0 misses" in replay.stderr
    report = workspace.run("report", replayed)
    assert report.returncode == 0, report.stderr
    assert f"- **Call cache:** {cached} hits · 0 misses" in report.stdout


def test_a_replay_with_another_judge_asks_only_the_judge(workspace: Workspace) -> None:
    with FakeLLMServer() as server:
        original = saved_id(debated(workspace, workspace.write_config(server, ROLES, rounds=2)).stderr)
        judge_calls = [e for e in workspace.export(original)["ledger"] if e["agentId"] == "judge-main"]
        assert judge_calls, "the test needs a debate in which the judge is asked"
        before = completions(server)

        replay = workspace.run("replay", original, "--judge", "another-judge-model")
        assert replay.returncode == 0, replay.stderr
        sent = completions(server) - before
        asked = [r for r in server.requests if r.path in COMPLETION_PATHS][before:]
        models = {r.body.get("model") for r in asked}

    exported = workspace.export(saved_id(replay.stderr))
    assert exported["judge"]["model"] == "another-judge-model"
    assert sent == sum(e["requests"] for e in judge_calls)
    assert models == {"another-judge-model"}, "only the judge was asked"
    for entry in exported["ledger"]:
        if entry["agentId"] == "judge-main":
            assert entry.get("cached", 0) == 0 and entry["requests"] > 0
        else:
            assert entry["cached"] > 0 and entry.get("requests", 0) == 0, entry


def test_a_replay_with_one_agents_prompt_changed_asks_that_agent_and_what_follows_from_it(workspace: Workspace) -> None:
    with FakeLLMServer(answer_by_system_prompt) as server:
        config = workspace.write_config(server, ROLES, rounds=1)
        first = debated(workspace, config)
        changed = json.loads(config.read_text(encoding="utf-8"))
        (workspace.root / "security.md").write_text("You are a terse security reviewer.", encoding="utf-8")
        changed["agents"][1]["systemPromptPath"] = "security.md"
        other = workspace.root / "changed.json"
        other.write_text(json.dumps(changed), encoding="utf-8")
        before = completions(server)

        replay = workspace.run("replay", saved_id(first.stderr), "-c", str(other))
        assert replay.returncode == 0, replay.stderr
        sent = completions(server) - before

    ledger = workspace.export(saved_id(replay.stderr))["ledger"]
    changed_agent = [e for e in ledger if e["agentId"] == "agent-security"]
    assert changed_agent and all(e.get("cached", 0) == 0 for e in changed_agent)
    first_proposal = next(e for e in ledger if e["agentId"] == "agent-architect" and e["kind"] == "proposal")
    assert first_proposal["cached"] == 1, "the unchanged agent's own proposal is served from the cache"
    critique = next(e for e in ledger if e["agentId"] == "agent-architect" and e["kind"] == "critique")
    assert critique.get("cached", 0) == 0, "a critique of the changed agent's proposal is asked again"
    assert sent == sum(e.get("requests", 0) for e in ledger)


def test_debate_reads_the_cache_only_with_the_cache_flag(workspace: Workspace) -> None:
    with FakeLLMServer() as server:
        config = workspace.write_config(server, ROLES, rounds=1)
        debated(workspace, config)
        sent = completions(server)

        debated(workspace, config)
        assert completions(server) == 2 * sent, "without --cache every request is sent again"

        cached = workspace.run("debate", PROBLEM, "-c", str(config), "--cache")
        assert cached.returncode == 0, cached.stderr
        assert completions(server) == 2 * sent, "with --cache the filed replies answer"
    assert ledger_figures(workspace.export(saved_id(cached.stderr)))[1] == 0


def test_replaying_an_unknown_debate_is_one_line_and_exit_2(workspace: Workspace) -> None:
    result = workspace.run("replay", "deb-nope")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert result.stderr.startswith("error: ") and "deb-nope" in result.stderr
    assert "Traceback" not in result.stderr
