"""``dialectic bench`` through the installed command, every arm on the embedded model behind llama-server."""

from __future__ import annotations

import json

import pytest

from tests.servers.conftest import RecordingProxy, RunningServer, Workspace, debate_config, explain

pytestmark = pytest.mark.servers

ARMS = ("single", "self-consistency:3", "debate:3x2", "dialectic")
ITEMS = 2
PLANNED_CALLS = {"single": 1, "self-consistency:3": 3, "debate:3x2": 6}
"""Calls per item of the sampling arms (a cut-off reply's continuations come on top)."""


@pytest.mark.timeout(900)
def test_bench_runs_every_arm_and_fails_no_item(llama_server: RunningServer, workspace: Workspace) -> None:
    """llama-server only: the bench's arms send nothing the two servers treat differently but the judge's
    structured reply, which the debate tests already take through both (and the bench costs minutes)."""
    with RecordingProxy(llama_server.root) as proxy:
        config = workspace.write(
            "bench-config.json",
            debate_config(proxy.base_url, agents=2, rounds=1, max_tokens=64, judge_max_tokens=256),  # api: auto
        )
        out, report = workspace.root / "bench.json", workspace.root / "bench.md"
        result = workspace.run(
            "bench",
            "arithmetic",
            *("-n", str(ITEMS), "--operands", "3", "--arms", ",".join(ARMS), "-c", str(config)),
            *("--max-tokens", "64", "--store", str(workspace.store), "-o", str(out), "--report", str(report)),
            timeout=840,
        )
    assert result.returncode == 0, explain(result)
    document = json.loads(out.read_text(encoding="utf-8"))
    arms = {arm["arm"]: arm for arm in document["arms"]}
    assert set(arms) == set(ARMS)
    for name, arm in arms.items():
        assert arm["items"] == ITEMS, (name, arm)
        assert arm["failed"] == 0 and arm["failed_replies"] == 0, (name, arm)
        assert arm["input_tokens"] > 0 and arm["output_tokens"] > 0, (name, arm)
        if name in PLANNED_CALLS:
            assert arm["calls"] >= PLANNED_CALLS[name] * ITEMS, (name, arm)
    assert arms["dialectic"]["calls"] >= 7 * ITEMS  # 2 proposals, 2 critiques, 2 refinements, the synthesis

    assert len(document["items"]) == ITEMS
    for item in document["items"]:
        assert set(item["arms"]) == set(ARMS)
        assert all(arm["outcome"] != "failed" for arm in item["arms"].values()), item
        assert len(item["arms"]["debate:3x2"]["rounds"]) == 2
    assert "failed" not in result.stderr.lower(), result.stderr[-3000:]
    assert report.read_text(encoding="utf-8") == result.stdout
    # api: auto speaks Chat Completions to any endpoint but OpenAI's own, and every call was answered.
    sent = proxy.paths()
    assert set(sent) == {"/v1/chat/completions"}, sent
    assert sent["/v1/chat/completions"] >= sum(arm["calls"] for arm in arms.values()), sent
    assert {r.status for r in proxy.requests if r.method == "POST"} == {200}
    assert "| single | 2 |" in result.stdout and "| dialectic | 2 |" in result.stdout
