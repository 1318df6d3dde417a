"""Memory across debates through the installed command: ``debate.memory: on`` gives round 1 the
outcomes of similar past debates; ``dialectic memory list | show | forget``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from dialectic.testing.fake_server import FakeLLMServer
from tests.e2e.test_debate_flow import saved_id

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

FIRST = "Design a rate limiter for a public HTTP API with bursty clients"
SIMILAR = "Design a rate limiter for an internal HTTP API with bursty batch clients"
UNRELATED = "Choose a font pairing for a wedding invitation"


def run_debate(workspace: Workspace, server: FakeLLMServer, problem: str, **debate: Any) -> tuple[str, list[str]]:
    """The debate's id and the user prompts its agents got in round 1 (proposals)."""
    config = workspace.write_config(server, name=f"config-{len(workspace.debate_ids())}.json", **debate)
    before = len(server.requests)
    result = workspace.run("debate", problem, "-c", str(config))
    assert result.returncode == 0, result.stderr
    return saved_id(result.stderr), proposal_prompts(server, before)


def completions(server: FakeLLMServer) -> int:
    return sum(1 for path in server.paths() if path in ("/v1/responses", "/v1/chat/completions"))


def proposal_prompts(server: FakeLLMServer, since: int) -> list[str]:
    prompts = []
    for request in server.requests[since:]:
        messages = request.body.get("messages") or []
        users = [m["content"] for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)]
        if users and "\n## Task\nPropose a design for the problem above." in users[-1]:
            prompts.append(users[-1])
    return prompts


def test_a_debate_recalls_a_similar_one_and_forgetting_removes_it(workspace: Workspace, server: FakeLLMServer) -> None:
    first, first_prompts = run_debate(workspace, server, FIRST)
    assert first_prompts and not any("Past debate" in p for p in first_prompts)
    lessons = workspace.export(first)["finalSolution"]["description"].split()[0]

    second, prompts = run_debate(workspace, server, SIMILAR, memory="on")
    assert len(prompts) == 2
    for prompt in prompts:
        assert "## Past debates (memory)" in prompt
        assert f"### Past debate {first} (" in prompt
        assert f"Its problem: {FIRST}" in prompt
        assert "Its lessons: " in prompt and lessons in prompt
    exported = workspace.export(second)
    assert [m["debateId"] for m in exported["memories"]] == [first]
    report = workspace.run("report", second)
    assert report.returncode == 0, report.stderr
    assert "## Memory" in report.stdout and f"`{first}`" in report.stdout

    listed = workspace.run("memory", "list")
    assert listed.returncode == 0, listed.stderr
    assert first in listed.stdout and second in listed.stdout
    as_json = json.loads(workspace.run("memory", "list", "--json").stdout)
    assert {row["debateId"] for row in as_json} == {first, second}
    shown = workspace.run("memory", "show", first)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"{first}: usable as memory")
    assert f"### Past debate {first}" in shown.stdout

    forgotten = workspace.run("memory", "forget", first)
    assert forgotten.returncode == 0, forgotten.stderr
    assert "no longer used as memory" in forgotten.stdout
    assert first not in workspace.run("memory", "list").stdout
    assert "forgotten" in workspace.run("memory", "show", first).stdout
    again = workspace.run("memory", "forget", first)
    assert again.returncode == 0 and "already forgotten" in again.stdout
    assert workspace.export(first)["finalSolution"]  # the debate itself is kept

    third, prompts = run_debate(workspace, server, SIMILAR, memory="on")
    assert prompts and all(first not in p for p in prompts)
    assert all(f"### Past debate {second} (" in p for p in prompts)  # the other similar debate still is
    assert [m["debateId"] for m in workspace.export(third)["memories"]] == [second]


def test_memory_off_changes_nothing_and_unrelated_debates_are_not_recalled(
    workspace: Workspace, server: FakeLLMServer
) -> None:
    _, alone = run_debate(workspace, server, FIRST)
    run_debate(workspace, server, FIRST)
    later, again = run_debate(workspace, server, FIRST)
    assert again == alone  # byte-identical prompts with past debates in the store
    assert "memories" not in workspace.export(later)
    assert "## Memory" not in workspace.run("report", later).stdout

    unrelated, prompts = run_debate(workspace, server, UNRELATED, memory="on")
    assert prompts and not any("Past debate" in p for p in prompts)
    assert workspace.export(unrelated)["memories"] == []
    assert "no similar past debate was found" in workspace.run("report", unrelated).stdout


@pytest.mark.parametrize("command", ["show", "forget"])
def test_unknown_ids_are_one_line_errors(workspace: Workspace, command: str) -> None:
    result = workspace.run("memory", command, "deb-20990101-000000-0000")
    assert result.returncode == 2
    assert result.stderr.startswith("error: no debate with id 'deb-20990101-000000-0000'")
    assert result.stderr.count("\n") == 1


def test_an_empty_store_lists_no_memory(workspace: Workspace) -> None:
    result = workspace.run("memory", "list")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("No debate usable as memory")


def test_a_batch_of_related_problems_learns_as_it_goes(workspace: Workspace, server: FakeLLMServer) -> None:
    config = workspace.write_config(server, memory="on")
    problems = workspace.root / "problems.jsonl"
    rows = [{"id": "p1", "problem": FIRST}, {"id": "p2", "problem": SIMILAR}]
    problems.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    out = workspace.root / "results.jsonl"
    result = workspace.run("batch", str(problems), "-c", str(config), "-o", str(out), "--concurrency", "1")
    assert result.returncode == 0, result.stderr
    ids = {line["id"]: line["debate_id"] for line in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    first, second = (workspace.export(ids[key]) for key in ("p1", "p2"))
    if first["createdAt"] > second["createdAt"]:
        first, second = second, first
    assert first["memories"] == []
    assert [m["debateId"] for m in second["memories"]] == [first["id"]]


def test_a_replay_recalls_what_its_original_recalled_and_asks_nothing(
    workspace: Workspace, server: FakeLLMServer
) -> None:
    first, _ = run_debate(workspace, server, FIRST)
    second, _ = run_debate(workspace, server, SIMILAR, memory="on")
    sent = completions(server)
    replay = workspace.run("replay", second)
    assert replay.returncode == 0, replay.stderr
    assert completions(server) == sent  # the same prompts: every reply comes from the call cache
    replayed = workspace.export(saved_id(replay.stderr))
    assert [m["debateId"] for m in replayed["memories"]] == [first]  # not the original it replays
