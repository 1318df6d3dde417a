"""The listing read a page at a time (keyset paging) and the details kept for it, on both backends;
then SQLite's side: one query per page, its indexes, and a database from before it opened and filled in."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from dialectic.core.changes import (
    CallRecorded,
    Change,
    ContributionRecorded,
    DebateCreated,
    JudgeSummaryRecorded,
    RoundStarted,
    SolutionRecorded,
    StatusChanged,
    SummaryRecorded,
    dump_change,
    fold,
)
from dialectic.core.config import SystemConfig
from dialectic.core.domain import (
    DebateRound,
    DebateState,
    DebateSummary,
    LedgerEntry,
    Solution,
    SummaryMetadata,
)
from dialectic.store import AbsentStore, DebateStore, SqliteStore
from dialectic.store.base import (
    ListedDebate,
    ListingDetails,
    PageKey,
    advance_listing,
    as_utc,
    details_of,
)
from dialectic.store.sqlite import _select_listed
from dialectic.web.presenter import token_totals
from tests.test_store import ARCHITECT, SECURITY, T0, contribution, full_debate, new_debate, tick


@pytest.fixture
def store(contract_store: DebateStore) -> DebateStore:
    """Each backend in turn (tests/conftest.py: SQLite, memory, Postgres)."""
    return contract_store


def add(store: DebateStore, debate_id: str, minutes: float, status: str = "pending") -> None:
    store.append(debate_id, new_debate(debate_id, created=tick(minutes)))
    if status != "pending":
        store.append(debate_id, StatusChanged(status=status, at=tick(minutes + 0.5)))  # type: ignore[arg-type]


def walk(store: DebateStore, *, limit: int, status: str | None = None) -> Iterator[list[ListedDebate]]:
    """Every page in turn, each starting after the last debate of the one before."""
    after: PageKey | None = None
    while True:
        page = store.page(status=status, limit=limit, after=after)
        if not page:
            return
        yield page
        after = page[-1].key


def ids(entries: list[ListedDebate]) -> list[str]:
    return [entry.listing.id for entry in entries]


# --- paging, on both backends --------------------------------------------------------------


def test_pages_hold_every_debate_once_in_the_listings_order(store: DebateStore) -> None:
    for n in range(47):
        add(store, f"deb-{n:02d}", minutes=n // 3)  # three at each instant: the order they were saved breaks ties
    pages = list(walk(store, limit=10))
    assert [len(page) for page in pages] == [10, 10, 10, 10, 7]
    walked = [debate_id for page in pages for debate_id in ids(page)]
    assert walked == [d.id for d in store.list()]
    assert walked[:4] == ["deb-46", "deb-45", "deb-44", "deb-43"] and walked[-1] == "deb-00"
    assert len(set(walked)) == 47


def test_debates_saved_between_pages_neither_repeat_nor_hide_older_ones(store: DebateStore) -> None:
    for n in range(30):
        add(store, f"deb-{n:02d}", minutes=n)
    seen: list[str] = []
    after: PageKey | None = None
    for round_trip in range(10):
        page = store.page(limit=7, after=after)
        if not page:
            break
        seen += ids(page)
        after = page[-1].key
        add(store, f"new-{round_trip}", minutes=100 + round_trip)  # newer than every page read so far
        add(store, f"tie-{round_trip}", minutes=after.created_at.minute)  # same instant as the page's last one
    assert seen == [f"deb-{n:02d}" for n in reversed(range(30))]


def test_a_page_can_start_after_a_debate_that_is_not_there(store: DebateStore) -> None:
    for n in range(5):
        add(store, f"deb-{n}", minutes=n)
    between = PageKey(tick(2), 10**9)  # at deb-2's instant, after every ordinal: a deleted debate's key
    assert ids(store.page(limit=10, after=between)) == ["deb-2", "deb-1", "deb-0"]
    assert store.page(limit=10, after=PageKey(T0 - timedelta(days=1), 1)) == []


def test_a_page_filters_on_the_stored_status(store: DebateStore) -> None:
    for n in range(20):
        add(store, f"deb-{n:02d}", minutes=n, status=("running", "completed", "failed")[n % 3])
    completed = [debate_id for page in walk(store, limit=3, status="completed") for debate_id in ids(page)]
    assert completed == [f"deb-{n:02d}" for n in reversed(range(20)) if n % 3 == 1]
    assert store.page(status="paused", limit=5) == []
    assert store.page(limit=0) == []
    with pytest.raises(ValueError, match="negative"):
        store.page(limit=-1)


def test_the_absent_store_has_no_pages(tmp_path: Path) -> None:
    assert AbsentStore(str(tmp_path / "none.sqlite3")).page(limit=5) == []


# --- details, on both backends -------------------------------------------------------------


def folded_details(store: DebateStore, debate_id: str) -> ListingDetails:
    return details_of(store.load(debate_id))


def same_as_folded(kept: ListingDetails | None, folded: ListingDetails) -> None:
    """Kept details say what the folded state says (the tally may list summaries in another order)."""
    assert kept is not None
    assert (kept.first_line, kept.rounds, kept.format, kept.agents) == (
        folded.first_line,
        folded.rounds,
        folded.format,
        folded.agents,
    )
    assert kept.created_at.isoformat() == folded.created_at.isoformat()
    assert kept.updated_at.isoformat() == folded.updated_at.isoformat()
    assert kept.tokens.totals() == folded.tokens.totals()


def test_details_follow_every_append_as_folding_does(store: DebateStore) -> None:
    for change in full_debate():
        store.append("deb-1", change)
        (entry,) = store.page(limit=1)
        same_as_folded(entry.details, folded_details(store, "deb-1"))
        assert entry.listing == store.list()[0]
    (entry,) = store.page(limit=1)
    assert entry.details is not None and entry.details.agents == ("System Architect", "Security Expert")
    assert (
        entry.details.rounds == 2 and entry.details.format == SystemConfig().debate.format
    )  # read typed: the default when none was saved
    ledger = token_totals(store.load("deb-1"))  # no call recorded: the ledger the saved metadata gives
    assert entry.details.updated_at == tick(19) and entry.details.tokens.totals().total == ledger.total


def summary(agent: str, tokens: int) -> DebateSummary:
    return DebateSummary(
        agent_id=agent,
        agent_role="architect",
        summary="short",
        metadata=SummaryMetadata(before_chars=10, after_chars=5, timestamp=T0, tokens_used=tokens),
    )


def recounted() -> list[Change]:
    """A log in which what is replaced is recorded twice: a summary, the judge's summary, the solution."""
    with_usage = contribution(ARCHITECT, "architect", "proposal", "x", input_tokens=100, output_tokens=20)
    metered = contribution(SECURITY, "security", "proposal", "y", input_tokens=7, output_tokens=3, tokens_used=12)
    return [
        new_debate(),
        RoundStarted(round_number=1, at=tick(1)),
        ContributionRecorded(round_number=1, contribution=with_usage, at=tick(2)),
        ContributionRecorded(round_number=2, contribution=metered, at=tick(3)),
        SummaryRecorded(round_number=1, summary=summary(ARCHITECT, 40), at=tick(4)),
        SummaryRecorded(round_number=1, summary=summary(ARCHITECT, 30), at=tick(5)),
        SummaryRecorded(round_number=2, summary=summary(ARCHITECT, 5), at=tick(6)),
        JudgeSummaryRecorded(summary=summary("judge-main", 9), at=tick(7)),
        JudgeSummaryRecorded(summary=summary("judge-main", 8), at=tick(8)),
        SolutionRecorded(solution=Solution(description="a", metadata=with_usage.metadata), at=tick(9)),
        SolutionRecorded(solution=Solution(description="b", metadata=metered.metadata), at=tick(10)),
    ]


def test_tokens_replace_what_folding_replaces(store: DebateStore) -> None:
    store.append("deb-1", *recounted())
    (entry,) = store.page(limit=1)
    assert entry.details is not None
    state = store.load("deb-1")
    totals = entry.details.tokens.totals()
    # the ledger the metadata gives: the contributions, the last summaries (bare totals count as input), the solution
    assert (totals.input, totals.output, totals.total) == (107 + 30 + 5 + 8 + 7, 23 + 3, 157 + 26)
    expected = token_totals(state)
    assert (totals.input, totals.output, totals.total) == (expected.input, expected.output, expected.total)


def test_the_listing_counts_the_whole_ledger(store: DebateStore) -> None:
    """A call that made no contribution (a guard, an assessment, work thrown away) counts, as on the page."""
    guard = LedgerEntry(
        kind="consensus_guard", agent_id="judge-main", provider="openai", model="m", input_tokens=50, output_tokens=5
    )
    proposal = contribution(ARCHITECT, "architect", "proposal", "x", input_tokens=100, output_tokens=20)
    entry_of = LedgerEntry(
        kind="proposal", agent_id=ARCHITECT, provider="openai", model="m", input_tokens=100, output_tokens=20
    )
    store.append(
        "deb-1",
        new_debate(),
        RoundStarted(round_number=1, at=tick(1)),
        ContributionRecorded(round_number=1, contribution=proposal, at=tick(2)),
        CallRecorded(entry=entry_of, at=tick(2)),
        CallRecorded(entry=guard, at=tick(3)),
    )
    (entry,) = store.page(limit=1)
    assert entry.details is not None
    totals = entry.details.tokens.totals()
    assert (totals.input, totals.output, totals.total) == (150, 25, 175)
    expected = token_totals(store.load("deb-1"))
    assert (expected.input, expected.output, expected.total) == (150, 25, 175)


def test_a_debate_created_with_rounds_in_it_counts_them(store: DebateStore) -> None:
    """An imported debate is created whole: its details count what its first state already holds."""
    state = fold(recounted())
    state.current_round = 2
    state.rounds.append(DebateRound(round_number=3, timestamp=T0))
    store.append("deb-1", DebateCreated(state=state, at=tick(30)), StatusChanged(status="completed", at=tick(31)))
    (entry,) = store.page(limit=1)
    same_as_folded(entry.details, folded_details(store, "deb-1"))
    assert entry.details is not None and entry.details.tokens.totals().total == 183


def test_a_long_first_line_keeps_enough_for_any_headline(store: DebateStore) -> None:
    problem = "\n\n  " + "word " * 30 + " " * 60 + "tail" * 40 + "\nsecond line"
    store.append("deb-1", new_debate(problem=problem))
    (entry,) = store.page(limit=1)
    assert entry.details is not None and len(entry.details.first_line) == 200
    assert entry.details.first_line == problem.strip().splitlines()[0][:200]


# --- SQLite: queries and indexes -----------------------------------------------------------


def test_a_sqlite_page_is_one_indexed_query_whatever_the_debates_stored(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "debates.sqlite3") as store:
        for n in range(40):
            add(store, f"deb-{n:02d}", minutes=n, status="running" if n % 2 else "completed")
        statements: list[str] = []
        store._db.set_trace_callback(statements.append)
        first = store.page(limit=5)
        store.page(status="running", limit=5, after=first[-1].key)
        store._db.set_trace_callback(None)
        assert len(statements) == 2 and all(s.startswith("SELECT") for s in statements)
        for status in (None, "running"):
            for after in (None, first[-1].key):
                sql, params = _select_listed("id", status=status, limit=5, after=after)
                plan = " ".join(row[3] for row in store._db.execute(f"EXPLAIN QUERY PLAN {sql}", params))
                assert "USING INDEX debates_" in plan and "TEMP B-TREE" not in plan, plan


# --- SQLite: a database from before pages --------------------------------------------------

OLD_SCHEMA = """
CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL);
CREATE TABLE debates (
    id TEXT PRIMARY KEY, problem TEXT NOT NULL, status TEXT NOT NULL, current_round INTEGER NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE TABLE changes (
    debate_id TEXT NOT NULL REFERENCES debates (id) ON DELETE CASCADE, seq INTEGER NOT NULL, kind TEXT NOT NULL,
    payload TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (debate_id, seq)
);
CREATE INDEX debates_status_created ON debates (status, created_at);
CREATE INDEX debates_created ON debates (created_at);
CREATE TABLE leases (
    debate_id TEXT PRIMARY KEY REFERENCES debates (id) ON DELETE CASCADE, owner TEXT NOT NULL, pid INTEGER NOT NULL,
    host TEXT NOT NULL, process_started INTEGER, acquired_at TEXT NOT NULL, heartbeat_at TEXT NOT NULL,
    expires_at TEXT NOT NULL, released_at TEXT
);
CREATE TABLE windows (
    endpoint TEXT NOT NULL, model TEXT NOT NULL, tokens INTEGER NOT NULL, learned_at TEXT NOT NULL,
    PRIMARY KEY (endpoint, model)
);
INSERT INTO migrations VALUES ('m001_debates', 'x'), ('m002_changes', 'x'), ('m003_debates_listing_index', 'x'),
    ('m004_leases', 'x'), ('m005_windows', 'x');
"""
"""The schema the store had before it kept listing details (migrations m001 to m005, as they were)."""


def stamp(moment: datetime) -> str:
    return as_utc(moment).isoformat(timespec="microseconds")


def write_old(db: sqlite3.Connection, debate_id: str, changes: list[Change]) -> None:
    """Append ``changes`` as the store did before it kept details (its index row, and the log)."""
    listing = None
    for change in changes:
        listing = advance_listing(listing, change)
    assert listing is not None
    db.execute(
        "INSERT INTO debates (id, problem, status, current_round, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
        (debate_id, listing.problem, listing.status, listing.current_round, stamp(listing.created_at),
         stamp(listing.updated_at)),
    )  # fmt: skip
    db.executemany(
        "INSERT INTO changes (debate_id, seq, kind, payload, at) VALUES (?, ?, ?, ?, ?)",
        [(debate_id, seq, c.kind, dump_change(c), stamp(c.at)) for seq, c in enumerate(changes, start=1)],
    )


def old_database(path: Path, debates: dict[str, list[Change]]) -> None:
    db = sqlite3.connect(path)
    with db:
        db.executescript(OLD_SCHEMA)
    with db:
        for debate_id, changes in debates.items():
            write_old(db, debate_id, changes)
    db.close()


def columns(path: Path) -> set[str]:
    db = sqlite3.connect(path)
    try:
        return {row[1] for row in db.execute("PRAGMA table_info(debates)")}
    finally:
        db.close()


def test_a_database_from_before_pages_opens_lists_as_before_and_gets_its_details(tmp_path: Path) -> None:
    path = tmp_path / "debates.sqlite3"
    debates = {
        "deb-a": full_debate("deb-a"),
        "deb-b": [new_debate("deb-b", created=T0)],  # the same instant as deb-a: saved after it, listed before it
        "deb-c": recounted_as("deb-c", created=tick(5)),
        "deb-d": [new_debate("deb-d", created=tick(1)), StatusChanged(status="running", at=tick(2))],
    }
    old_database(path, debates)
    assert "details" not in columns(path)
    with SqliteStore(path) as store:
        assert [d.id for d in store.list()] == ["deb-c", "deb-d", "deb-b", "deb-a"]
        pages = list(walk(store, limit=3))
        assert [ids(page) for page in pages] == [["deb-c", "deb-d", "deb-b"], ["deb-a"]]
        for entry in [entry for page in pages for entry in page]:
            same_as_folded(entry.details, folded_details(store, entry.listing.id))
        assert ids(store.page(status="running", limit=5)) == ["deb-d"]
        store.append("deb-d", StatusChanged(status="completed", at=tick(3)))
        (entry,) = store.page(status="completed", limit=1, after=PageKey(tick(2), 0))
        same_as_folded(entry.details, folded_details(store, "deb-d"))
    assert {"details", "details_seq", "ordinal"} <= columns(path)


def recounted_as(debate_id: str, *, created: datetime) -> list[Change]:
    first, *rest = recounted()
    assert isinstance(first, DebateCreated)
    state = first.state.model_copy(update={"id": debate_id, "created_at": created, "updated_at": created})
    return [DebateCreated(state=state, at=created), *rest]


def test_details_behind_the_log_are_filled_in_when_the_store_is_next_opened(tmp_path: Path) -> None:
    """A version that keeps no details may write to the file after it was upgraded (a downgrade, then back)."""
    path = tmp_path / "debates.sqlite3"
    with SqliteStore(path) as store:
        store.append("deb-1", *full_debate()[:5])
    db = sqlite3.connect(path)
    with db:  # what the older version does on an append: the index row and the log, no details
        extra = StatusChanged(status="paused", at=tick(40))
        db.execute("UPDATE debates SET status = 'paused', updated_at = ? WHERE id = 'deb-1'", (stamp(extra.at),))
        db.execute(
            "INSERT INTO changes (debate_id, seq, kind, payload, at) VALUES ('deb-1', 6, ?, ?, ?)",
            (extra.kind, dump_change(extra), stamp(extra.at)),
        )
    db.close()
    with SqliteStore(path) as store:
        (entry,) = store.page(limit=1)
        same_as_folded(entry.details, folded_details(store, "deb-1"))
        assert entry.details is not None and entry.details.updated_at == tick(40)


def test_an_append_after_details_fell_behind_drops_them_until_the_next_open(tmp_path: Path) -> None:
    path = tmp_path / "debates.sqlite3"
    with SqliteStore(path) as store:
        store.append("deb-1", *full_debate()[:5])
        db = sqlite3.connect(path)
        with db:  # an older version's append while this store is open
            extra = StatusChanged(status="paused", at=tick(40))
            db.execute(
                "INSERT INTO changes (debate_id, seq, kind, payload, at) VALUES ('deb-1', 6, ?, ?, ?)",
                (extra.kind, dump_change(extra), stamp(extra.at)),
            )
        db.close()
        store.append("deb-1", StatusChanged(status="running", at=tick(41)))
        (entry,) = store.page(limit=1)
        assert entry.details is None  # not advanced from details that missed a change: the listing folds it
    with SqliteStore(path) as store:
        (entry,) = store.page(limit=1)
        same_as_folded(entry.details, folded_details(store, "deb-1"))


def test_a_log_that_cannot_be_read_leaves_its_debate_without_details(tmp_path: Path) -> None:
    path = tmp_path / "debates.sqlite3"
    old_database(path, {"deb-1": full_debate("deb-1"), "deb-2": [new_debate("deb-2", created=tick(1))]})
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE changes SET payload = '{broken' WHERE debate_id = 'deb-1' AND seq = 3")
    db.close()
    with SqliteStore(path) as store:
        by_id = {entry.listing.id: entry for entry in store.page(limit=5)}
        assert by_id["deb-1"].details is None and by_id["deb-2"].details is not None
    db = sqlite3.connect(path)
    try:  # not tried again at every open: its details_seq says the log was read
        assert db.execute("SELECT details_seq FROM debates WHERE id = 'deb-1'").fetchone() == (len(full_debate()),)
    finally:
        db.close()


def test_a_new_state_round_trips_its_times_as_the_fold_does(store: DebateStore) -> None:
    """Times in another zone, and without microseconds, are shown exactly as the folded state shows them."""
    zone = timezone(timedelta(hours=2))
    created = DebateCreated(
        state=DebateState(id="deb-z", problem="p", created_at=T0.astimezone(zone), updated_at=T0.astimezone(zone)),
        at=tick(1),
    )
    store.append("deb-z", created, StatusChanged(status="running", at=tick(2).astimezone(zone)))
    (entry,) = store.page(limit=1)
    same_as_folded(entry.details, folded_details(store, "deb-z"))
    assert entry.details is not None and entry.details.created_at.isoformat() == "2024-05-01T11:00:00+02:00"
