"""Hostile tool calls, through the SDK's own client, to ``dialectic mcp`` started as a user starts it: over stdio
and over HTTP behind a token. Every refused call is a one-line tool error naming the cause, and changes nothing:
a problem past ``limits.maxProblemChars``, an argument a tool does not take, unknown keys, numbers out of range,
and human turns a ``--turn-file`` would refuse (a NUL byte, more than 256 KB: one rule, ``check_turn_text``)."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the 'mcp' extra")

import httpx2
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.mcp.conftest import CONFIG, TOKEN, command, environ
from tests.mcp.test_stdio import structured
from tests.mcp.test_tools import error_text

HUMAN = {"id": "agent-alice", "name": "Alice", "role": "kiss", "provider": "human"}
WITH_ALICE: dict[str, Any] = {**CONFIG, "agents": [*CONFIG["agents"], HUMAN], "debate": {"rounds": 1}}
WAITS = 50
"""``wait_for_debate`` calls at most before the test gives up (each returns when the debate stops)."""

REFUSED: list[tuple[str, dict[str, Any], str]] = [
    (
        "start_debate",
        {"problem": "x" * 2_000_000},
        "the problem has 2,000,000 characters, more than the limit of 100,000",
    ),
    ("start_debate", {"problem": "Design a cache", "round": 2}, "`round`: unknown key — did you mean `rounds`?"),
    (
        "start_debate",
        {"problem": "Design a cache", "agents": [{"role": "kiss", "temprature": 1}]},
        "`agents[0].temprature`: unknown key — did you mean `agents[0].temperature`?",
    ),
    ("start_debate", {"problem": "Design a cache", "rounds": 10**9}, "more than the limit of 20 rounds"),
    ("start_debate", {"problem": "Design a cache", "max_answers": 10**9}, "max_answers must be between 2 and 64"),
    ("start_debate", {"problem": "Design a cache", "provider": "opneai"}, "`provider`: unknown key"),
    ("list_debates", {"limit": 10**9}, "limit: Input should be less than or equal to 200"),
    ("wait_for_debate", {"debate_id": "deb-20250101-000000-0000", "timeout_s": 1e308}, "timeout_s"),
]
STDIO_ONLY: list[tuple[str, dict[str, Any], str]] = [
    (
        "start_debate",
        {"problem": "Design a cache", "config": {**WITH_ALICE, "debate": {"round": 2}}},
        "`config.debate.round`: unknown key — did you mean `config.debate.rounds`?",
    ),
]


async def hostile_calls(client: Client, calls: list[tuple[str, dict[str, Any], str]]) -> None:
    before = structured(await client.call_tool("list_debates", {}))["debates"]
    for tool, arguments, needle in calls:
        message = error_text(await client.call_tool(tool, arguments))
        assert needle in message, (tool, message)
    assert structured(await client.call_tool("list_debates", {}))["debates"] == before  # nothing was started

    started = structured(await client.call_tool("start_debate", {"problem": "Design a cache"}))
    debate_id = started["debate_id"]
    for _ in range(WAITS):
        status = structured(await client.call_tool("wait_for_debate", {"debate_id": debate_id, "timeout_s": 60}))
        if status["stopped"]:
            break
    assert status["status"] == "suspended" and status["pending_turns"], status
    turn = {"debate_id": debate_id}
    nul = error_text(await client.call_tool("submit_turn", {**turn, "text": "A turn\x00with a NUL"}))
    assert "the turn's text holds a NUL byte" in nul
    huge = error_text(await client.call_tool("submit_turn", {**turn, "text": "x" * 2_000_000}))
    assert "the turn's text is 2,000,000 bytes, more than the limit of 256 KB" in huge
    still = structured(await client.call_tool("debate_status", turn))
    assert still["status"] == "suspended" and still["pending_turns"] == status["pending_turns"]
    accepted = structured(await client.call_tool("submit_turn", {**turn, "text": "Alice: keep it simple."}))
    assert accepted["debate_id"] == debate_id


def write_config(directory: Path) -> Path:
    path = directory / "debate-config.json"
    path.write_text(json.dumps(WITH_ALICE), encoding="utf-8")
    return path


def test_hostile_calls_over_stdio(tmp_path: Path) -> None:
    argv = command("-c", str(write_config(tmp_path)), "--store", str(tmp_path / "store"))
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=environ(tmp_path), cwd=str(tmp_path))

    async def session() -> None:
        async with Client(params) as client:
            await hostile_calls(client, REFUSED + STDIO_ONLY)

    asyncio.run(session())


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    """``dialectic mcp --transport http`` on a free loopback port with a token; its URL."""
    process = subprocess.Popen(
        command("--transport", "http", "--port", "0", "--token", TOKEN, "-c", str(write_config(tmp_path))),
        cwd=tmp_path,
        env=environ(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("Serving MCP on http://127.0.0.1:"), line + (process.stderr.read() if process.stderr else "")
    yield line.split()[3]
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()


def test_hostile_calls_over_http(http_server: str) -> None:
    async def session() -> None:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http:
            async with Client(streamable_http_client(http_server, http_client=http)) as client:
                await hostile_calls(client, REFUSED)

    asyncio.run(session())
