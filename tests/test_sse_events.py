"""Reading server-sent events from a streamed body's lines."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from dialectic.llm.sse import ServerEvent, server_events


async def _lines(text: str) -> AsyncIterator[str]:
    for line in text.split("\n"):
        yield line


def read(text: str) -> list[ServerEvent]:
    async def collect() -> list[ServerEvent]:
        return [event async for event in server_events(_lines(text))]

    return asyncio.run(collect())


def test_each_blank_line_ends_an_event() -> None:
    body = 'data: {"a": 1}\n\ndata: {"a": 2}\n\ndata: [DONE]\n\n'
    assert [event.data for event in read(body)] == ['{"a": 1}', '{"a": 2}', "[DONE]"]
    assert {event.event for event in read(body)} == {"message"}


def test_named_events_multi_line_data_comments_and_other_fields() -> None:
    body = ': keep-alive\n\nevent: error\nid: 7\nretry: 100\ndata: {"error":\ndata: 1}\n\nevent: ping\n\n'
    assert read(body) == [ServerEvent("error", '{"error":\n1}')]  # the ping has no data: skipped


def test_the_last_event_counts_without_a_closing_blank_line() -> None:
    assert read("data:x") == [ServerEvent("message", "x")]  # no space after the colon is fine too
