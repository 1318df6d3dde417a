"""A seat a person plays, over MCP: ``debate_status`` shows the turn waiting with its prompt, ``submit_turn``
writes it and the debate goes on; a bad turn is a tool error in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the 'mcp' extra")

from mcp.client.client import Client

from dialectic.mcp_server.server import DebateService
from tests.mcp.conftest import CONFIG
from tests.mcp.test_stdio import structured
from tests.mcp.test_tools import error_text, finished, run

HUMAN = {"id": "agent-alice", "name": "Alice", "role": "kiss", "provider": "human"}
WITH_ALICE: dict[str, Any] = {**CONFIG, "agents": [*CONFIG["agents"], HUMAN], "debate": {"rounds": 1}}


def test_a_turn_submitted_over_mcp_completes_the_debate(tmp_path: Path) -> None:
    async def session(client: Client, service: DebateService) -> None:
        waiting = await finished(client, config=WITH_ALICE)
        debate_id = waiting["debate_id"]
        assert waiting["status"] == "suspended" and waiting["stopped"]
        [turn] = waiting["pending_turns"]
        assert turn["key"] == "agent-alice:proposal:1" and turn["seat"] == "Alice" and turn["round"] == 1
        assert "Design a cache" in turn["prompt"] and turn["role"]
        not_yet = error_text(await client.call_tool("get_result", {"debate_id": debate_id}))
        assert "waits for 1 human turn(s) (submit_turn)" in not_yet
        while True:
            status = structured(
                await client.call_tool("submit_turn", {"debate_id": debate_id, "text": "Alice: keep it simple."})
            )
            assert status["debate_id"] == debate_id
            waited = structured(await client.call_tool("wait_for_debate", {"debate_id": debate_id}))
            if waited["status"] != "suspended":
                break
        assert waited["status"] == "completed"
        result = structured(await client.call_tool("get_result", {"debate_id": debate_id}))
        assert result["solution"]
        written = [c for c in service.load(debate_id).all_contributions() if c.agent_id == "agent-alice"]
        assert {c.type for c in written} == {"proposal", "critique", "refinement"}
        assert all(c.metadata.played_by == "person" and c.content == "Alice: keep it simple." for c in written)

    run(tmp_path, session)


def test_a_bad_turn_is_a_tool_error(tmp_path: Path) -> None:
    async def session(client: Client, service: DebateService) -> None:
        waiting = await finished(client, config=WITH_ALICE)
        debate_id = waiting["debate_id"]
        submit = {"debate_id": debate_id, "text": "x"}
        unknown = error_text(await client.call_tool("submit_turn", {**submit, "key": "agent-bob:proposal:1"}))
        assert "'agent-bob:proposal:1' is not a human turn it waits for" in unknown
        empty = error_text(await client.call_tool("submit_turn", {**submit, "text": " "}))
        assert "the turn's text is empty" in empty
        missing = error_text(await client.call_tool("submit_turn", {**submit, "debate_id": "deb-20250101-000000-0000"}))
        assert "deb-20250101-000000-0000" in missing
        done = await finished(client)
        closed = error_text(await client.call_tool("submit_turn", {**submit, "debate_id": done["debate_id"]}))
        assert "already completed" in closed
        assert service.load(debate_id).pending_turns()  # nothing changed

    run(tmp_path, session)
