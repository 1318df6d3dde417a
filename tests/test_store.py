"""The debate stores: both backends against the same contract, then SQLite specifics."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from dialectic.core.changes import (
    AnswersRecorded,
    Change,
    ContributionRecorded,
    CursorMoved,
    DebateCreated,
    EvaluationRecorded,
    JudgeSummaryRecorded,
    QuestionsAsked,
    RoundStarted,
    SolutionRecorded,
    StatusChanged,
    SummaryRecorded,
    fold,
)
from dialectic.core.domain import (
    AgentClarifications,
    AgentPromptSources,
    ClarificationItem,
    Contribution,
    ContributionMetadata,
    DebateState,
    DebateSummary,
    Participant,
    PromptSource,
    PromptSources,
    RoundEvaluation,
    Solution,
    SummaryMetadata,
)
from dialectic.core.errors import DebateNotFoundError, StoreError
from dialectic.store import (
    DebateListing,
    DebateStore,
    MemoryStore,
    SqliteStore,
    default_data_dir,
    open_store,
    resolve_data_dir,
)
from dialectic.store.sqlite import MIGRATIONS

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
ARCHITECT = "agent-architect"
SECURITY = "agent-security"


def tick(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def new_debate(
    debate_id: str = "deb-1",
    *,
    problem: str = "Design a rate limiter\nfor a public API",
    created: datetime = T0,
    status: str = "pending",
) -> DebateCreated:
    state = DebateState(
        id=debate_id,
        problem=problem,
        context="Existing stack: nginx + Redis.",
        status=status,  # type: ignore[arg-type]
        agents=[
            Participant(id=ARCHITECT, name="System Architect", role="architect", model="gpt-4o", provider="openai"),
            Participant(id=SECURITY, name="Security Expert", role="security", model="claude", provider="anthropic"),
        ],
        judge=Participant(
            id="judge-main", name="Technical Judge", role="generalist", model="gpt-4o", provider="openai"
        ),
        prompt_sources=PromptSources(
            agents=[
                AgentPromptSources(
                    agent_id=ARCHITECT,
                    role="architect",
                    system_prompt=PromptSource(kind="file", path="prompts/architect.md"),
                )
            ],
        ),
        config={"debate": {"rounds": 2}},
        created_at=created,
        updated_at=created,
    )
    return DebateCreated(state=state, at=created)


def contribution(
    agent: str, role: str, kind: str, content: str, *, target: str | None = None, **metadata: Any
) -> Contribution:
    return Contribution(
        agent_id=agent,
        agent_role=role,
        type=kind,
        content=content,  # type: ignore[arg-type]
        target_agent_id=target,
        metadata=ContributionMetadata(**metadata),
        created_at=T0,
    )


def full_debate(debate_id: str = "deb-1") -> list[Change]:
    """A whole debate: two clarification iterations, two rounds, a failed and a truncated reply, a synthesis."""
    return [
        new_debate(debate_id),
        StatusChanged(status="running", at=tick(1)),
        QuestionsAsked(
            iteration=1,
            at=tick(2),
            groups=[
                AgentClarifications(
                    agent_id=ARCHITECT,
                    agent_name="System Architect",
                    role="architect",
                    items=[ClarificationItem(id="q1", question="Expected peak QPS?")],
                ),
                AgentClarifications(
                    agent_id=SECURITY,
                    agent_name="Security Expert",
                    role="security",
                    items=[ClarificationItem(id="q2", question="Authenticated clients only?")],
                ),
            ],
        ),
        AnswersRecorded(answers={"q1": "About 10k", "q2": "NA"}, at=tick(3)),
        QuestionsAsked(
            iteration=2,
            at=tick(4),
            groups=[
                AgentClarifications(
                    agent_id=ARCHITECT,
                    agent_name="System Architect",
                    role="architect",
                    items=[ClarificationItem(id="q3", question="Multi-region?", iteration=2)],
                ),
            ],
        ),
        AnswersRecorded(answers={"q3": "Yes, two regions"}, at=tick(5)),
        RoundStarted(round_number=1, at=tick(6)),
        ContributionRecorded(
            round_number=1,
            at=tick(7),
            contribution=contribution(
                ARCHITECT, "architect", "proposal", "# Token bucket\nUse Redis.", tokens_used=150, latency_ms=900
            ),
        ),
        ContributionRecorded(
            round_number=1,
            at=tick(8),
            contribution=contribution(
                SECURITY, "security", "proposal", "Sliding window, and", truncated=True, finish_reason="length"
            ),
        ),
        ContributionRecorded(
            round_number=1,
            at=tick(9),
            contribution=contribution(ARCHITECT, "architect", "critique", "Window is costly.", target=SECURITY),
        ),
        ContributionRecorded(
            round_number=1,
            at=tick(10),
            contribution=Contribution(
                agent_id=SECURITY,
                agent_role="security",
                type="critique",
                content="",
                target_agent_id=ARCHITECT,
                status="failed",
                error="provider timed out",
                created_at=T0,
            ),
        ),
        ContributionRecorded(
            round_number=1,
            at=tick(11),
            contribution=contribution(ARCHITECT, "architect", "refinement", "Token bucket, per-region."),
        ),
        SummaryRecorded(
            round_number=1,
            at=tick(12),
            summary=DebateSummary(
                agent_id=ARCHITECT,
                agent_role="architect",
                summary="Short history.",
                metadata=SummaryMetadata(before_chars=6000, after_chars=2500, timestamp=T0),
            ),
        ),
        EvaluationRecorded(
            round_number=1, at=tick(13), evaluation=RoundEvaluation(confidence=70, reasoning="Converging.")
        ),
        RoundStarted(round_number=2, at=tick(14)),
        ContributionRecorded(
            round_number=2,
            at=tick(15),
            contribution=contribution(
                ARCHITECT, "architect", "proposal", "Token bucket, per-region.", carried_over=True
            ),
        ),
        JudgeSummaryRecorded(
            at=tick(16),
            summary=DebateSummary(
                agent_id="judge-main",
                agent_role="generalist",
                summary="All agree on a token bucket.",
                metadata=SummaryMetadata(before_chars=9000, after_chars=1000, timestamp=T0),
            ),
        ),
        SolutionRecorded(
            at=tick(17),
            solution=Solution(description="Token bucket in Redis.", tradeoffs=["Redis is a dependency"], confidence=85),
        ),
        StatusChanged(status="completed", at=tick(18)),
        CursorMoved(next_node=None, at=tick(19)),
    ]


@pytest.fixture
def store(contract_store: DebateStore) -> DebateStore:
    """Each backend in turn (tests/conftest.py: SQLite, memory, Postgres)."""
    return contract_store


# --- the contract, on both backends -------------------------------------------------------


def test_round_trips_a_realistic_debate(store: DebateStore) -> None:
    changes = full_debate()
    store.append("deb-1", changes[0])
    for change in changes[1:]:
        store.append("deb-1", change)

    loaded = store.load("deb-1")

    assert loaded.to_json_dict() == fold(full_debate()).to_json_dict()
    assert loaded.status == "completed" and loaded.current_round == 2 and loaded.next_node is None
    assert loaded.updated_at == tick(19)
    assert [r.round_number for r in loaded.rounds] == [1, 2]
    failed = [c for c in loaded.all_contributions() if not c.ok]
    assert [(c.agent_id, c.target_agent_id, c.error) for c in failed] == [(SECURITY, ARCHITECT, "provider timed out")]
    assert [c.agent_id for c in loaded.all_contributions() if c.metadata.truncated] == [SECURITY]
    assert loaded.round(2).contributions[0].metadata.carried_over
    assert loaded.clarification_iterations == 2
    assert [(g.agent_id, [(i.id, i.answer) for i in g.items]) for g in loaded.clarifications] == [
        (ARCHITECT, [("q1", "About 10k"), ("q3", "Yes, two regions")]),
        (SECURITY, [("q2", "NA")]),
    ]
    assert loaded.round(1).summaries[ARCHITECT].metadata.after_chars == 2500
    assert loaded.round(1).evaluation == RoundEvaluation(confidence=70, reasoning="Converging.")
    assert loaded.final_solution is not None and loaded.final_solution.confidence == 85
    assert loaded.judge_summary is not None and loaded.prompt_sources.agents[0].system_prompt.kind == "file"
    assert store.changes("deb-1") == changes


def test_append_many_in_one_call_keeps_order(store: DebateStore) -> None:
    changes = full_debate()
    store.append("deb-1", *changes)
    assert store.changes("deb-1") == changes
    assert [c.kind for c in store.changes("deb-1")][:3] == ["debate_created", "status_changed", "questions_asked"]


def test_a_rejected_batch_appends_nothing(store: DebateStore) -> None:
    store.append("deb-1", new_debate())
    with pytest.raises(StoreError):
        store.append("deb-1", StatusChanged(status="running"), new_debate())
    assert len(store.changes("deb-1")) == 1
    assert store.load("deb-1").status == "pending"


def test_unknown_id(store: DebateStore) -> None:
    expected = f"no debate with id 'nope' in {store.location}"
    assert not store.exists("nope")
    with pytest.raises(DebateNotFoundError, match=expected):
        store.load("nope")
    with pytest.raises(DebateNotFoundError, match=expected):
        store.changes("nope")
    with pytest.raises(DebateNotFoundError, match=expected):
        store.append("nope", StatusChanged(status="running"))
    assert store.list() == []


def test_creating_twice_is_an_error(store: DebateStore) -> None:
    store.append("deb-1", new_debate())
    with pytest.raises(StoreError, match="already exists"):
        store.append("deb-1", new_debate())
    with pytest.raises(StoreError, match="already exists"):
        store.append("deb-2", new_debate("deb-2"), new_debate("deb-2"))
    assert not store.exists("deb-2")
    assert len(store.changes("deb-1")) == 1


def test_created_state_must_carry_the_id(store: DebateStore) -> None:
    with pytest.raises(StoreError, match="deb-other"):
        store.append("deb-1", new_debate("deb-other"))
    assert not store.exists("deb-1")


def test_listing_newest_first_with_filter_and_limit(store: DebateStore) -> None:
    store.append("deb-old", new_debate("deb-old", created=tick(0)))
    store.append("deb-new", new_debate("deb-new", created=tick(60)), StatusChanged(status="running", at=tick(61)))
    store.append("deb-mid", *full_debate("deb-mid"))

    assert [d.id for d in store.list()] == ["deb-new", "deb-mid", "deb-old"]
    assert [d.id for d in store.list(status="completed")] == ["deb-mid"]
    assert [d.id for d in store.list(status="pending")] == ["deb-old"]
    assert [d.id for d in store.list(limit=2)] == ["deb-new", "deb-mid"]
    assert store.list(status="failed") == []
    assert store.list(limit=0) == []
    assert store.list(status="completed")[0] == DebateListing(
        id="deb-mid",
        problem="Design a rate limiter",
        status="completed",
        current_round=2,
        created_at=T0,
        updated_at=tick(19),
    )


def test_listing_follows_appends(store: DebateStore) -> None:
    store.append("deb-1", new_debate())
    store.append("deb-1", StatusChanged(status="running", at=tick(1)), RoundStarted(round_number=1, at=tick(2)))
    store.append("deb-1", RoundStarted(round_number=1, at=tick(3)))
    (listing,) = store.list()
    assert (listing.status, listing.current_round, listing.updated_at) == ("running", 1, tick(3))
    loaded = store.load("deb-1")
    assert (loaded.status, loaded.current_round, loaded.updated_at) == ("running", 1, tick(3))


def test_listing_headline_is_the_first_line_cut_to_100_chars(store: DebateStore) -> None:
    store.append("deb-1", new_debate(problem="\n  " + "x" * 150 + "\nsecond line"))
    (listing,) = store.list()
    assert len(listing.problem) == 100 and listing.problem.startswith("xxx") and listing.problem.endswith("…")


def test_an_empty_append_checks_the_id(store: DebateStore) -> None:
    with pytest.raises(DebateNotFoundError):
        store.append("nope")
    store.append("deb-1", new_debate())
    store.append("deb-1")
    assert len(store.changes("deb-1")) == 1


def test_closed_store_raises_store_error(store: DebateStore) -> None:
    store.append("deb-1", new_debate())
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.exists("deb-1")


def test_stores_satisfy_the_protocol(store: DebateStore) -> None:
    assert isinstance(store, DebateStore)
    assert store.location


# --- SQLite specifics ---------------------------------------------------------------------


def raw(path: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    db = sqlite3.connect(path)
    try:
        return db.execute(sql, params).fetchall()
    finally:
        db.close()


def test_sqlite_appends_rows_and_never_rewrites(tmp_path: Path) -> None:
    path = tmp_path / "debates.sqlite3"
    changes = full_debate()
    with SqliteStore(path) as store:
        store.append("deb-1", *changes[:7])
        before = raw(path, "SELECT seq, kind, payload, at FROM changes ORDER BY seq")
        assert [row[0] for row in before] == list(range(1, 8))
        assert raw(path, "SELECT status, current_round FROM debates") == [("running", 1)]

        store.append("deb-1", *changes[7:10])

        after = raw(path, "SELECT seq, kind, payload, at FROM changes ORDER BY seq")
        assert len(after) == len(before) + 3
        assert after[: len(before)] == before
        assert [row[1] for row in after[len(before) :]] == ["contribution_recorded"] * 3

        store.append("deb-1", *changes[10:])
        assert raw(path, "SELECT COUNT(*) FROM changes") == [(len(changes),)]
        assert raw(path, "SELECT id, status, current_round, updated_at FROM debates") == [
            ("deb-1", "completed", 2, "2024-05-01T09:19:00.000000+00:00"),
        ]


def test_sqlite_batch_failing_midway_is_rolled_back(tmp_path: Path) -> None:
    path = tmp_path / "debates.sqlite3"
    changes = full_debate()
    with SqliteStore(path) as store:
        store.append("deb-1", *changes[:2])
        db = sqlite3.connect(path)
        with db:  # fault injection: the batch's second insert fails
            db.execute(
                "CREATE TRIGGER boom BEFORE INSERT ON changes WHEN NEW.kind = 'answers_recorded'"
                " BEGIN SELECT RAISE(ABORT, 'disk on fire'); END"
            )
        db.close()
        with pytest.raises(StoreError, match="disk on fire"):
            store.append("deb-1", *changes[2:5])
        assert raw(path, "SELECT seq FROM changes ORDER BY seq") == [(1,), (2,)]
        assert raw(path, "SELECT updated_at FROM debates") == [("2024-05-01T09:01:00.000000+00:00",)]
        store.append("deb-1", changes[2])
        assert raw(path, "SELECT COUNT(*) FROM changes") == [(3,)]


def test_sqlite_reopened_file_has_the_same_debates(tmp_path: Path) -> None:
    path = tmp_path / "debates.sqlite3"
    with SqliteStore(path) as store:
        store.append("deb-1", *full_debate())
        first = store.load("deb-1")
        listing = store.list()
    with SqliteStore(path) as reopened:
        assert reopened.load("deb-1") == first
        assert reopened.list() == listing
        assert reopened.changes("deb-1") == full_debate()


def test_sqlite_pragmas_and_migrations(tmp_path: Path) -> None:
    path = tmp_path / "debates.sqlite3"
    with SqliteStore(path) as store:
        store.append("deb-1", new_debate())
    assert raw(path, "PRAGMA journal_mode") == [("wal",)]
    names = [row[0] for row in raw(path, "SELECT name FROM migrations ORDER BY rowid")]
    assert names == [fn.__name__ for fn in MIGRATIONS]
    with SqliteStore(path):
        pass
    assert raw(path, "SELECT COUNT(*) FROM migrations") == [(len(MIGRATIONS),)]


def busy_at_first(times: int) -> Callable[[Any], None]:
    """``migrate``, answering ``SQLITE_BUSY`` at once ``times`` times first (as SQLite may while another
    process opens or checkpoints the file, without waiting out its timeout)."""
    from dialectic.store.relational import migrate

    left = [times]

    def flaky(db: Any) -> None:
        if left[0] > 0:
            left[0] -= 1
            busy = sqlite3.OperationalError("database is locked")
            busy.sqlite_errorname = "SQLITE_BUSY"  # type: ignore[attr-defined]
            raise busy
        migrate(db)

    return flaky


def test_sqlite_opening_tries_again_while_another_process_holds_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "debates.sqlite3"
    monkeypatch.setattr("dialectic.store.sqlite.migrate", busy_at_first(3))
    with SqliteStore(path) as store:
        store.append("deb-1", new_debate())
        assert store.load("deb-1").id == "deb-1"


def test_sqlite_opening_gives_up_when_the_file_stays_locked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("dialectic.store.sqlite.migrate", busy_at_first(1_000_000))
    with pytest.raises(StoreError, match="locked by another process"):
        SqliteStore(tmp_path / "debates.sqlite3", timeout=0.0)


def test_sqlite_creates_parent_directories(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "debates.sqlite3"
    with SqliteStore(path) as store:
        assert store.location == str(path)
    assert path.is_file()


def test_sqlite_garbage_file_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "debates.sqlite3"
    path.write_bytes(b"this is not a database, just some text " * 200)
    with pytest.raises(StoreError, match="not a SQLite database") as caught:
        SqliteStore(path)
    assert str(path) in str(caught.value)


def test_sqlite_directory_path_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot open"):
        SqliteStore(tmp_path)


def test_sqlite_unreadable_change_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "debates.sqlite3"
    with SqliteStore(path) as store:
        store.append("deb-1", new_debate(), StatusChanged(status="running"))
        db = sqlite3.connect(path)
        with db:
            db.execute("UPDATE changes SET payload = '{broken' WHERE seq = 2")
        db.close()
        with pytest.raises(StoreError, match="change #2 of debate 'deb-1'"):
            store.load("deb-1")


def test_sqlite_inconsistent_log_is_a_store_error(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "debates.sqlite3") as store:
        orphan = EvaluationRecorded(round_number=3, evaluation=RoundEvaluation(confidence=1))
        store.append("deb-1", new_debate(), orphan)
        with pytest.raises(StoreError, match="round 3 has not started"):
            store.load("deb-1")


def test_a_store_is_shared_between_threads(open_shared: Callable[[], DebateStore]) -> None:
    with open_shared() as store:

        def run(n: int) -> None:
            store.append(f"deb-{n}", *full_debate(f"deb-{n}"))

        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(run, range(8)))
        assert len(store.list()) == 8
        assert all(store.load(f"deb-{n}").status == "completed" for n in range(8))


# --- opening a store ----------------------------------------------------------------------


def test_open_store_locations(tmp_path: Path) -> None:
    memory = open_store(":memory:")
    assert isinstance(memory, MemoryStore)
    with open_store(tmp_path / "data") as in_dir:
        assert in_dir.location == str(tmp_path / "data" / "debates.sqlite3")
    with open_store(str(tmp_path / "elsewhere.db")) as as_file:
        assert as_file.location == str(tmp_path / "elsewhere.db")
    with open_store(tmp_path / "x" / "named.sqlite3") as named:
        assert named.location == str(tmp_path / "x" / "named.sqlite3")


def test_resolve_data_dir_precedence(tmp_path: Path) -> None:
    env = {"DIALECTIC_HOME": str(tmp_path / "home")}
    assert resolve_data_dir(str(tmp_path / "cli"), env) == tmp_path / "cli"
    assert resolve_data_dir(None, env) == tmp_path / "home"
    assert resolve_data_dir(None, {}) == default_data_dir()
    assert resolve_data_dir(None, {"DIALECTIC_HOME": "  "}) == default_data_dir()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG_DATA_HOME is the Linux convention")
def test_default_data_dir_is_the_users_data_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_data_dir() == tmp_path / "xdg" / "dialectic"
