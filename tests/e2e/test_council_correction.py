"""``dialectic debate --format council`` and ``--format correction`` with the installed command: on the scripted
provider, and over HTTP on the fake server, shown by ``show``, ``report`` and ``export``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script, default_reply
from dialectic.testing.fake_server import FakeLLMServer

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

ROLES = ("architect", "security", "kiss")
DESIGNS = {
    "System Architect": "A token bucket per client, kept in Redis.",
    "Security Engineer": "A sliding log per API key, audited.",
    "Simplicity Advocate": "A fixed window counter in memory.",
}
"""Each role's proposal, by the role's title in its proposal prompt."""


def debate_id_in(stderr: str) -> str:
    found = re.search(r"Debate (deb-\d{8}-\d{6}-[0-9A-F]{4}) saved", stderr)
    assert found, stderr
    return found.group(1)


def reply(request: CompletionRequest) -> Script:
    """A model behind HTTP, told apart by what it is asked (the tags stay on this side of the wire)."""
    prompt = request.last_user
    if "FINAL RANKING" in prompt:  # a council's ranking: the simplest design first, the others as shown
        blocks = re.findall(r"^### (Response [A-Z])\n(.*?)\n", prompt, re.MULTILINE)
        order = sorted(blocks, key=lambda block: "fixed window" not in block[1])
        return "FINAL RANKING:\n" + "\n".join(f"{n}. {label}" for n, (label, _) in enumerate(order, 1))
    if "## An answer to check" in prompt:  # a correction's check: the audited log is named wrong, with evidence
        if "audited" in prompt:
            return "Violation: the log grows without bound\nEvidence: A sliding log per API key"
        return "I checked every requirement and found nothing wrong."
    if "## A reviewer's objection" in prompt:
        return "A sliding window counter per API key, audited."
    for title, design in DESIGNS.items():
        if prompt.startswith(f"You are the {title} in a design debate.") and "Propose a design" in prompt:
            return design
    return default_reply(request)


@pytest.fixture
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(reply) as server:
        yield server


def test_a_council_over_http_ranks_counts_and_synthesizes_from_the_top(
    workspace: Workspace, fake: FakeLLMServer
) -> None:
    config = workspace.write_config(fake, ROLES)
    result = workspace.run("debate", "Design a rate limiter", "-c", str(config), "--format", "council")
    assert result.returncode == 0, result.stderr
    assert "(council)" in result.stderr and "council (Borda): " in result.stderr
    assert fake.call_count == 2 * len(ROLES) + 1  # answers, rankings, the judge's synthesis
    debate_id = debate_id_in(result.stderr)
    state = workspace.export(debate_id)
    council = state["council"]
    assert council["standings"][0] == {"agentId": "agent-kiss", "points": 6}
    assert council["chosen"][0] == "agent-kiss" and len(council["chosen"]) == 2
    synthesis = [body for r in fake.requests if "The council's top-ranked answers" in (body := json.dumps(r.body))]
    assert len(synthesis) == 1
    titles = {"agent-architect": "System Architect", "agent-security": "Security Engineer"}
    left_out = next(agent for agent in titles if agent not in council["chosen"])
    assert DESIGNS[titles[left_out]] not in synthesis[0]
    assert DESIGNS["Simplicity Advocate"] in synthesis[0]
    shown = workspace.run("show", debate_id).stdout
    assert "Format: council" in shown and "Council (Borda): Simplicity Advocate 6" in shown
    assert "Round 1 (council): 3 proposals, 3 rankings" in shown
    report = workspace.run("report", debate_id).stdout
    assert "## Council" in report and "| Simplicity Advocate | 6 | yes |" in report


def test_a_correction_over_http_revises_only_the_corrected_answer(workspace: Workspace, fake: FakeLLMServer) -> None:
    config = workspace.write_config(fake, ROLES)
    result = workspace.run("debate", "Design a rate limiter", "-c", str(config), "--format", "correction")
    assert result.returncode == 0, result.stderr
    assert "(correction)" in result.stderr and "correction: 1 of 3 checks corrected" in result.stderr
    # three answers, three checks, one revision (the corrected one), the judge's synthesis
    assert fake.call_count == 3 + 3 + 1 + 1
    debate_id = debate_id_in(result.stderr)
    state = workspace.export(debate_id)
    correction = state["correction"]
    assert correction["revised"] == ["agent-security"]
    assert [c["corrects"] for c in correction["checks"]] == [True, False, False]
    refinements = [c for r in state["rounds"] for c in r["contributions"] if c["type"] == "refinement"]
    assert [c["agentId"] for c in refinements] == ["agent-security"]
    assert correction["points"]["Security Engineer (revised)"] == 1.0
    shown = workspace.run("show", debate_id).stdout
    assert "System Architect → Security Engineer: corrects — violation: the log grows without bound" in shown
    assert "Security Engineer → Simplicity Advocate: holds" in shown
    report = workspace.run("report", debate_id).stdout
    assert "## Correction" in report and "**Revised:** Security Engineer" in report


@pytest.mark.parametrize(("name", "line"), [("council", "Council (Borda): "), ("correction", "Correction: ")])
def test_the_formats_run_on_the_scripted_provider(workspace: Workspace, name: str, line: str) -> None:
    result = workspace.run("debate", "What is 17 * 3?", "--provider", "scripted", "--format", name)
    assert result.returncode == 0, result.stderr
    assert f"({name})" in result.stderr and result.stdout.strip()
    debate_id = debate_id_in(result.stderr)
    shown = workspace.run("show", debate_id).stdout
    assert f"Format: {name}" in shown and line in shown
    state = workspace.export(debate_id)
    assert state["config"]["debate"]["format"] == name and name in state
    assert f"- **Format:** {name}" in workspace.run("report", debate_id).stdout
