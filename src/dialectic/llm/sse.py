"""Server-sent events read from a response's lines: each event's name and data.

Streamed replies come as server-sent events. The provider adapters read the JSON of each
event themselves: an SDK's typed stream builds a model object for every chunk and cost several
times the CPU (measured by ``benchmarks/serve_load.py``: the SDK's per-chunk parsing was the
largest share of a busy server's time), and no SDK is imported any more.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass


@dataclass(frozen=True)
class ServerEvent:
    event: str
    """The ``event:`` field, ``message`` when none was given."""
    data: str
    """The ``data:`` lines, joined by newlines."""


async def server_events(lines: AsyncIterator[str]) -> AsyncIterator[ServerEvent]:
    """The events in ``lines`` (an SSE body split into lines), as the SSE specification reads them.

    A blank line ends an event; an event without data is skipped; comments (``:`` lines) and the
    ``id`` and ``retry`` fields are ignored.
    """
    event = ""
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield ServerEvent(event or "message", "\n".join(data))
            event, data = "", []
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
    if data:
        yield ServerEvent(event or "message", "\n".join(data))
