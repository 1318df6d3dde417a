"""What the ``dialectic memory`` commands do (declared in :mod:`dialectic.cli.memory_command`).

None of them creates a store: a ``--store`` that holds no database reads as empty. An unknown id
is a one-line error, exit 2, as ``dialectic show`` has it.
"""

from __future__ import annotations

import json
import sys

from dialectic.cli.command_setup import open_debate_store
from dialectic.core.bounds import MAX_LISTED, check_range
from dialectic.core.changes import MemoryForgotten
from dialectic.core.domain import DebateState
from dialectic.core.errors import DebateStateError
from dialectic.engine.memory import memories_text, memory_of, past_debates, usable
from dialectic.store.base import cut_line

PROBLEM_CHARS = 70


def list_memories(*, limit: int | None, store: str | None, as_json: bool) -> None:
    """``dialectic memory list``: the debates usable as memory, newest first."""
    if limit is not None:
        check_range("--limit", limit, 1, MAX_LISTED)
    debate_store, _ = open_debate_store(store, create=False)
    try:
        states = list(past_debates(debate_store))
        location = debate_store.location
    finally:
        debate_store.close()
    memories = [memory_of(state) for state in states][:limit]
    if as_json:
        rows = [
            memory.model_dump(mode="json", by_alias=True, exclude={"similarity", "measured_by"}) for memory in memories
        ]
        sys.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return
    if not memories:
        sys.stdout.write(f"No debate usable as memory in {location} (completed, with an outcome, not forgotten).\n")
        return
    for memory in memories:
        sys.stdout.write(
            f"{memory.debate_id}  {memory.created_at:%Y-%m-%d}  {cut_line(memory.problem, PROBLEM_CHARS)}\n"
        )


def _why_not(state: DebateState) -> str | None:
    """Why ``state`` is not usable as memory, or ``None`` when it is."""
    if state.memory_forgotten_at is not None:
        return f"forgotten {state.memory_forgotten_at:%Y-%m-%d %H:%M:%S} (dialectic memory forget)"
    if state.status != "completed":
        return f"it is {state.status}, not completed"
    if not usable(state):
        return "it has no solution or verdict to give"
    return None


def show_memory(debate_id: str, *, store: str | None) -> None:
    """``dialectic memory show ID``: what the debate would give a later debate's round 1."""
    debate_store, _ = open_debate_store(store, create=False)
    try:
        state = debate_store.load(debate_id)
    finally:
        debate_store.close()
    reason = _why_not(state)
    status = "usable as memory" if reason is None else f"not usable as memory: {reason}"
    sys.stdout.write(f"{debate_id}: {status}\n\n{memories_text([memory_of(state)])}\n")


def forget_memory(debate_id: str, *, store: str | None) -> None:
    """``dialectic memory forget ID``: flag the debate so no later debate recalls it (it is kept)."""
    debate_store, _ = open_debate_store(store, create=False)
    try:
        state = debate_store.load(debate_id)
        if state.memory_forgotten_at is not None:
            sys.stdout.write(f"{debate_id} was already forgotten ({state.memory_forgotten_at:%Y-%m-%d %H:%M:%S}).\n")
            return
        if state.status != "completed":
            raise DebateStateError(
                f"debate '{debate_id}' is {state.status}: only a completed debate serves as memory, so only one can be "
                "forgotten"
            )
        debate_store.append(debate_id, MemoryForgotten())
    finally:
        debate_store.close()
    sys.stdout.write(f"Forgotten: {debate_id} is no longer used as memory (the debate itself is kept).\n")
