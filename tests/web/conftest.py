"""Web API fixtures: the app on a real store, driven through httpx's ASGI client (no socket)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from dialectic.core.config import SystemConfig
from dialectic.llm.base import Completion, CompletionRequest
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import Responder, ScriptedProvider
from dialectic.store import MemoryStore, SqliteStore
from dialectic.store.base import DebateStore
from dialectic.testing.harness import make_config
from dialectic.web.app import create_app
from dialectic.web.new_debate import ServerConfig
from dialectic.web.state import ServerState, ServeSettings, build_context

BASE_URL = "http://127.0.0.1:8000"


class GatedProvider(ScriptedProvider):
    """The scripted model; while ``gate`` is clear, the calls ``held`` picks wait for it."""

    def __init__(self, responder: Responder | None = None, held: Callable[[CompletionRequest], bool] | None = None):
        super().__init__(responder)
        self._held = held or (lambda request: request.tag.startswith("proposal"))
        self.gate = asyncio.Event()
        self.waiting = 0
        self._arrivals = asyncio.Condition()

    async def until_waiting(self, calls: int) -> None:
        """Until ``calls`` calls wait at the gate (woken by each arrival: no polling, no timing)."""
        async with self._arrivals:
            await self._arrivals.wait_for(lambda: self.waiting >= calls)

    async def complete(self, request: CompletionRequest) -> Completion:
        if self._held(request) and not self.gate.is_set():
            self.waiting += 1
            async with self._arrivals:
                self._arrivals.notify_all()
            try:
                await self.gate.wait()
            finally:
                self.waiting -= 1
        return await super().complete(request)


@dataclass
class Event:
    event: str
    id: str | None
    data: dict[str, Any]


def parse_sse(text: str) -> list[Event]:
    """The events of an SSE body (comments and pings skipped)."""
    events: list[Event] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name, event_id, data = "message", None, []
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("data: "):
                data.append(line[6:])
        if data:
            events.append(Event(name, event_id, json.loads("\n".join(data))))
    return events


@dataclass
class Api:
    """One app and a client for it; ``provider`` answers every agent (they all use ``scripted``)."""

    ctx: ServerState
    client: httpx.AsyncClient
    provider: ScriptedProvider
    created: list[str] = field(default_factory=list)

    async def start(self, **body: Any) -> str:
        response = await self.client.post("/api/debates", json={"problem": "Design a rate limiter", **body})
        assert response.status_code == 201, response.text
        debate_id: str = response.json()["id"]
        self.created.append(debate_id)
        return debate_id

    async def finished(self, debate_id: str) -> str:
        """Wait (on the run's own task) until this server no longer runs the debate; its status."""
        run = self.ctx.runs._runs.get(debate_id)
        if run is not None:
            await asyncio.wait({run.task})
        await asyncio.sleep(0)  # the run's done-callback
        return self.ctx.store.load(debate_id).status

    async def events(self, debate_id: str, **headers: str) -> list[Event]:
        response = await self.client.get(f"/api/debates/{debate_id}/events", headers=headers)
        assert response.status_code == 200, response.text
        return parse_sse(response.text)


Scenario = Callable[[Api], Awaitable[None]]


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[DebateStore]:
    backend: DebateStore = MemoryStore() if request.param == "memory" else SqliteStore(tmp_path / "debates.sqlite3")
    yield backend
    backend.close()


@pytest.fixture
def serve(store: DebateStore, tmp_path: Path) -> Callable[..., None]:
    """``serve(scenario, settings=..., config=..., provider=...)`` runs ``scenario`` against a fresh app."""

    def run(
        scenario: Scenario,
        *,
        settings: ServeSettings | None = None,
        config: SystemConfig | None = None,
        provider: ScriptedProvider | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        async def main() -> None:
            chosen = provider or ScriptedProvider()
            ctx = build_context(
                store,
                ServerConfig(config or make_config(agents=2, rounds=1), tmp_path),
                settings or ServeSettings(),
                ProviderPool(overrides={"scripted": chosen}),
            )
            app = create_app(ctx)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url=BASE_URL, headers=headers) as client:
                try:
                    await scenario(Api(ctx, client, chosen))
                finally:
                    await ctx.runs.shutdown()

        asyncio.run(main())

    return run
