"""Debates through the installed ``dialectic`` command on the embedded model behind real llama.cpp servers.

* a three-agent, three-round debate that may read a context directory through tools, to the judge's
  structured solution, then ``show`` and ``export`` of it (llama-server), and ``dialectic eval`` of
  it with an evaluator on each server;
* the ``api`` setting: ``chat`` sends Chat Completions only, ``responses`` the Responses API only
  (a recording proxy in front of the server counts the requests by path).

Every agent's ``maxTokens`` is small so that a debate takes a minute or a few on two cores. The
three-round debate runs on llama-server only: llama_cpp.server answers one request at a time and
re-reads most of each prompt, so the same debate takes about three times as long there (over ten
minutes on two cores); what it does differently (one request at a time, no Responses API, its own
reading of ``response_format``) is exercised by the smaller debate of the ``api`` test and by eval.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.servers.conftest import (
    LLAMA_CPP_PYTHON,
    LLAMA_SERVER,
    MODEL,
    RecordingProxy,
    RunningServer,
    Workspace,
    debate_config,
    explain,
    new_workspace,
    saved_debate_id,
)

pytestmark = pytest.mark.servers

PROBLEM = "Design rate limiting for our public HTTP API. Read the project notes first."
CONTEXT_FILES = {
    "requirements.md": "# Requirements\n\nThe public API serves 1,000 requests per second at peak.\n"
    "Each API key may make at most 100 requests per minute; over that, answer 429 with Retry-After.\n",
    "current-setup.md": "# Current setup\n\nTwo stateless app servers behind nginx. Redis 7 is already deployed "
    "for sessions. PostgreSQL 15 holds the API keys.\n",
    "constraints.txt": "No new paid services. The limiter may add at most 5 ms to the p99 latency.\n",
}
TOOL_NAMES = {"list_files", "file_read", "context_search"}
CRITERIA = (
    "functionalCompleteness",
    "performanceScalability",
    "security",
    "maintainabilityEvolvability",
    "regulatoryCompliance",
    "testability",
    "requirementsFulfillment",
    "overall",
)
"""The criteria ``dialectic eval`` scores (docs/eval.md), by their JSON keys."""
AGENT_TOKENS = 64
CHAT, RESPONSES = "/v1/chat/completions", "/v1/responses"


@dataclass
class DebateRun:
    """The context debate, run once and shared by the tests that read it."""

    workspace: Workspace
    result: subprocess.CompletedProcess[str]
    requests: RecordingProxy
    debate_id: str | None
    exported: dict[str, Any] | None


@pytest.fixture(scope="module")
def context_debate(llama_server: RunningServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DebateRun]:
    """Three agents (``api: chat``), three rounds, ``--context docs`` (tools), through a recording proxy."""
    workspace = new_workspace(tmp_path_factory.mktemp("context-debate"))
    docs = workspace.root / "docs"
    docs.mkdir()
    for name, text in CONTEXT_FILES.items():
        (docs / name).write_text(text, encoding="utf-8")
    with RecordingProxy(llama_server.root) as proxy:
        config = workspace.write(
            "debate-config.json",
            debate_config(
                proxy.base_url,
                agents=3,
                rounds=3,
                max_tokens=AGENT_TOKENS,
                judge_max_tokens=384,
                api="chat",
                # each contribution may read twice; summaries left out (a 3-round history fits 8k tokens)
                context={"maxToolCalls": 2},
                summarization={"enabled": False},
            ),
        )
        result = workspace.run(
            "debate",
            PROBLEM,
            *("--config", str(config), "--context", "docs", "--store", str(workspace.store)),
            *("-o", str(workspace.root / "debate.json")),
            timeout=840,
        )
    exported = None
    if result.returncode == 0:
        exported = json.loads((workspace.root / "debate.json").read_text(encoding="utf-8"))
    yield DebateRun(workspace, result, proxy, saved_debate_id(result.stderr), exported)


@pytest.mark.timeout(900)
def test_three_agents_three_rounds_with_a_context_directory_reach_a_structured_solution(
    llama_server: RunningServer, context_debate: DebateRun
) -> None:
    run = context_debate
    assert run.result.returncode == 0, explain(run.result)
    debate = run.exported
    assert debate is not None and debate["status"] == "completed"
    assert debate["config"]["debate"]["context"]["mode"] == "tools"
    assert debate["config"]["debate"]["context"]["dir"] == str((run.workspace.root / "docs").resolve())

    assert [r["roundNumber"] for r in debate["rounds"]] == [1, 2, 3]
    agents = {"agent-architect", "agent-performance", "agent-kiss"}
    for number, round_ in enumerate(debate["rounds"], start=1):
        contributions = round_["contributions"]
        assert all(c["status"] == "ok" and c["content"].strip() for c in contributions), contributions
        assert {c["agentId"] for c in contributions if c["type"] == "refinement"} == agents
        assert len([c for c in contributions if c["type"] == "critique"]) == 6  # each agent critiques the two others
        if number == 1:
            assert {c["agentId"] for c in contributions if c["type"] == "proposal"} == agents
        for contribution in contributions:
            if number > 1 and contribution["type"] == "proposal":
                continue  # the previous round's refinement, carried over: no call of its own
            assert contribution["metadata"]["outputTokens"] > 0, contribution
            if not contribution.get("toolCalls"):  # one request, not continued: maxTokens holds
                assert contribution["metadata"]["outputTokens"] <= AGENT_TOKENS, contribution["metadata"]

    solution = debate["finalSolution"]
    assert solution["description"].strip()
    if not solution["structured"]:
        # the 0.5B judge may write the problem back: then a participant's position is recorded instead, said so
        assert "restated the problem" in run.result.stderr, explain(run.result)
        assert solution["description"].startswith(("_The judge's synthesis restated the problem", "No solution:"))

    # api: chat: every call went to Chat Completions, and the agents were offered the context tools there.
    sent = run.requests.paths()
    assert sent[CHAT] >= 31 and set(sent) == {CHAT}, sent  # 3 proposals, 3 × (6 critiques, 3 refinements), synthesis
    assert {r.status for r in run.requests.requests if r.method == "POST"} == {200}
    offered = [
        body
        for body in run.requests.bodies(CHAT)
        if {tool["function"]["name"] for tool in body.get("tools") or ()} >= {"list_files", "file_read"}
    ]
    assert offered, "no request offered the context tools"
    calls = [call for r in debate["rounds"] for c in r["contributions"] for call in c.get("toolCalls") or ()]
    print(f"tool calls made by the agents: {[c.get('name') for c in calls]}")
    assert {c.get("name") for c in calls} <= TOOL_NAMES

    assert run.debate_id is not None
    shown = run.workspace.run("show", run.debate_id, "--store", str(run.workspace.store), timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "Status   completed" in shown.stdout
    assert "Context  " in shown.stdout and "(tools)" in shown.stdout
    assert shown.stdout.count(", 6 critiques, 3 refinements") == 3, shown.stdout
    assert run.workspace.export(run.debate_id)["finalSolution"] == solution


@pytest.mark.timeout(600)
def test_eval_scores_the_debate(server: RunningServer, context_debate: DebateRun) -> None:
    """The evaluator runs on each server in turn; the debate it scores is the one llama-server had."""
    run = context_debate
    if run.result.returncode != 0 or run.debate_id is None:
        pytest.skip("the debate to evaluate did not complete (its own test says why)")
    workspace = run.workspace
    evaluator = {
        "id": f"eval-{server.kind}",
        "name": "Local evaluator",
        "provider": "openai",
        "model": MODEL,
        "baseUrl": server.base_url,
        "timeout": 300_000,
    }
    config = workspace.write(f"eval-{server.kind}.json", {"agents": [evaluator]})
    out = workspace.root / f"scores-{server.kind}.json"
    result = workspace.run(
        "eval", *("-c", str(config), "-d", run.debate_id, "--store", str(workspace.store), "-o", str(out)), timeout=540
    )
    assert result.returncode == 0, explain(result)
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["debateId"] == run.debate_id and report["samples"] == 1
    (outcome,) = report["evaluators"]
    assert (outcome["id"], outcome["status"], outcome["failures"]) == (evaluator["id"], "ok", [])
    (sample,) = outcome["samples"]
    assert sample["usage"]["outputTokens"] > 0
    criteria = set(CRITERIA)
    assert set(sample["scores"]) == criteria and set(report["scores"]) == criteria
    for key in criteria:
        assert 1 <= sample["scores"][key]["score"] <= 10, sample["scores"][key]
        assert report["scores"][key]["n"] == 1 and report["scores"][key]["mean"] == sample["scores"][key]["score"]


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("server", "api"),
    [
        # llama-server with api: chat is the context debate above (every call checked there).
        pytest.param(LLAMA_SERVER, "responses", id="llama-server-responses"),
        pytest.param(LLAMA_CPP_PYTHON, "chat", id="llama-cpp-python-chat"),
    ],
    indirect=["server"],
)
def test_the_api_setting_picks_the_one_endpoint_every_call_goes_to(
    server: RunningServer, api: str, workspace: Workspace
) -> None:
    expected, other = (CHAT, RESPONSES) if api == "chat" else (RESPONSES, CHAT)
    with RecordingProxy(server.root) as proxy:
        config = workspace.write(
            "debate-config.json",
            debate_config(proxy.base_url, agents=2, rounds=1, max_tokens=48, judge_max_tokens=256, api=api),
        )
        result = workspace.run(
            "debate", "Design a URL shortener.", "--config", str(config), "--store", str(workspace.store), timeout=540
        )
    sent = proxy.paths()
    print(f"{server.kind}, api {api}: {dict(sent)}")
    assert result.returncode == 0, explain(result)
    assert sent[expected] >= 7 and sent[other] == 0, sent  # 2 proposals, 2 critiques, 2 refinements, the synthesis
    refused = [r for r in proxy.requests if r.method == "POST" and r.status != 200]
    if server.kind == LLAMA_CPP_PYTHON:
        # Its server takes a schema only as json_object + schema: the judge's first structured request
        # (json_schema) is refused with a 500 naming response_format, and the provider asks again in its form.
        assert [(r.status, r.body["response_format"]["type"]) for r in refused] == [(500, "json_schema")], refused
        formats = [r.body["response_format"]["type"] for r in proxy.requests if "response_format" in (r.body or {})]
        assert formats[-1] == "json_object", formats
    else:
        assert refused == [], refused
    debate_id = saved_debate_id(result.stderr)
    assert debate_id is not None, result.stderr
    debate = workspace.export(debate_id)
    assert debate["status"] == "completed" and debate["finalSolution"]["description"].strip()


@pytest.mark.timeout(300)
def test_responses_on_a_server_without_them_fails_plainly_without_switching_api(
    llama_cpp_python_server: RunningServer, workspace: Workspace
) -> None:
    """llama_cpp.server has no Responses API (404): ``api: responses`` is an order, not a preference, so the
    debate stops with the endpoint's error instead of quietly speaking Chat Completions."""
    with RecordingProxy(llama_cpp_python_server.root) as proxy:
        config = workspace.write(
            "debate-config.json",
            debate_config(proxy.base_url, agents=2, rounds=1, max_tokens=48, judge_max_tokens=256, api="responses"),
        )
        result = workspace.run(
            "debate", "Design a URL shortener.", "--config", str(config), "--store", str(workspace.store), timeout=240
        )
    sent = proxy.paths()
    assert result.returncode == 3, explain(result)
    assert sent[RESPONSES] >= 1 and sent[CHAT] == 0, sent
    assert {r.status for r in proxy.requests if r.path == RESPONSES} == {404}
    assert "404" in result.stderr or "not found" in result.stderr.lower(), result.stderr[-2000:]
