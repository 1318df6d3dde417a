"""Steering under concurrent requests: one state change at a time per debate, whatever arrives together.

Each scenario sends its requests at once (``asyncio.gather`` on the app's own loop, so they
interleave at every ``await``) and is repeated many times: a race that loses one time in four
shows up here. No sleeps: the scripted model's gate holds the debate mid-call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from tests.web.conftest import Api, GatedProvider

REPEATS = 12


async def post_all(api: Api, debate_id: str, *actions: str) -> list[int]:
    responses = await asyncio.gather(*(api.client.post(f"/api/debates/{debate_id}/{a}") for a in actions))
    return [r.status_code for r in responses]


def test_concurrent_cancels_leave_the_debate_interrupted(serve: Callable[..., None]) -> None:
    provider = GatedProvider()

    async def scenario(api: Api) -> None:
        for _ in range(REPEATS):
            debate_id = await api.start()
            await provider.until_waiting(2)
            codes = await post_all(api, debate_id, "cancel", "cancel", "cancel")
            assert codes == [200, 200, 200]
            assert await api.finished(debate_id) == "interrupted"
            assert api.ctx.store.load(debate_id).status == "interrupted"
            assert api.ctx.store.read_lease(debate_id) is None or not api.ctx.runs.is_running(debate_id)

    serve(scenario, provider=provider)


def test_the_runner_saves_the_interruption_when_cancelled_again_while_stopping(serve: Callable[..., None]) -> None:
    """The cause under the API race: a second ``cancel()`` landed while the first was being saved."""
    provider = GatedProvider()

    async def scenario(api: Api) -> None:
        for _ in range(REPEATS):
            debate_id = await api.start()
            await provider.until_waiting(2)
            task = api.ctx.runs._runs[debate_id].task
            for _ in range(3):
                task.cancel()
                await asyncio.sleep(0)  # a turn of the loop: the run is inside its stop when the next comes
            assert await api.finished(debate_id) == "interrupted"

    serve(scenario, provider=provider)


@pytest.mark.parametrize(
    "actions",
    [("pause", "cancel"), ("cancel", "pause"), ("cancel", "resume"), ("pause", "resume", "cancel")],
)
def test_mixed_steering_at_once_ends_in_one_consistent_state(
    serve: Callable[..., None], actions: tuple[str, ...]
) -> None:
    provider = GatedProvider()

    async def scenario(api: Api) -> None:
        for _ in range(REPEATS // 2):
            provider.gate.clear()
            debate_id = await api.start()
            await provider.until_waiting(2)
            codes = await post_all(api, debate_id, *actions)
            assert all(code < 500 for code in codes), codes
            provider.gate.set()
            status = await api.finished(debate_id)
            assert status in {"interrupted", "paused", "completed"}
            assert not api.ctx.runs.is_running(debate_id)
            assert api.ctx.store.load(debate_id).status == status

    serve(scenario, provider=provider)


def test_concurrent_answers_resume_the_debate_once(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        for _ in range(REPEATS // 2):
            debate_id = await api.start(clarify=True)
            assert await api.finished(debate_id) == "suspended"
            answers = {item.id: "yes" for item in api.ctx.store.load(debate_id).pending_questions()}
            before = len(api.provider.calls)
            responses = await asyncio.gather(
                *(api.client.post(f"/api/debates/{debate_id}/answers", json={"answers": answers}) for _ in range(3))
            )
            codes = sorted(r.status_code for r in responses)
            # one resumes it; the others find it running (409), or already asking new questions (422)
            assert codes[0] == 202 and all(code in {409, 422} for code in codes[1:]), [r.text for r in responses]
            await api.finished(debate_id)
            state = api.ctx.store.load(debate_id)
            answered = [item for item in state.clarification_items() if item.id in answers]
            assert all(item.answer == "yes" for item in answered)
            # the step after the answers ran once: one clarification (or proposal) call per agent, not two
            tags = [c.tag for c in api.provider.calls[before:]]
            assert len(tags) == len(set(tags)) or tags.count(tags[0]) == 1, tags

    serve(scenario)
