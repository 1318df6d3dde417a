"""A seat a person plays, over the API: the debate waits for its turn, ``POST /turns/{key}`` writes it and the
debate goes on; bad turns are 4xx; a client may seat a person; a deadline lets the fallback model play."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from dialectic.core.config import SystemConfig
from dialectic.core.domain import utc_now
from dialectic.testing.harness import make_config
from tests.web.conftest import Api

ALICE = "agent-alice"
KEY = f"{ALICE}:response:1"


def with_alice(seat: dict[str, Any] | None = None) -> SystemConfig:
    data = make_config(agents=2, rounds=1, format="free-form").model_dump(by_alias=True)
    data["agents"].append({"id": ALICE, "name": "Alice", "role": "security", "provider": "human", **(seat or {})})
    return SystemConfig.model_validate(data)


async def rest(api: Api, debate_id: str) -> str:
    """The status once the debate is at rest: no run of it here, nor one about to start (a deadline's)."""
    for _ in range(10_000):
        status = await api.finished(debate_id)
        if not api.ctx.runs._deadlines and not api.ctx.runs._background and not api.ctx.runs.is_running(debate_id):
            return status
        await asyncio.sleep(0)
    raise AssertionError("the debate never came to rest")


def test_the_page_writes_a_turn_and_the_debate_goes_on(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        debate_id = await api.start()
        assert await api.finished(debate_id) == "suspended"
        state = (await api.client.get(f"/api/debates/{debate_id}")).json()
        [turn] = state["humanTurns"]
        assert turn["key"] == KEY and turn["agentName"] == "Alice" and "text" not in turn
        assert any("Design a rate limiter" in m["content"] for m in turn["messages"])
        events = [e.event for e in await api.events(debate_id)]
        assert "turn_awaited" in events
        refused = await api.client.post(f"/api/debates/{debate_id}/resume")
        assert refused.status_code == 409 and "waiting for Alice's turn" in refused.json()["detail"]
        sent = await api.client.post(f"/api/debates/{debate_id}/turns/{KEY}", json={"text": "Alice's turn."})
        assert sent.status_code == 202 and sent.json() == {"id": debate_id, "status": "running"}
        assert await api.finished(debate_id) == "completed"
        saved = api.ctx.store.load(debate_id)
        [written] = [c for c in saved.all_contributions() if c.agent_id == ALICE]
        assert written.content == "Alice's turn." and written.metadata.played_by == "person"
        assert [c.tag for c in api.provider.calls].count("response:architect") == 1

    serve(scenario, config=with_alice())


def test_bad_turns_are_refused_with_the_right_status(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        debate_id = await api.start()
        assert await api.finished(debate_id) == "suspended"
        url = f"/api/debates/{debate_id}/turns"
        empty = await api.client.post(f"{url}/{KEY}", json={"text": "  "})
        assert empty.status_code == 422 and "empty" in empty.json()["fields"]["text"]
        unknown = await api.client.post(f"{url}/agent-bob:response:1", json={"text": "hi"})
        assert unknown.status_code == 422 and "is not a human turn it waits for" in unknown.json()["fields"]["key"]
        missing = await api.client.post("/api/debates/deb-20250101-000000-0000/turns/x", json={"text": "hi"})
        assert missing.status_code == 404
        malformed = await api.client.post(f"{url}/{KEY}", json={"words": "hi"})
        assert malformed.status_code == 422 and malformed.json()["fields"]["words"] == "`words`: unknown key"
        nul = await api.client.post(f"{url}/{KEY}", json={"text": "A turn\u0000with a NUL"})
        assert nul.status_code == 422 and "NUL byte" in nul.json()["fields"]["text"]
        huge = await api.client.post(f"{url}/{KEY}", json={"text": "x" * (256 * 1024 + 1)})
        assert huge.status_code == 422 and "more than the limit of 256 KB" in huge.json()["fields"]["text"]
        assert api.ctx.store.load(debate_id).pending_turns()  # nothing changed
        assert (await api.client.post(f"{url}/{ALICE}", json={"text": "By the seat's id."})).status_code == 202
        assert await api.finished(debate_id) == "completed"
        again = await api.client.post(f"{url}/{KEY}", json={"text": "Once more."})
        assert again.status_code == 409 and "not waiting for a human turn" in again.json()["detail"]

    serve(scenario, config=with_alice())


def test_a_client_may_seat_a_person(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        debate_id = await api.start(agents=[{"role": "architect"}, {"role": "security", "provider": "human"}])
        assert await api.finished(debate_id) == "suspended"
        [turn] = api.ctx.store.load(debate_id).pending_turns()
        assert turn.agent_name == "Security Specialist"
        config = with_alice({"deadline": 5, "fallback": {"provider": "openai", "baseUrl": "http://evil.test/v1"}})
        sent_config = {key: config.model_dump(by_alias=True)[key] for key in ("agents", "judge")}
        sent = await api.client.post("/api/debates", json={"problem": "Design a cache", "config": sent_config})
        assert sent.status_code == 422 and "agents[2].fallback" in sent.json()["fields"]["config"]

    serve(scenario)


def test_when_the_deadline_passes_the_server_lets_the_fallback_play(
    serve: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    later = utc_now() + timedelta(hours=1)
    monkeypatch.setattr("dialectic.engine.seats.utc_now", lambda: later)
    monkeypatch.setattr("dialectic.web.runs.utc_now", lambda: later)

    async def scenario(api: Api) -> None:
        debate_id = await api.start()
        assert await rest(api, debate_id) == "completed"
        saved = api.ctx.store.load(debate_id)
        [played] = [c for c in saved.all_contributions() if c.agent_id == ALICE]
        assert played.metadata.played_by == "fallback" and played.metadata.model == "fallback-model"
        assert [t.played_by for t in saved.human_turns] == ["fallback"]

    serve(
        scenario,
        config=with_alice({"deadline": 60_000, "fallback": {"provider": "scripted", "model": "fallback-model"}}),
    )
