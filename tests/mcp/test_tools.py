"""The tools in process (the SDK's client connected to the server object): cancelling, errors, listing, options."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the 'mcp' extra")

from mcp.client.client import Client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent

from dialectic.core.config import SystemConfig
from dialectic.llm.base import Completion, CompletionRequest
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import ScriptedProvider
from dialectic.mcp_server.options import Transport
from dialectic.mcp_server.server import DebateService, build_server
from dialectic.store import open_store
from tests.mcp.conftest import CONFIG
from tests.mcp.test_stdio import structured


class Stalled(ScriptedProvider):
    """A model that never answers: a debate on it runs until it is cancelled."""

    async def complete(self, request: CompletionRequest) -> Completion:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


Session = Callable[[Client, DebateService], Awaitable[Any]]


def run(
    tmp_path: Path, session: Session, *, transport: Transport = "stdio", model: ScriptedProvider | None = None
) -> Any:
    """``session`` with a client connected in process to a server on the scripted configuration."""

    async def main() -> Any:
        async with serving(tmp_path, transport, model) as (client, service):
            return await session(client, service)

    return asyncio.run(main())


@asynccontextmanager
async def serving(
    tmp_path: Path, transport: Transport, model: ScriptedProvider | None
) -> AsyncIterator[tuple[Client, DebateService]]:
    store = open_store(tmp_path / "store")
    providers = ProviderPool(overrides={"scripted": model}) if model is not None else ProviderPool()
    service = DebateService(SystemConfig.model_validate(CONFIG), tmp_path, store, transport, providers)
    try:
        async with Client(build_server(service)) as client:
            yield client, service
    finally:
        await service.close()
        store.close()


def error_text(result: CallToolResult) -> str:
    assert result.is_error
    assert len(result.content) == 1 and isinstance(result.content[0], TextContent)
    text = result.content[0].text
    assert "\n" not in text
    return text


async def finished(client: Client, **arguments: Any) -> dict[str, Any]:
    """Start a debate and wait for it to stop running."""
    started = structured(await client.call_tool("start_debate", {"problem": "Design a cache", **arguments}))
    return structured(await client.call_tool("wait_for_debate", {"debate_id": started["debate_id"]}))


def test_cancel_stops_a_running_debate_and_saves_it_interrupted(tmp_path: Path) -> None:
    async def session(client: Client, service: DebateService) -> None:
        started = structured(await client.call_tool("start_debate", {"problem": "Design a cache"}))
        debate_id = started["debate_id"]
        status = structured(await client.call_tool("debate_status", {"debate_id": debate_id}))
        assert status["status"] == "running" and status["running_here"] is True
        early = error_text(await client.call_tool("get_result", {"debate_id": debate_id}))
        assert f"debate {debate_id} is running" in early and "wait_for_debate" in early
        cancelled = structured(await client.call_tool("cancel_debate", {"debate_id": debate_id}))
        assert cancelled == {"debate_id": debate_id, "status": "interrupted", "cancelled": True}
        again = structured(await client.call_tool("cancel_debate", {"debate_id": debate_id}))
        assert again["cancelled"] is False and again["status"] == "interrupted"
        status = structured(await client.call_tool("debate_status", {"debate_id": debate_id}))
        assert status["status"] == "interrupted" and status["running_here"] is False
        late = error_text(await client.call_tool("get_result", {"debate_id": debate_id}))
        assert "is interrupted" in late and f"dialectic resume {debate_id}" in late

    run(tmp_path, session, model=Stalled())


def test_a_server_that_stops_saves_its_running_debates_as_interrupted(tmp_path: Path) -> None:
    async def session(client: Client, service: DebateService) -> str:
        started = structured(await client.call_tool("start_debate", {"problem": "Design a cache"}))
        await service.close()
        return str(started["debate_id"])

    debate_id = run(tmp_path, session, model=Stalled())
    with open_store(tmp_path / "store") as store:
        assert store.load(debate_id).status == "interrupted"


def test_wait_returns_at_its_timeout_while_the_debate_goes_on(tmp_path: Path) -> None:
    async def session(client: Client, service: DebateService) -> None:
        started = structured(await client.call_tool("start_debate", {"problem": "Design a cache"}))
        waited = structured(
            await client.call_tool("wait_for_debate", {"debate_id": started["debate_id"], "timeout_s": 0})
        )
        assert waited["stopped"] is False and waited["status"] == "running"

    run(tmp_path, session, model=Stalled())


def test_an_unknown_id_is_a_one_line_tool_error(tmp_path: Path) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("debate_status", {}),
        ("wait_for_debate", {}),
        ("get_result", {}),
        ("cancel_debate", {}),
        ("answer_questions", {"answers": {"q1": "yes"}}),
    ]

    async def session(client: Client, service: DebateService) -> None:
        for tool, arguments in calls:
            text = error_text(await client.call_tool(tool, {"debate_id": "deb-nope", **arguments}))
            assert "no debate with id 'deb-nope'" in text, (tool, text)
        with pytest.raises(MCPError, match="no debate with id 'deb-nope'"):
            await client.read_resource("dialectic://debates/deb-nope/report")

    run(tmp_path, session)


def test_list_debates_newest_first_by_status(tmp_path: Path) -> None:
    async def session(client: Client, service: DebateService) -> None:
        first = await finished(client)
        second = await finished(client, clarify=True)
        assert (first["status"], second["status"]) == ("completed", "suspended")
        everything = structured(await client.call_tool("list_debates", {}))["debates"]
        assert [d["debate_id"] for d in everything] == [second["debate_id"], first["debate_id"]]
        assert everything[0]["problem"] == "Design a cache" and everything[0]["created_at"]
        done = structured(await client.call_tool("list_debates", {"status": "completed"}))["debates"]
        assert [d["debate_id"] for d in done] == [first["debate_id"]]
        one = structured(await client.call_tool("list_debates", {"limit": 1}))["debates"]
        assert len(one) == 1
        bad = await client.call_tool("list_debates", {"status": "finished"})
        assert bad.is_error

    run(tmp_path, session)


def test_answers_go_only_to_a_suspended_debates_pending_questions(tmp_path: Path) -> None:
    async def session(client: Client, service: DebateService) -> None:
        asked = await finished(client, clarify=True)
        debate_id = asked["debate_id"]
        assert asked["status"] == "suspended" and asked["pending_questions"]
        wrong = error_text(
            await client.call_tool("answer_questions", {"debate_id": debate_id, "answers": {"q99": "x"}})
        )
        assert "no pending question q99" in wrong
        not_yet = error_text(await client.call_tool("get_result", {"debate_id": debate_id}))
        assert "waits for answers" in not_yet
        done = await finished(client)
        closed = error_text(
            await client.call_tool("answer_questions", {"debate_id": done["debate_id"], "answers": {"q1": "x"}})
        )
        assert "is completed: it is not waiting for answers" in closed

    run(tmp_path, session)


def test_a_call_picks_rounds_roles_agents_or_a_whole_configuration(tmp_path: Path) -> None:
    async def session(client: Client, service: DebateService) -> None:
        one = await finished(client, rounds=1, roles=["security"])
        state = service.load(one["debate_id"])
        assert one["total_rounds"] == 1 and [a.role for a in state.agents] == ["security"]
        built = await finished(client, agents=[{"role": "kiss"}, {"role": "performance", "temperature": 0.1}])
        state = service.load(built["debate_id"])
        assert [(a.role, a.provider) for a in state.agents] == [("kiss", "scripted"), ("performance", "scripted")]
        whole = await finished(client, config={**CONFIG, "debate": {"rounds": 3}})
        assert whole["status"] == "completed" and whole["total_rounds"] == 3
        both = error_text(await client.call_tool("start_debate", {"problem": "x", "roles": ["a"], "agents": []}))
        assert "give agents or roles, not both" in both
        broken = error_text(await client.call_tool("start_debate", {"problem": "x", "config": {"agents": 3}}))
        assert broken.endswith("invalid configuration: agents: Input should be a valid list")
        budget = await finished(client, format="adaptive", max_answers=9)
        assert service.load(budget["debate_id"]).config["debate"]["answers"]["maxAnswers"] == 9
        small = error_text(await client.call_tool("start_debate", {"problem": "x", "max_answers": 1}))
        assert small.endswith(": max_answers must be between 2 and 64 (got 1)")
        no_rounds = error_text(await client.call_tool("start_debate", {"problem": "x", "rounds": 0}))
        assert no_rounds.endswith(": rounds must be at least 1 (got 0)")
        unknown = error_text(await client.call_tool("start_debate", {"problem": "x", "format": "duel"}))
        assert "unknown format" in unknown
        hot = {"problem": "x", "agents": [{"role": "kiss", "temperature": 5}]}
        assert error_text(await client.call_tool("start_debate", hot)).endswith(
            "start_debate: agents[0].temperature: Input should be less than or equal to 2"
        )
        blank = error_text(await client.call_tool("start_debate", {"problem": "   "}))
        assert "the problem is empty" in blank

    run(tmp_path, session)


def test_over_http_a_call_cannot_bring_a_configuration_an_endpoint_or_another_provider(tmp_path: Path) -> None:
    async def session(client: Client, service: DebateService) -> None:
        whole = error_text(await client.call_tool("start_debate", {"problem": "x", "config": CONFIG}))
        assert "a whole configuration is accepted over stdio only" in whole
        other = error_text(
            await client.call_tool("start_debate", {"problem": "x", "agents": [{"role": "kiss", "provider": "openai"}]})
        )
        assert "agents[0].provider: over HTTP an agent may use only the providers" in other
        endpoint = await client.call_tool(
            "start_debate", {"problem": "x", "agents": [{"role": "kiss", "baseUrl": "http://10.0.0.1/v1"}]}
        )
        assert endpoint.is_error
        allowed = await finished(client, agents=[{"role": "kiss", "provider": "scripted"}], rounds=1)
        assert allowed["status"] == "completed"

    run(tmp_path, session, transport="http")


@pytest.mark.parametrize("name", ["council", "correction"])
def test_the_result_carries_the_council_or_the_correction(tmp_path: Path, name: str) -> None:
    async def session(client: Client, service: DebateService) -> None:
        done = await finished(client, format=name)
        assert done["status"] == "completed"
        result = structured(await client.call_tool("get_result", {"debate_id": done["debate_id"]}))
        other = "correction" if name == "council" else "council"
        assert result[name] is not None and result.get(other) is None
        key = "standings" if name == "council" else "checks"
        assert len(result[name][key]) == 2

    run(tmp_path, session)
