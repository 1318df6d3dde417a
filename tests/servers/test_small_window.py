"""A debate that outgrows its server's context window: llama-server started with 1,536 tokens per slot.

Three agents, four rounds, the default settings: in the later rounds a prompt carrying the debate
so far passes 90% of the window the agents learned from the server before the history reaches
``debate.summarization``'s character threshold, so ``debate.contextStrategy``
(``summarize``, the default) has the agent's summary made early and sent in place of the older
rounds; the debate completes, saying so on stderr. (With summarization disabled the same strategy
falls back to ``slide``: seen here, three agents sliding three or four times each.)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.servers.conftest import (
    RunningServer,
    Workspace,
    debate_config,
    explain,
    launch_llama_server,
    saved_debate_id,
)

pytestmark = pytest.mark.servers

WINDOW = 1_536
SLOTS = 3


@pytest.fixture(scope="module")
def small_window_server(tmp_path_factory: pytest.TempPathFactory, model_file: Path) -> Iterator[RunningServer]:
    """llama-server with three slots of 1,536 tokens (the agents of a round served at once), for this module only."""
    server = launch_llama_server(
        tmp_path_factory, model_file, context=WINDOW * SLOTS, slots=SLOTS, name="llama-server-small"
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.timeout(900)
def test_a_debate_outgrowing_the_window_completes_by_the_context_strategy(
    small_window_server: RunningServer, workspace: Workspace
) -> None:
    config = workspace.write(
        "debate-config.json",
        debate_config(
            small_window_server.base_url,
            agents=3,
            rounds=4,
            max_tokens=48,
            judge_max_tokens=256,
        ),
    )
    result = workspace.run(
        "debate",
        "Design a rate limiter for a public HTTP API serving 1,000 requests per second.",
        *("--config", str(config), "--store", str(workspace.store)),
        timeout=840,
    )
    assert result.returncode == 0, explain(result)
    warned = [line for line in result.stderr.splitlines() if "debate.contextStrategy" in line]
    assert warned and all("summarize" in line for line in warned), result.stderr[-3000:]
    debate_id = saved_debate_id(result.stderr)
    assert debate_id is not None
    debate = workspace.export(debate_id)
    assert debate["status"] == "completed" and len(debate["rounds"]) == 4
    assert debate["finalSolution"]["description"].strip()
    windows = debate["windows"]
    assert {use["window"] for use in windows.values()} == {WINDOW}
    assert {use["source"] for use in windows.values()} == {"server"}
    fired = {agent: use["fired"] for agent, use in windows.items() if use["fired"]}
    assert fired, windows
    assert all(set(strategies) <= {"summarize", "slide"} for strategies in fired.values()), fired
    assert any("summarize" in strategies for strategies in fired.values()), fired
    kinds = {entry["kind"] for entry in debate["ledger"]}
    assert "summary" in kinds, kinds  # the summaries the strategy had made
    assert all(use["largestPrompt"] < WINDOW for use in windows.values()), windows
