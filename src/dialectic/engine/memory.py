"""Memory across debates (``debate.memory: on``): the outcomes of similar past debates, given to round 1.

Before round 1 the engine looks through the store's completed debates (computed on the fly from
the store's listing: no index table), ranks their problems by similarity to this one (the
similarity package's model, :func:`~dialectic.similarity.choice.default_similarity`: MiniLM
embeddings when installed, else the lexical TF-IDF measure), and keeps the ``memoryCount`` most
similar at or above ``memoryMinSimilarity`` that fit in ``memoryMaxChars``. What each contributes
(:class:`~dialectic.core.domain.RecalledMemory`: its verdict and lessons, taken from its stored
state, no model call) is saved once (:class:`~dialectic.core.changes.MemoriesRecalled`), so a
resumed debate gives round 1 the same text, and the report names them. A debate taken out with
``dialectic memory forget`` (:class:`~dialectic.core.changes.MemoryForgotten`) is never recalled again.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from datetime import datetime

from dialectic.core.changes import MemoriesRecalled
from dialectic.core.domain import DebateState, RecalledMemory
from dialectic.core.errors import StoreError
from dialectic.engine.run_state import RunState
from dialectic.similarity.choice import default_similarity
from dialectic.similarity.detectors import SimilarityModel
from dialectic.store.base import DebateStore, as_utc, first_line

log = logging.getLogger(__name__)

SCAN_LIMIT = 500
"""Completed debates looked at, newest first: memory is computed from the listing, so it is bounded."""
PROBLEM_CHARS = 200
VERDICT_CHARS = 400
LESSON_CHARS = 800


def usable(state: DebateState) -> bool:
    """Whether ``state`` may serve as memory: completed, not forgotten, with an outcome to give."""
    return (
        state.status == "completed"
        and state.memory_forgotten_at is None
        and (state.final_solution is not None or state.verdict is not None or state.answer_tally is not None)
    )


def _cut(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def _name(state: DebateState, agent_id: str) -> str:
    return next((agent.name for agent in state.agents if agent.id == agent_id), agent_id)


def verdict_of(state: DebateState) -> str | None:
    """The past debate's verdict in a line: the judge's (winner and summary), else the vote's or the tally's."""
    if state.verdict is not None:
        winner = f"winner {_name(state, state.verdict.winner_id)}; " if state.verdict.winner_id else ""
        return _cut(f"{winner}{state.verdict.summary}", VERDICT_CHARS)
    if state.vote is not None and state.vote.winner_id:
        return f"the vote chose {_name(state, state.vote.winner_id)}"
    tally = state.answer_tally
    if tally is not None and tally.answer:
        return _cut(f"answer {tally.answer} ({tally.agreeing} of {tally.answered} agreed)", VERDICT_CHARS)
    return None


def lessons_of(state: DebateState) -> str:
    """What the past debate concluded: its solution's summary, else the judge's key points."""
    if state.final_solution is not None and state.final_solution.description.strip():
        return _cut(state.final_solution.description, LESSON_CHARS)
    if state.verdict is not None:
        points = [point for group in state.verdict.key_points for point in group.points]
        points += state.verdict.insights
        if points:
            return _cut("; ".join(points), LESSON_CHARS)
    return ""


def memory_of(state: DebateState, similarity: float = 1.0, measured_by: str = "") -> RecalledMemory:
    """What ``state`` contributes as memory (``measured_by`` empty: not measured against a problem, as
    ``dialectic memory show`` has it, and its text then names no similarity)."""
    return RecalledMemory(
        debate_id=state.id,
        problem=_cut(first_line(state.problem), PROBLEM_CHARS),
        created_at=state.created_at,
        similarity=round(similarity, 3),
        measured_by=measured_by,
        verdict=verdict_of(state),
        lessons=lessons_of(state),
    )


def past_debates(store: DebateStore, *, limit: int = SCAN_LIMIT) -> Iterator[DebateState]:
    """The store's debates usable as memory, newest first (an unreadable one is skipped)."""
    for listing in store.list(status="completed", limit=limit):
        try:
            state = store.load(listing.id)
        except StoreError as exc:
            log.warning("debate %s cannot serve as memory: %s", listing.id, exc)
            continue
        if usable(state):
            yield state


def memory_block(memory: RecalledMemory) -> str:
    """One past debate as round 1 is given it: attributed, dated, marked as past."""
    similarity = f", similarity {memory.similarity:.2f}" if memory.measured_by else ""
    lines = [
        f"### Past debate {memory.debate_id} ({memory.created_at:%Y-%m-%d}{similarity})",
        f"Its problem: {memory.problem}",
    ]
    if memory.verdict:
        lines.append(f"Its verdict: {memory.verdict}")
    if memory.lessons:
        lines.append(f"Its lessons: {memory.lessons}")
    return "\n".join(lines)


def memories_text(memories: Sequence[RecalledMemory]) -> str:
    """The past debates' section of the round-1 prompts ("" when there are none)."""
    return "\n\n".join(memory_block(memory) for memory in memories)


def fit(memories: Sequence[RecalledMemory], max_chars: int) -> list[RecalledMemory]:
    """The memories whose text fits in ``max_chars``, most similar first; the first is shortened to fit."""
    kept: list[RecalledMemory] = []
    for memory in memories:
        if len(memories_text([*kept, memory])) <= max_chars:
            kept.append(memory)
            continue
        if not kept:
            spare = max_chars - len(memory_block(memory.model_copy(update={"lessons": ""}))) - len("\nIts lessons: ")
            if spare >= 40:
                kept.append(memory.model_copy(update={"lessons": _cut(memory.lessons, spare)}))
        break
    return kept


def recall(
    store: DebateStore,
    problem: str,
    *,
    debate_id: str,
    before: datetime,
    exclude: frozenset[str] = frozenset(),
    count: int,
    min_similarity: float,
    max_chars: int,
    model: SimilarityModel | None = None,
) -> list[RecalledMemory]:
    """The ``count`` past debates most like ``problem`` (created before ``before``, not ``debate_id`` nor
    those in ``exclude``), within ``max_chars``."""
    left_out = exclude | {debate_id}
    past = [s for s in past_debates(store) if s.id not in left_out and as_utc(s.created_at) <= as_utc(before)]
    if not past:
        return []
    model = model or default_similarity()
    scores = model.similarities([problem, *(s.problem for s in past)])[0][1:]
    ranked = sorted(zip(scores, past, strict=True), key=lambda pair: -pair[0])
    chosen = [memory_of(state, score, model.name) for score, state in ranked if score >= min_similarity][:count]
    return fit(chosen, max_chars)


def recall_if_asked(ctx: RunState) -> None:
    """With ``debate.memory: on``, choose and save the debate's memories once, before round 1."""
    settings = ctx.roster.settings
    if settings.memory != "on" or ctx.state.memories is not None:
        return
    replayed = _replayed_memories(ctx)
    if replayed is not None:
        ctx.record(MemoriesRecalled(memories=replayed))
        return
    try:
        memories = recall(
            ctx.store,
            ctx.state.problem,
            debate_id=ctx.debate_id,
            before=ctx.state.created_at,
            count=settings.memory_count,
            min_similarity=settings.memory_min_similarity,
            max_chars=settings.memory_max_chars,
            exclude=frozenset({ctx.state.replay_of}) if ctx.state.replay_of else frozenset(),
        )
    except StoreError as exc:
        ctx.warn(f"memory: the past debates could not be read ({exc}); round 1 starts without them")
        memories = []
    ctx.record(MemoriesRecalled(memories=memories))


def _replayed_memories(ctx: RunState) -> list[RecalledMemory] | None:
    """A replay's memories: the original's, so that it sends the requests the original sent (``None``: the
    debate is no replay, or its original recalled none; a replay never recalls its own original)."""
    if ctx.state.replay_of is None:
        return None
    try:
        original = ctx.store.load(ctx.state.replay_of)
    except StoreError:
        return None
    return [memory.model_copy() for memory in original.memories] if original.memories is not None else None


def round_memories(state: DebateState, round_number: int) -> str:
    """The past debates' text for a prompt of ``round_number``: only round 1's, only with memory on."""
    if round_number != 1 or not state.memories:
        return ""
    return memories_text(state.memories)
