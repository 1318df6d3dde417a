"""``dialectic mcp`` over stdio, as an MCP client starts it: the SDK's own client, a subprocess, the scripted model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the 'mcp' extra")

from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult, TextResourceContents

from tests.mcp.conftest import command, environ, write_config

TOOLS = {
    "start_debate",
    "debate_status",
    "wait_for_debate",
    "answer_questions",
    "submit_turn",
    "get_result",
    "cancel_debate",
    "list_debates",
}
POLLS = 200
"""``debate_status`` calls at most before the test gives up (each is a round trip, not a timer)."""


def structured(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def test_a_debate_over_stdio_runs_to_a_result_and_a_report(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    argv = command("-c", str(config), "--store", str(tmp_path / "store"))
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=environ(tmp_path), cwd=str(tmp_path))

    async def session() -> None:
        async with Client(params) as client:
            listed = await client.list_tools()
            assert {tool.name for tool in listed.tools} == TOOLS
            assert all(tool.output_schema for tool in listed.tools)
            started = structured(await client.call_tool("start_debate", {"problem": "Design a rate limiter"}))
            debate_id = started["debate_id"]
            assert debate_id.startswith("deb-") and started["status"] in ("running", "completed")
            for _ in range(POLLS):
                status = structured(await client.call_tool("debate_status", {"debate_id": debate_id}))
                if status["status"] != "running":
                    break
            assert status["status"] == "completed" and status["total_rounds"] == 2
            assert status["progress"]["rounds_done"] == 2 and status["pending_questions"] == []
            result = structured(await client.call_tool("get_result", {"debate_id": debate_id}))
            assert result["solution"] and result["usage"]["calls"] > 0 and result["usage"]["input_tokens"] > 0
            report = await client.read_resource(result["report_uri"])
            content = report.contents[0]
            assert isinstance(content, TextResourceContents) and content.mime_type == "text/markdown"
            assert content.text.startswith("# ") and debate_id in content.text
            templates = await client.list_resource_templates()
            assert [t.uri_template for t in templates.resource_templates] == ["dialectic://debates/{debate_id}/report"]

    asyncio.run(session())
