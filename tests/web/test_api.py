"""The JSON API through httpx's ASGI client: every endpoint, on both store backends."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import httpx2 as httpx
import pytest

from dialectic.reporting.export import export_json
from dialectic.reporting.report import render_report
from dialectic.web.feed import DebateFeed, Subscriber
from tests.web.conftest import Api, GatedProvider, parse_sse

SEED_KEYS = {"id", "problem", "status", "currentRound", "rounds", "finalSolution", "clarifications", "promptSources"}


def test_health_says_the_server_is_up(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        response = await api.client.get("/api/health")
        assert response.status_code == 200
        body = response.json()
        assert body["status"] == "ok" and body["running"] == 0 and body["maxRunning"] == 50 and body["auth"] is False

    serve(scenario)


def test_a_debate_started_over_the_api_runs_to_the_end_and_its_stream_replays_it(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        response = await api.client.post("/api/debates", json={"problem": "Design a rate limiter", "rounds": 1})
        assert response.status_code == 201
        debate_id = response.json()["id"]
        assert response.headers["location"] == f"/api/debates/{debate_id}"
        assert await api.finished(debate_id) == "completed"
        events = await api.events(debate_id)
        stored = [e for e in events if e.id is not None and "." not in e.id]
        assert [int(e.id or 0) for e in stored] == list(range(1, len(stored) + 1))
        assert [e.event for e in stored] == [c.kind for c in api.ctx.store.changes(debate_id)]
        assert events[-1].event == "end" and events[-1].data == {"status": "completed"}
        contributions = [e.data["contribution"] for e in events if e.event == "contribution_recorded"]
        assert len(contributions) == 2 + 2 + 2
        assert all(c["contentHtml"].startswith("<ol>") for c in contributions)  # numbered points, rendered
        assert all("<strong>" in c["contentHtml"] for c in contributions)

    serve(scenario)


def test_last_event_id_replays_only_what_came_after_it(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        debate_id = await api.start()
        await api.finished(debate_id)
        everything = [e for e in await api.events(debate_id) if e.id is not None]
        after_five = await api.events(debate_id, **{"Last-Event-ID": "5"})
        assert [e.id for e in after_five if e.id] == [e.id for e in everything if int(e.id or 0) > 5]
        live_style = await api.events(debate_id, **{"Last-Event-ID": "5.3"})
        assert [e.id for e in live_style] == [e.id for e in after_five]
        by_query = await api.client.get(f"/api/debates/{debate_id}/events?after=5")
        assert by_query.text == (await api.client.get(f"/api/debates/{debate_id}/events?after=5")).text
        last = everything[-1].id
        tail = await api.events(debate_id, **{"Last-Event-ID": str(last)})
        assert [e.event for e in tail] == ["end"]
        bad = await api.client.get(f"/api/debates/{debate_id}/events", headers={"Last-Event-ID": "abc"})
        assert bad.status_code == 400 and bad.json()["error"] == "bad_request"

    serve(scenario)


@pytest.mark.parametrize("value", ["²", "١٢", "１２", str(10**30), str(2**63), "-1", "+5", "5.x", "5.²", "1_0"])
def test_an_event_id_that_is_not_ascii_digits_within_sqlites_range_is_a_400(
    serve: Callable[..., None], value: str
) -> None:
    """``str.isdigit`` takes ``²``, which ``int`` refuses; SQLite's integers end at 2**63 - 1 (both were 500s)."""

    async def scenario(api: Api) -> None:
        debate_id = await api.start()
        await api.finished(debate_id)
        url = f"/api/debates/{debate_id}/events"
        by_header = await api.client.get(url, headers={"Last-Event-ID": value.encode("utf-8")})
        by_query = await api.client.get(url, params={"after": value})
        for response, name in ((by_header, "Last-Event-ID"), (by_query, "after")):
            assert response.status_code == 400, response.text
            body = response.json()
            assert body["error"] == "bad_request" and body["detail"].startswith(name)
            assert "\n" not in body["detail"]
        largest = await api.client.get(url, params={"after": str(2**63 - 1)})
        assert [e.event for e in parse_sse(largest.text)] == ["end"]

    serve(scenario)


def test_a_lone_surrogate_in_a_request_is_a_422_naming_the_field(serve: Callable[..., None]) -> None:
    """JSON's ``"\\ud800"`` decodes to text no encoder takes: refused before it is saved (it was a 500)."""

    def post(api: Api, path: str, body: object) -> Awaitable[httpx.Response]:
        content = json.dumps(body)  # ASCII, the surrogate as an escape, as a client may send it
        return api.client.post(path, content=content, headers={"Content-Type": "application/json"})

    async def scenario(api: Api) -> None:
        problem = await post(api, "/api/debates", {"problem": "Design a cache \ud800"})
        assert problem.status_code == 422, problem.text
        assert set(problem.json()["fields"]) == {"problem"} and "lone surrogate" in problem.json()["detail"]
        agent = await post(api, "/api/debates", {"problem": "Design a cache", "agents": [{"role": "x\udfff"}]})
        assert agent.status_code == 422 and set(agent.json()["fields"]) == {"agents"}
        assert agent.json()["detail"].startswith("agents: the text at [0].role is not valid Unicode text")
        config = await post(api, "/api/debates", {"problem": "Design a cache", "config": {"\ud800": 1}})
        assert config.status_code == 422 and set(config.json()["fields"]) == {"config"}
        token = await post(api, "/api/session", {"token": "\ud800"})
        assert token.status_code == 422
        assert api.ctx.store.list() == []

    serve(scenario)


def test_a_watched_run_streams_token_deltas_that_add_up_to_each_contribution(serve: Callable[..., None]) -> None:
    provider = GatedProvider()

    async def scenario(api: Api) -> None:
        debate_id = await api.start()
        subscribed = asyncio.Event()
        hub_subscribe = api.ctx.hub.subscribe

        def subscribe(debate_id: str, after: int) -> tuple[DebateFeed, Subscriber]:
            found = hub_subscribe(debate_id, after)
            subscribed.set()
            return found

        api.ctx.hub.subscribe = subscribe
        watching = asyncio.ensure_future(api.events(debate_id))
        # the request's dependencies may pass through worker threads first: wait for the subscription itself
        await asyncio.wait({watching, asyncio.ensure_future(subscribed.wait())}, return_when=asyncio.FIRST_COMPLETED)
        assert subscribed.is_set(), watching.result()
        assert provider.waiting == 2  # the proposals are still held: their tokens come after this
        provider.gate.set()
        events = await watching
        texts: dict[tuple[str, int, str, str | None], str] = {}
        live_ids = []
        for e in events:
            if e.event == "token":
                key = (e.data["agentId"], e.data["roundNumber"], e.data["kind"], e.data["targetId"])
                texts[key] = texts.get(key, "")[: e.data["offset"]] + e.data["text"]
            if e.id and "." in e.id:
                live_ids.append(tuple(int(part) for part in e.id.split(".")))
        assert live_ids == sorted(live_ids) and len(set(live_ids)) == len(live_ids)
        contributions = [e.data for e in events if e.event == "contribution_recorded"]
        assert contributions
        for change in contributions:
            c = change["contribution"]
            assert texts[(c["agentId"], change["roundNumber"], c["type"], c.get("targetAgentId"))] == c["content"]

    serve(scenario, provider=provider)


def test_the_state_is_the_seed_shaped_debate(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        debate_id = await api.start()
        await api.finished(debate_id)
        body = (await api.client.get(f"/api/debates/{debate_id}")).json()
        assert SEED_KEYS <= set(body) and body["id"] == debate_id and body["status"] == "completed"
        missing = await api.client.get("/api/debates/deb-nope")
        assert missing.status_code == 404
        assert missing.json() == {"error": "not_found", "detail": missing.json()["detail"]}
        assert "deb-nope" in missing.json()["detail"]

    serve(scenario)


def test_downloads_are_the_clis_export_and_report(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        debate_id = await api.start()
        await api.finished(debate_id)
        state = api.ctx.store.load(debate_id)
        exported = await api.client.get(f"/api/debates/{debate_id}/export")
        assert exported.text == export_json(state)
        assert exported.headers["content-disposition"] == f'attachment; filename="{debate_id}.json"'
        report = await api.client.get(f"/api/debates/{debate_id}/report")
        assert report.text == render_report(state)
        assert report.headers["content-type"].startswith("text/markdown")
        assert (await api.client.get("/api/debates/deb-nope/report")).status_code == 404

    serve(scenario)


def test_the_list_is_newest_first_paged_and_filtered(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        ids = [await api.start(problem=f"Problem {n}") for n in range(3)]
        for debate_id in ids:
            await api.finished(debate_id)
        first = (await api.client.get("/api/debates?limit=2")).json()
        assert [item["id"] for item in first["items"]] == ids[::-1][:2]
        item = first["items"][0]
        assert item["problem"] == "Problem 2" and item["status"] == "completed" and item["rounds"] == 1
        assert item["agents"] == ["Architect", "Performance"] and item["tokens"]["total"] > 0
        second = (await api.client.get(f"/api/debates?limit=2&cursor={first['nextCursor']}")).json()
        assert [i["id"] for i in second["items"]] == [ids[0]] and second["nextCursor"] is None
        completed = (await api.client.get("/api/debates?status=completed")).json()
        assert len(completed["items"]) == 3
        assert (await api.client.get("/api/debates?status=paused")).json()["items"] == []
        unknown = await api.client.get("/api/debates?status=sleeping")
        assert unknown.status_code == 422 and "unknown status 'sleeping'" in unknown.json()["detail"]
        assert (await api.client.get("/api/debates?cursor=deb-gone")).status_code == 400
        assert (await api.client.get("/api/debates?limit=0")).status_code == 422

    serve(scenario)


def test_the_list_counts_tokens_as_the_report_does(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        debate_id = await api.start()
        await api.finished(debate_id)
        tokens = (await api.client.get("/api/debates")).json()["items"][0]["tokens"]
        report = render_report(api.ctx.store.load(debate_id))
        line = next(ln for ln in report.splitlines() if ln.startswith("- **Tokens:**"))
        assert line == (
            f"- **Tokens:** {tokens['input']:,} input · {tokens['output']:,} output · {tokens['total']:,} total"
        )

    serve(scenario)


def test_the_options_offer_the_servers_agents_without_their_endpoints(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        body = (await api.client.get("/api/options")).json()
        assert [a["id"] for a in body["agents"]] == ["agent-architect", "agent-performance"]
        assert "baseUrl" not in body["agents"][0] and "critique-refine" in body["formats"]
        assert body["defaults"]["rounds"] == 1 and "stale" in body["statuses"]

    serve(scenario)


def test_the_page_and_the_api_docs_are_served(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        page = await api.client.get("/")
        assert page.status_code == 200 and "<main" in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
        script = await api.client.get("/static/app.js")
        assert script.status_code == 200 and "EventSource" in script.text
        schema = (await api.client.get("/openapi.json")).json()
        assert {
            "/api/debates",
            "/api/debates/{debate_id}",
            "/api/debates/{debate_id}/events",
            "/api/debates/{debate_id}/answers",
            "/api/debates/{debate_id}/pause",
            "/api/debates/{debate_id}/resume",
            "/api/debates/{debate_id}/cancel",
            "/api/debates/{debate_id}/export",
            "/api/debates/{debate_id}/report",
            "/api/health",
        } <= set(schema["paths"])
        docs = await api.client.get("/docs")
        assert docs.status_code == 200 and docs.headers["content-type"].startswith("text/html")
        # Offline: nothing loaded from elsewhere (Swagger UI's CDN scripts gave a blank page), and the page's CSP.
        assert "http://" not in docs.text and "https://" not in docs.text and "<script" not in docs.text
        assert "script-src 'self'" in docs.headers["content-security-policy"]
        assert "<code>POST /api/debates</code>" in docs.text and "<code>GET /api/health</code>" in docs.text
        assert "<code>problem</code>" in docs.text  # the body's fields are listed
        assert (await api.client.get("/redoc")).status_code == 404
        assert "content-security-policy" not in (await api.client.get("/api/health")).headers

    serve(scenario)


def test_an_unknown_route_and_method_answer_as_json(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        missing = await api.client.get("/api/nothing-here")
        assert missing.status_code == 404 and missing.json()["error"] == "not_found"
        wrong = await api.client.delete("/api/debates")
        assert wrong.status_code == 405 and wrong.json()["error"] == "method_not_allowed"

    serve(scenario)
