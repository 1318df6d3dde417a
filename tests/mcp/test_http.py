"""``dialectic mcp --transport http``: streamable HTTP behind a token, driven by the SDK's own client."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the 'mcp' extra")

import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from tests.mcp.conftest import TOKEN, command, environ, write_config
from tests.mcp.test_stdio import structured

ROUNDS_OF_QUESTIONS = 3
"""The scripted agents may ask follow-up questions: answered this many times at most."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server on a free loopback port with a token, on the slow scripted model; its URL."""
    tmp_path = tmp_path_factory.mktemp("mcp-http")
    config = write_config(tmp_path)
    process = subprocess.Popen(
        command(
            "--transport", "http", "--port", "0", "--token", TOKEN, "-c", str(config), "--store", "store", slow=True
        ),
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
        code = process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert code == -signal.SIGTERM  # uvicorn stops gracefully, then ends by the signal


def post(url: str, headers: dict[str, str]) -> int:
    """The status of an ``initialize`` request sent with ``headers``."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_a_request_without_the_token_or_for_another_host_is_refused(server: str) -> None:
    assert post(server, {}) == 401
    assert post(server, {"Authorization": "Bearer not-the-token-at-all"}) == 401
    assert post(server, {"Authorization": TOKEN}) == 401  # no scheme
    host = server.split("/")[2]
    assert post(server, {"Authorization": f"Bearer {TOKEN}", "Host": f"evil.example:{host.split(':')[1]}"}) == 421
    assert post(server, {"Authorization": f"Bearer {TOKEN}"}) == 200


def test_questions_answers_and_progress_over_http(server: str) -> None:
    calls: list[list[tuple[float, float | None, str | None]]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        calls[-1].append((value, total, message))

    async def session() -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            async with Client(streamable_http_client(server, http_client=http)) as client:
                started = structured(
                    await client.call_tool("start_debate", {"problem": "Design a cache", "clarify": True, "rounds": 1})
                )
                debate_id = started["debate_id"]
                status = structured(await client.call_tool("wait_for_debate", {"debate_id": debate_id}))
                for _ in range(ROUNDS_OF_QUESTIONS):
                    if status["status"] != "suspended":
                        break
                    questions = status["pending_questions"]
                    assert questions and all(q["id"] and q["agent"] and q["question"] for q in questions)
                    answers = {q["id"]: "EU only, 10k requests a second" for q in questions}
                    answered = structured(
                        await client.call_tool("answer_questions", {"debate_id": debate_id, "answers": answers})
                    )
                    assert answered["status"] in ("running", "suspended", "completed")
                    calls.append([])  # a call's own notifications: its progress grows from one to the next
                    status = structured(
                        await client.call_tool(
                            "wait_for_debate", {"debate_id": debate_id, "timeout_s": 120}, progress_callback=progress
                        )
                    )
                assert status["status"] == "completed" and status["stopped"] is True
                return structured(await client.call_tool("get_result", {"debate_id": debate_id}))

    result = asyncio.run(session())
    assert result["status"] == "completed" and result["solution"]
    assert set(result["usage"]) == {"calls", "input_tokens", "output_tokens", "cost_usd"}
    notes = [note for call in calls for note in call]
    assert len(notes) >= 2, notes  # the debate ran on while the call waited: rounds and contributions were told
    for call in calls:
        values = [value for value, _, _ in call]
        assert values == sorted(set(values))  # progress only grows
    assert {total for _, total, _ in notes} == {2}  # one round and the synthesis: every notification has its total
    assert all(0 <= value <= 2 for value, _, _ in notes) and notes[-1][0] > 1  # the synthesis was reached
    assert any(message and "round 1/1" in message for _, _, message in notes), notes
