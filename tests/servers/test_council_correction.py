"""``--format council`` and ``--format correction`` through the installed command on the embedded model behind a
real llama-server: the calls each makes (counted by a recording proxy), and what it saved and shows."""

from __future__ import annotations

import pytest

from tests.servers.conftest import (
    RecordingProxy,
    RunningServer,
    Workspace,
    debate_config,
    explain,
    saved_debate_id,
)

pytestmark = pytest.mark.servers

QUESTION = "What is 17 * 3 + 4?"
AGENTS = 3


def run(llama_server: RunningServer, workspace: Workspace, name: str) -> tuple[dict[str, object], int, str]:
    """The debate's export, the completions the server was asked for, and ``show``'s output."""
    with RecordingProxy(llama_server.root) as proxy:
        config = workspace.write(
            "debate-config.json",
            debate_config(proxy.base_url, agents=AGENTS, rounds=1, max_tokens=160, judge_max_tokens=256),
        )
        result = workspace.run(
            "debate", QUESTION, "--config", str(config), "--format", name, "--store", str(workspace.store), timeout=840
        )
    assert result.returncode == 0, explain(result)
    sent = sum(proxy.paths().values())
    debate_id = saved_debate_id(result.stderr)
    assert debate_id is not None, result.stderr
    shown = workspace.run("show", debate_id, "--store", str(workspace.store), timeout=60).stdout
    return workspace.export(debate_id), sent, shown


@pytest.mark.timeout(900)
def test_a_council_makes_two_calls_per_member_and_the_chairs(llama_server: RunningServer, workspace: Workspace) -> None:
    state, sent, shown = run(llama_server, workspace, "council")
    print(f"council on {llama_server.kind}: {sent} requests; {state['council']}")
    assert sent == 2 * AGENTS + 1  # answers, rankings, the chair
    council = state["council"]
    assert isinstance(council, dict) and len(council["rankings"]) == AGENTS and len(council["chosen"]) == 2
    assert len(council["standings"]) == AGENTS
    assert "Council (Borda): " in shown and "Format: council" in shown
    solution = state["finalSolution"]
    assert isinstance(solution, dict) and solution["description"].strip()


@pytest.mark.timeout(900)
def test_a_correction_revises_only_the_corrected_and_asks_no_judge(
    llama_server: RunningServer, workspace: Workspace
) -> None:
    state, sent, shown = run(llama_server, workspace, "correction")
    correction = state["correction"]
    print(f"correction on {llama_server.kind}: {sent} requests; {correction}")
    assert isinstance(correction, dict) and len(correction["checks"]) == AGENTS
    corrected = [c["targetId"] for c in correction["checks"] if c["corrects"]]
    assert correction["revised"] == [
        a for a in ("agent-architect", "agent-performance", "agent-kiss") if a in corrected
    ]
    judged = sent - (AGENTS + AGENTS + len(corrected))
    # no judge call when an answer won; otherwise its synthesis (and, perhaps, one repair of its JSON)
    assert judged == 0 if correction.get("winner") else judged in (1, 2), sent
    assert "Correction: " in shown
