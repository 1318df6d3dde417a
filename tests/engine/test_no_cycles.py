"""A finished debate leaves nothing behind for the garbage collector's full passes (issue 52's soak).

A server runs debate after debate in one process. When a finished run's objects (its state, its
work table, its calls' retry loops) sit in reference cycles, reference counting cannot free them:
they wait for a full collection, which comes more and more rarely as the heap grows, and the
server's memory grows with the number of debates served. With the collector off and told to keep
what it finds, one collection after some debates lists exactly what was left in cycles: a count.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dialectic.core.domain import DebateState
from dialectic.engine.lease import LeaseHold
from dialectic.engine.run_state import RunState
from dialectic.engine.work import DebateWork
from dialectic.testing.harness import Harness, make_config, scripted_judge

DEBATES = 3


@pytest.fixture
def cycles() -> Iterator[list[object]]:
    """What one collection finds in reference cycles, collected while the test body ran with the collector off."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    found: list[object] = []
    try:
        yield found
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        found.clear()
        # what was found (pending coroutines, tasks) is finalized now, not at some later collection: a
        # finalizer that imports would otherwise run inside whatever parses code then (Python 3.11's
        # ast.parse is not re-entrant: "AST constructor recursion depth mismatch")
        gc.collect()
        if was_enabled:
            gc.enable()


def collect_into(found: list[object]) -> None:
    gc.collect()
    found.extend(gc.garbage)
    gc.garbage.clear()


def count_schema_generators(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every pydantic JSON schema generator made from now on."""
    from pydantic.json_schema import GenerateJsonSchema

    made: list[object] = []
    init = GenerateJsonSchema.__init__

    def counted(self: GenerateJsonSchema, *args: Any, **kwargs: Any) -> None:
        made.append(type(self))
        init(self, *args, **kwargs)

    monkeypatch.setattr(GenerateJsonSchema, "__init__", counted)
    return made


def test_finished_debates_leave_no_run_state_in_reference_cycles(
    harness: Callable[..., Harness], cycles: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness(scripted_judge())
    engine = h.engine()
    config = make_config(agents=2, rounds=2)

    from dialectic.engine import DebateRequest

    async def debates(numbers: range) -> list[DebateState]:
        return [
            await engine.start(DebateRequest(problem=f"Variant {n}", config=config, config_dir=Path(".")))
            for n in numbers
        ]

    asyncio.run(debates(range(1)))  # what is made once and kept (templates, schemas) is made here
    collect_into([])
    generated = count_schema_generators(monkeypatch)
    states = asyncio.run(debates(range(1, DEBATES + 1)))
    assert [s.status for s in states] == ["completed"] * DEBATES
    del states
    collect_into(cycles)
    kept = [o for o in cycles if isinstance(o, (DebateState, RunState, DebateWork, LeaseHold, asyncio.Task))]
    tenacity_loops = [o for o in cycles if type(o).__module__.startswith("tenacity")]
    assert len(kept) == 0, sorted({type(o).__qualname__ for o in kept})
    assert len(tenacity_loops) == 0
    assert generated == []  # pydantic's schema generator (a cycle of its own) runs once per output model, not per call
