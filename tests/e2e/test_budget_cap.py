"""`dialectic debate --budget-usd` through the installed command: the cap holds without `maxTokens` (issue 21, item 8).

The agents and the judge set no ``maxTokens`` and the model rambles on; they run on ``gpt-4o-mini``
(built-in price) behind the fake OpenAI-compatible server, which counts words as tokens and cuts a
reply at the request's limit as a real server does.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from dialectic.engine.budget import DEFAULT_REPLY_TOKENS
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script
from dialectic.testing.fake_server import FakeLLMServer
from dialectic.testing.harness import scripted_judge

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

LONG = " ".join(f"w{i}" for i in range(3 * DEFAULT_REPLY_TOKENS))
COMPLETIONS = ("/v1/chat/completions", "/v1/responses")


def long_winded(request: CompletionRequest) -> Script:
    return scripted_judge()(request) if request.json_schema is not None else LONG


@pytest.mark.parametrize("cap", ["0.01", "0.004"])
def test_budget_usd_is_never_passed_by_agents_without_max_tokens(workspace: Workspace, cap: str) -> None:
    with FakeLLMServer(long_winded) as server:
        config = workspace.write_config(server, ("architect", "security"), rounds=2)
        data = json.loads(config.read_text(encoding="utf-8"))
        assert all("maxTokens" not in p for p in [*data["agents"], data["judge"]])
        result = workspace.run("debate", "Design a rate limiter", "-c", str(config), "--budget-usd", cap)

    assert result.returncode == 3, result.stderr
    assert "budget reached:" in result.stderr
    (debate_id,) = workspace.debate_ids()
    exported = workspace.export(debate_id)
    assert exported["failureReason"] == "budget"
    totals = exported["totals"]
    assert totals["costUsd"] is not None and 0 < totals["costUsd"] <= float(cap)
    bodies = [r.body for r in server.requests if r.path in COMPLETIONS]
    assert totals["requests"] == len(bodies) > 0  # every request the server answered is counted
    # Each request went out with the default reply limit, so the server could not reply longer.
    assert {b.get("max_tokens", b.get("max_completion_tokens", b.get("max_output_tokens"))) for b in bodies} == {
        DEFAULT_REPLY_TOKENS
    }
