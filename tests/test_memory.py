"""Memory across debates, piece by piece: which past debates are recalled, the budget, the prompt
section (absent when memory is off), the saved changes and the configuration key."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dialectic.agents.templates import render
from dialectic.core.changes import DebateCreated, MemoriesRecalled, MemoryForgotten, dump_change, fold, parse_change
from dialectic.core.config import DebateSettings
from dialectic.core.domain import DebateState, KeyPoints, RecalledMemory, Solution, Verdict
from dialectic.engine.memory import fit, memories_text, memory_of, recall, round_memories, usable
from dialectic.similarity.detectors import LexicalSimilarity
from dialectic.store.base import DebateStore

NOW = datetime(2026, 11, 1, tzinfo=UTC)
LEXICAL = LexicalSimilarity()


@pytest.fixture
def store(contract_store: DebateStore) -> DebateStore:
    """Each backend in turn (SQLite, in memory, Postgres): recall reads the store through its contract."""
    return contract_store


def save(
    store: DebateStore, debate_id: str, problem: str, *, days_ago: int = 1, status: str = "completed", lesson: str = ""
) -> DebateState:
    state = DebateState(
        id=debate_id,
        problem=problem,
        status=status,  # type: ignore[arg-type]
        final_solution=Solution(description=lesson or f"Lessons of {debate_id}"),
        created_at=NOW - timedelta(days=days_ago),
    )
    store.append(debate_id, DebateCreated(state=state))
    return state


def recalled(store: DebateStore, problem: str, **settings: object) -> list[str]:
    options: dict[str, object] = {"count": 3, "min_similarity": 0.2, "max_chars": 3000, **settings}
    found = recall(store, problem, debate_id="deb-now", before=NOW, model=LEXICAL, **options)  # type: ignore[arg-type]
    return [m.debate_id for m in found]


def test_the_most_similar_completed_debates_come_first(store: DebateStore) -> None:
    save(store, "deb-close", "Design a token bucket rate limiter for an HTTP API")
    save(store, "deb-near", "Design a rate limiter")
    save(store, "deb-far", "Choose a font for a wedding invitation")
    save(store, "deb-running", "Design a token bucket rate limiter for an HTTP API", status="running")
    save(store, "deb-later", "Design a token bucket rate limiter for an HTTP API", days_ago=-1)
    save(store, "deb-now", "Design a token bucket rate limiter for an HTTP API")
    problem = "Design a token bucket rate limiter for a public HTTP API"
    assert recalled(store, problem) == ["deb-close", "deb-near"]
    assert recalled(store, problem, count=1) == ["deb-close"]
    assert recalled(store, problem, min_similarity=0.99) == []
    store.append("deb-close", MemoryForgotten())
    assert recalled(store, problem) == ["deb-near"]
    assert store.load("deb-close").memory_forgotten_at is not None  # the debate is kept, flagged


def test_an_empty_store_recalls_nothing(store: DebateStore) -> None:
    assert recalled(store, "Design a rate limiter") == []


def test_memories_fit_in_the_budget() -> None:
    memories = [
        RecalledMemory(debate_id=f"deb-{i}", problem="P", created_at=NOW, similarity=0.9, lessons="word " * 300)
        for i in range(3)
    ]
    kept = fit(memories, 1000)
    assert [m.debate_id for m in kept] == ["deb-0"]  # shortened to fit: the next ones do not
    assert len(memories_text(kept)) <= 1000 and kept[0].lessons.endswith("…")
    assert len(fit(memories, 10_000)) == 3 and len(memories_text(fit(memories, 10_000))) <= 10_000
    assert fit(memories, 200) == [] or len(memories_text(fit(memories, 200))) <= 200


def test_what_a_debate_gives_as_memory() -> None:
    state = DebateState(
        id="deb-1",
        problem="\nDesign a cache\nwith details",
        status="completed",
        agents=[],
        verdict=Verdict(
            summary="B argued better.", winner_id="agent-b", key_points=[KeyPoints(agent_id="a", points=["x"])]
        ),
        created_at=NOW,
    )
    memory = memory_of(state, 0.5, "lexical")
    assert memory.problem == "Design a cache" and memory.verdict == "winner agent-b; B argued better."
    assert memory.lessons == "x"  # no solution: the judge's key points
    text = memories_text([memory])
    assert text.startswith("### Past debate deb-1 (2026-11-01, similarity 0.50)")
    assert usable(state) and not usable(state.model_copy(update={"status": "failed"}))
    assert round_memories(state.model_copy(update={"memories": [memory]}), 1) == text
    assert round_memories(state.model_copy(update={"memories": [memory]}), 2) == ""


PROMPTS = {
    "propose.md.j2": dict(
        role_name="A", problem="P", context="", clarifications="", history="", history_is_summary=False, word_limit=9
    ),
    "reasoning/propose.md.j2": dict(
        role_name="A", problem="P", context="", clarifications="", history="", history_is_summary=False, word_limit=9
    ),
    "turn_opening.md.j2": dict(
        role_name="A",
        problem="P",
        clarifications="",
        discussion="",
        summary="",
        round_number=1,
        total_rounds=3,
        word_limit=9,
    ),
    "reasoning/turn.md.j2": dict(
        role_name="A",
        problem="P",
        clarifications="",
        discussion="",
        summary="",
        round_number=1,
        total_rounds=3,
        word_limit=9,
    ),
    "reasoning/answer.md.j2": dict(problem="P", clarifications="", word_limit=9),
}


@pytest.mark.parametrize("name", sorted(PROMPTS))
def test_the_prompt_section_is_absent_without_memories(name: str) -> None:
    plain = render(name, **PROMPTS[name])
    assert render(name, **PROMPTS[name], memories="") == plain
    shown = render(name, **PROMPTS[name], memories="### Past debate deb-1 (2026-11-01, similarity 0.90)")
    assert "## Past debates (memory)" in shown and "### Past debate deb-1" in shown
    assert shown.index("## Past debates") < shown.rindex("## Task")
    assert "\n\n\n" not in shown


def test_the_changes_round_trip_and_fold() -> None:
    memory = RecalledMemory(debate_id="deb-1", problem="P", created_at=NOW, similarity=0.8, lessons="L")
    created = DebateCreated(state=DebateState(id="deb-2", problem="Q"))
    changes = [created, MemoriesRecalled(memories=[memory]), MemoryForgotten()]
    state = fold([parse_change(dump_change(c)) for c in changes])
    assert state.memories == [memory] and state.memory_forgotten_at is not None
    assert "memories" not in fold([created]).to_json_dict()


@pytest.mark.parametrize(("given", "mode"), [(True, "on"), (False, "off"), ("on", "on"), ("off", "off")])
def test_yaml_on_and_off_are_the_mode(given: object, mode: str) -> None:
    assert DebateSettings.model_validate({"memory": given}).memory == mode
    assert DebateSettings().memory == "off" and DebateSettings().memory_count == 3
