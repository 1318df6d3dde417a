"""Steering over the API: pause, resume, cancel, answers, retry, one runner per debate, the limit on runs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta

from dialectic.core.changes import DebateCreated, StatusChanged
from dialectic.core.domain import DebateState, utc_now
from dialectic.store.leases import LeaseOwner
from dialectic.testing.harness import make_config
from dialectic.web.state import ServeSettings
from tests.web.conftest import Api, GatedProvider


async def held(provider: GatedProvider, calls: int) -> None:
    """Until ``calls`` calls wait at the gate."""
    await provider.until_waiting(calls)


def test_pause_finishes_the_calls_in_flight_then_resume_completes(serve: Callable[..., None]) -> None:
    provider = GatedProvider()

    async def scenario(api: Api) -> None:
        debate_id = await api.start()
        await held(provider, 2)
        watching = asyncio.ensure_future(api.events(debate_id))
        paused = await api.client.post(f"/api/debates/{debate_id}/pause")
        assert paused.status_code == 202 and paused.json() == {"id": debate_id, "status": "pausing"}
        provider.gate.set()
        assert await api.finished(debate_id) == "paused"
        events = await watching
        assert [e.event for e in events][-2:] == ["status_changed", "end"]
        assert events[-1].data == {"status": "paused"}
        state = api.ctx.store.load(debate_id)
        assert [c.type for c in state.round(1).contributions] == ["proposal", "proposal"]
        resumed = await api.client.post(f"/api/debates/{debate_id}/resume")
        assert resumed.status_code == 202 and resumed.json()["status"] == "running"
        assert await api.finished(debate_id) == "completed"
        assert [c.tag for c in provider.calls].count("proposal:architect") == 1

    serve(scenario, provider=provider)


def test_cancel_stops_now_and_the_debate_can_be_resumed(serve: Callable[..., None]) -> None:
    provider = GatedProvider()

    async def scenario(api: Api) -> None:
        debate_id = await api.start()
        await held(provider, 2)
        cancelled = await api.client.post(f"/api/debates/{debate_id}/cancel")
        assert cancelled.status_code == 200 and cancelled.json() == {"id": debate_id, "status": "interrupted"}
        assert not api.ctx.runs.is_running(debate_id)
        provider.gate.set()
        assert (await api.client.post(f"/api/debates/{debate_id}/resume")).status_code == 202
        assert await api.finished(debate_id) == "completed"

    serve(scenario, provider=provider)


def test_steering_a_debate_that_is_not_running_here_is_a_conflict(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        debate_id = await api.start()
        await api.finished(debate_id)
        for action in ("pause", "cancel", "resume"):
            response = await api.client.post(f"/api/debates/{debate_id}/{action}")
            assert response.status_code == 409, action
            assert response.json()["error"] == "conflict"
        answers = await api.client.post(f"/api/debates/{debate_id}/answers", json={"answers": {"q1": "x"}})
        assert answers.status_code == 409 and "not waiting for answers" in answers.json()["detail"]
        for action in ("pause", "cancel", "resume"):
            assert (await api.client.post(f"/api/debates/deb-nope/{action}")).status_code == 404

    serve(scenario)


def test_resuming_a_debate_already_running_here_is_a_conflict(serve: Callable[..., None]) -> None:
    provider = GatedProvider()

    async def scenario(api: Api) -> None:
        debate_id = await api.start()
        await held(provider, 2)
        again = await api.client.post(f"/api/debates/{debate_id}/resume")
        assert again.status_code == 409 and "already running on this server" in again.json()["detail"]
        provider.gate.set()
        await api.finished(debate_id)

    serve(scenario, provider=provider)


def test_a_debate_another_live_process_runs_is_refused_with_409(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        store = api.ctx.store
        state = DebateState(id="deb-elsewhere", problem="p", status="running", config=make_config().to_json_dict())
        owner = LeaseOwner.for_this_run()  # this process is alive: its lease is held
        create = DebateCreated(state=state)
        store.acquire_lease("deb-elsewhere", owner, now=utc_now(), ttl=timedelta(minutes=5), create=create)
        store.append("deb-elsewhere", StatusChanged(status="interrupted"))
        refused = await api.client.post("/api/debates/deb-elsewhere/resume")
        assert refused.status_code == 409 and refused.json()["error"] == "busy"
        assert f"pid {owner.pid}" in refused.json()["detail"]
        assert store.load("deb-elsewhere").status == "interrupted"

    serve(scenario)


def test_clarifying_questions_are_answered_by_id_and_the_debate_goes_on(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        debate_id = await api.start(clarify=True)
        assert await api.finished(debate_id) == "suspended"
        state = api.ctx.store.load(debate_id)
        pending = [item.id for item in state.pending_questions()]
        assert pending
        events = await api.events(debate_id)
        asked = next(e for e in events if e.event == "questions_asked")
        assert [i["id"] for g in asked.data["groups"] for i in g["items"]] == pending
        unknown = await api.client.post(f"/api/debates/{debate_id}/answers", json={"answers": {"q99": "x"}})
        assert unknown.status_code == 422 and unknown.json()["fields"]["answers"].startswith("no pending question")
        empty = await api.client.post(f"/api/debates/{debate_id}/answers", json={"answers": {}})
        assert empty.status_code == 422
        resume = await api.client.post(f"/api/debates/{debate_id}/resume")
        assert resume.status_code == 409 and "waiting for answers" in resume.json()["detail"]
        given: dict[str, str] = {}
        for _ in range(3):  # the scripted agents ask follow-ups, up to clarificationsMaxIterations
            answers = {item.id: f"answer to {item.id}" for item in api.ctx.store.load(debate_id).pending_questions()}
            accepted = await api.client.post(f"/api/debates/{debate_id}/answers", json={"answers": answers})
            assert accepted.status_code == 202
            given |= answers
            if await api.finished(debate_id) != "suspended":
                break
        done = api.ctx.store.load(debate_id)
        assert done.status == "completed"
        assert {i.id: i.answer for i in done.clarification_items()} == given

    serve(scenario)


def test_a_failed_debate_is_retried_by_resuming_it(serve: Callable[..., None]) -> None:
    provider = GatedProvider()

    async def scenario(api: Api) -> None:
        debate_id = await api.start()
        await held(provider, 2)
        run = api.ctx.runs._runs[debate_id]
        run.task.cancel()  # stands in for any way a run stops short
        await api.finished(debate_id)
        api.ctx.store.append(debate_id, StatusChanged(status="failed", error="the provider was down"))
        provider.gate.set()
        listed = (await api.client.get("/api/debates?status=failed")).json()["items"]
        assert [item["id"] for item in listed] == [debate_id]
        assert (await api.client.post(f"/api/debates/{debate_id}/resume")).status_code == 202
        assert await api.finished(debate_id) == "completed"

    serve(scenario, provider=provider)


def test_more_debates_than_the_limit_are_refused_with_429(serve: Callable[..., None]) -> None:
    provider = GatedProvider()

    async def scenario(api: Api) -> None:
        first = await api.start()
        await held(provider, 2)
        refused = await api.client.post("/api/debates", json={"problem": "Another one"})
        assert refused.status_code == 429 and refused.json()["error"] == "too_many_debates"
        assert len(api.ctx.store.list()) == 1  # nothing was created
        health = (await api.client.get("/api/health")).json()
        assert health["running"] == 1 and health["maxRunning"] == 1
        provider.gate.set()
        await api.finished(first)
        assert (await api.client.post("/api/debates", json={"problem": "Now it fits"})).status_code == 201

    serve(scenario, provider=provider, settings=ServeSettings(max_running=1))


DEAD = LeaseOwner(id="gone", pid=2**22 + 12345, host="elsewhere-host", started=None)


def leave_an_orphan(api: Api) -> None:
    """A debate saved as running whose lease a process that is gone held (its time is up too)."""
    state = DebateState(id="deb-orphan", problem="p", status="running", config=make_config().to_json_dict())
    an_hour_ago = utc_now() - timedelta(hours=1)
    create = DebateCreated(state=state)
    api.ctx.store.acquire_lease("deb-orphan", DEAD, now=an_hour_ago, ttl=timedelta(seconds=1), create=create)


def test_orphans_are_listed_at_start_up(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        leave_an_orphan(api)
        app = api.client._transport.app  # type: ignore[attr-defined]
        async with app.router.lifespan_context(app):
            notices = (await api.client.get("/api/health")).json()["notices"]
            assert len(notices) == 1 and "deb-orphan" in notices[0] and "--resume-orphans" in notices[0]
            stale = (await api.client.get("/api/debates?status=stale")).json()["items"]
            assert [item["id"] for item in stale] == ["deb-orphan"]
        assert api.ctx.store.load("deb-orphan").status == "running"

    serve(scenario)


def test_orphans_are_resumed_with_resume_orphans(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        leave_an_orphan(api)
        app = api.client._transport.app  # type: ignore[attr-defined]
        async with app.router.lifespan_context(app):
            assert await api.finished("deb-orphan") == "completed"
            notices = (await api.client.get("/api/health")).json()["notices"]
            assert notices == ["resumed debate deb-orphan, left running by a process that stopped"]

    serve(scenario, settings=ServeSettings(resume_orphans=True))


def test_resume_before_a_pause_took_effect_takes_the_pause_back(serve: Callable[..., None]) -> None:
    provider = GatedProvider()

    async def scenario(api: Api) -> None:
        debate_id = await api.start()
        await held(provider, 2)
        assert (await api.client.post(f"/api/debates/{debate_id}/pause")).json()["status"] == "pausing"
        resumed = await api.client.post(f"/api/debates/{debate_id}/resume")
        assert resumed.status_code == 202 and resumed.json() == {"id": debate_id, "status": "running"}
        provider.gate.set()
        assert await api.finished(debate_id) == "completed"
        statuses = [c.status for c in api.ctx.store.changes(debate_id) if isinstance(c, StatusChanged)]
        assert "paused" not in statuses

    serve(scenario, provider=provider)
