"""A server keeps nothing per finished debate: after debates started and watched to their end, its
feeds, runs, locks and timers are empty (issue 52's soak: memory must not grow with debates served)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tests.web.conftest import Api

DEBATES = 4


def test_after_debates_watched_to_their_end_the_server_holds_no_feed_run_lock_or_timer(
    serve: Callable[..., None],
) -> None:
    async def scenario(api: Api) -> None:
        async def one() -> str:
            debate_id = await api.start()
            events = await api.events(debate_id)  # the stream ends once the run has
            assert events[-1].event == "end" and events[-1].data["status"] == "completed"
            return debate_id

        ids = await asyncio.gather(*(one() for _ in range(DEBATES)))
        for debate_id in ids:
            assert await api.finished(debate_id) == "completed"
        assert len(api.ctx.hub._feeds) == 0
        assert api.ctx.runs.count == 0
        assert len(api.ctx.runs._locks) == 0 and len(api.ctx.runs._lock_users) == 0
        assert len(api.ctx.runs._deadlines) == 0 and len(api.ctx.runs._background) == 0

    serve(scenario)
