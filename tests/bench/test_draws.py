"""Shared samples: the k-th draw of a request is asked once per run, whichever arm needs it first."""

from __future__ import annotations

import asyncio

import pytest

from dialectic.bench.draws import SharedDraws
from dialectic.core.domain import Usage
from dialectic.core.errors import ProviderError
from dialectic.llm.base import Completion


def completion(text: str) -> Completion:
    return Completion(text=text, model="m", usage=Usage(input_tokens=3, output_tokens=2), latency_ms=0)


def test_arms_waiting_for_one_draw_share_one_request() -> None:
    draws = SharedDraws()
    asked: list[str] = []
    gate = asyncio.Event()

    async def ask() -> Completion:
        asked.append("x")
        await gate.wait()
        return completion("42")

    async def main() -> list[tuple[Completion, bool]]:
        first = asyncio.ensure_future(draws.draw("k0", ask))
        second = asyncio.ensure_future(draws.draw("k0", ask))
        other = asyncio.ensure_future(draws.draw("k1", ask))
        await asyncio.sleep(0)
        gate.set()
        return list(await asyncio.gather(first, second, other))

    results = asyncio.run(main())
    assert [(c.text, shared) for c, shared in results] == [("42", False), ("42", True), ("42", False)]
    assert len(asked) == 2 and (draws.asked, draws.shared) == (2, 1)


def test_a_failed_draw_reaches_its_waiters_and_is_asked_again() -> None:
    draws = SharedDraws()
    calls = 0

    async def failing() -> Completion:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0)
        raise ProviderError("down")

    async def fine() -> Completion:
        nonlocal calls
        calls += 1
        return completion("7")

    async def main() -> tuple[list[object], tuple[Completion, bool]]:
        outcomes = await asyncio.gather(draws.draw("k", failing), draws.draw("k", failing), return_exceptions=True)
        return list(outcomes), await draws.draw("k", fine)

    outcomes, again = asyncio.run(main())
    assert all(isinstance(o, ProviderError) for o in outcomes)
    assert again[0].text == "7" and again[1] is False and calls == 2


def test_a_cancelled_asker_leaves_no_draw_behind() -> None:
    draws = SharedDraws()

    async def slow() -> Completion:
        await asyncio.sleep(10)
        return completion("never")

    async def main() -> tuple[Completion, bool]:
        task = asyncio.ensure_future(draws.draw("k", slow))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return await draws.draw("k", lambda: asyncio.sleep(0, completion("fresh")))

    text, shared = asyncio.run(main())
    assert text.text == "fresh" and shared is False
