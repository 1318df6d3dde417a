"""``GET /api/debates`` at size: pages read from the store's index (keyset paging), never by folding a
debate; its rows are those folding gives; the cursor is opaque and checked; ``running`` and ``stale``
pages fill up from the leases of the running debates alone. On both store backends."""

from __future__ import annotations

import builtins
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dialectic.core.changes import ContributionRecorded, DebateCreated, RoundStarted, StatusChanged
from dialectic.core.config import FORMATS
from dialectic.core.domain import Contribution, ContributionMetadata, DebateState, Participant, utc_now
from dialectic.engine.lease import LeasedStore
from dialectic.llm.scripted import ScriptedProvider
from dialectic.store import MemoryStore, SqliteStore
from dialectic.store.base import DebateStore, ListedDebate, PageKey
from dialectic.store.leases import Lease, LeaseOwner
from dialectic.testing.harness import Harness, make_config, scripted_judge
from dialectic.web.errors import ApiError
from dialectic.web.listing import RUNNING_BATCH, debates_page, decode_cursor, encode_cursor, summary_row
from dialectic.web.views import listing_row, shown
from tests.web.conftest import Api

T0 = utc_now().replace(microsecond=0) - timedelta(days=30)


class ReadCounter:
    """Counts the reads a store is asked for (mixed in before a backend)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.reads: Counter[str] = Counter()

    def load(self, debate_id: str) -> DebateState:
        self.reads["load"] += 1
        return super().load(debate_id)  # type: ignore[misc]

    def changes(self, debate_id: str) -> builtins.list[Any]:
        self.reads["changes"] += 1
        return super().changes(debate_id)  # type: ignore[misc]

    def changes_since(self, debate_id: str, after: int) -> builtins.list[Any]:
        self.reads["changes_since"] += 1
        return super().changes_since(debate_id, after)  # type: ignore[misc]

    def read_lease(self, debate_id: str) -> Lease | None:
        self.reads["read_lease"] += 1
        return super().read_lease(debate_id)  # type: ignore[misc]

    def list(self, **kwargs: Any) -> builtins.list[Any]:
        self.reads["list"] += 1
        return super().list(**kwargs)  # type: ignore[misc]

    def page(self, **kwargs: Any) -> builtins.list[ListedDebate]:
        self.reads["page"] += 1
        return super().page(**kwargs)  # type: ignore[misc]


class CountingMemoryStore(ReadCounter, MemoryStore):
    pass


class CountingSqliteStore(ReadCounter, SqliteStore):
    pass


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[DebateStore]:
    """The web fixtures' store, counting its reads."""
    backend: Any = CountingMemoryStore() if request.param == "memory" else CountingSqliteStore(tmp_path / "d.sqlite3")
    yield backend
    backend.close()


def reads(store: DebateStore) -> Counter[str]:
    assert isinstance(store, ReadCounter)
    return store.reads


LIVE = LeaseOwner.for_this_run()
GONE = LeaseOwner(id="gone", pid=2**22 + 1, host="elsewhere")  # another host: only its expired lease tells


def save(store: DebateStore, n: int, status: str = "completed", *, minutes: float | None = None) -> str:
    """A debate saved straight into the store, as a run would have: created, a round, two paid calls, a status.

    ``running`` ones get a live lease (this process); ``stale`` ones are saved as running with an expired one."""
    debate_id = f"deb-{n:05d}"
    created = T0 + timedelta(minutes=n if minutes is None else minutes)
    state = DebateState(
        id=debate_id,
        problem=f"Problem {n}\nin detail",
        agents=[Participant(id=f"a{k}", name=f"Agent {k}", role="architect", model="m", provider="p") for k in (1, 2)],
        config={"debate": {"rounds": 2, "format": "structured"}},
        created_at=created,
        updated_at=created,
    )
    stored = "running" if status == "stale" else status
    if status in ("running", "stale"):
        owner, ttl = (LIVE, timedelta(minutes=5)) if status == "running" else (GONE, timedelta(seconds=1))
        at = utc_now() if status == "running" else created
        store.acquire_lease(debate_id, owner, now=at, ttl=ttl, create=DebateCreated(state=state, at=created))
    else:
        store.append(debate_id, DebateCreated(state=state, at=created))
    paid = ContributionMetadata(input_tokens=100 + n, output_tokens=10, tokens_used=None)
    calls = [
        ContributionRecorded(
            round_number=1,
            contribution=Contribution(
                agent_id=f"a{k}", agent_role="architect", type="proposal", content="x", metadata=paid
            ),
            at=created + timedelta(seconds=k),
        )
        for k in (1, 2)
    ]
    store.append(debate_id, RoundStarted(round_number=1, at=created), *calls)
    store.append(debate_id, StatusChanged(status=stored, at=created + timedelta(seconds=3)))  # type: ignore[arg-type]
    return debate_id


async def walk(
    api: Api, status: str | None, limit: int, between: Callable[[], None] = lambda: None
) -> list[dict[str, Any]]:
    """Every item, page by page (``between`` runs after each page is read)."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        params = {
            "limit": str(limit),
            **({"cursor": cursor} if cursor else {}),
            **({"status": status} if status else {}),
        }
        response = await api.client.get("/api/debates", params=params)
        assert response.status_code == 200, response.text
        body = response.json()
        assert len(body["items"]) <= limit
        items += body["items"]
        between()
        cursor = body["nextCursor"]
        if cursor is None:
            return items
        assert len(body["items"]) == limit


def folded_rows(store: DebateStore, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the listing gave before pages: each debate folded from its log."""
    return [listing_row(store.load(item["id"]), item["status"]) for item in items]


# --- the rows are those folding gives --------------------------------------------------------


def test_a_listed_row_is_the_row_of_the_folded_debate_for_real_runs(
    store: DebateStore, serve: Callable[..., None]
) -> None:
    """Debates run on the scripted model in every format (summaries, a judge, votes, verdicts…): each row
    the page builds from the store's details is the one built from the debate folded from its log."""
    harness = Harness(store, ScriptedProvider(scripted_judge()))
    for fmt in FORMATS:
        harness.start(make_config(agents=3, rounds=2, format=fmt, summarization={"threshold": 0}), problem=fmt)
    long_problem = "  " + "a fairly long headline " * 10 + " " * 50 + "end" + "\nand the rest"
    harness.start(make_config(agents=2, rounds=1), problem=long_problem)
    entries = store.page(limit=50)
    assert len(entries) == len(FORMATS) + 1
    for entry in entries:
        assert entry.details is not None
        status = shown(store, entry.listing, utc_now())
        assert summary_row(entry, entry.details, status) == listing_row(store.load(entry.listing.id), status)
    assert any(e.details and e.details.tokens.summaries for e in entries)  # the runs did record summaries

    async def scenario(api: Api) -> None:
        reads(store).clear()
        items = (await api.client.get("/api/debates?limit=100")).json()["items"]
        assert reads(store)["load"] == 0 and reads(store)["changes"] == 0
        assert [item["id"] for item in items] == [e.listing.id for e in entries]
        assert items == folded_rows(store, items)
        assert items[0]["problem"] == long_problem.strip().splitlines()[0][:139].rstrip() + "…"

    serve(scenario)


def test_a_row_whose_details_were_not_kept_is_folded(tmp_path: Path) -> None:
    """A debate whose log could not be read when details were filled in is listed by folding it, as before."""
    path = tmp_path / "d.sqlite3"
    with SqliteStore(path) as backend:
        debate_id = save(backend, 1)
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE debates SET details = NULL, details_seq = NULL")
        db.execute("UPDATE changes SET payload = replace(payload, '\"kind\"', '\"kinds\"') WHERE seq = 2")
    db.close()
    with SqliteStore(path) as backend:
        (entry,) = backend.page(limit=1)
        assert entry.details is None
        db = sqlite3.connect(path)
        with db:  # the log is readable again: the page folds it
            db.execute("UPDATE changes SET payload = replace(payload, '\"kinds\"', '\"kind\"') WHERE seq = 2")
        db.close()
        body = debates_page(backend, status=None, limit=5, cursor=None, now=utc_now())
        assert body["items"] == [listing_row(backend.load(debate_id), "completed")]


# --- paging ------------------------------------------------------------------------------------


def test_paging_returns_every_debate_once_in_order_while_more_are_saved(
    store: DebateStore, serve: Callable[..., None]
) -> None:
    for n in range(53):
        save(store, n, ("completed", "failed", "paused")[n % 3], minutes=n // 2)  # pairs saved at one instant
    expected = [d.id for d in store.list()]
    newer = iter(range(1000, 1100))

    async def scenario(api: Api) -> None:
        items = await walk(api, None, 8, between=lambda: save(store, next(newer), minutes=10_000 + len(expected)))
        assert [item["id"] for item in items] == expected
        assert items == folded_rows(store, items)
        failed = await walk(api, "failed", 4)
        assert [item["id"] for item in failed] == [d.id for d in store.list(status="failed")]
        assert all(item["status"] == "failed" for item in failed)

    serve(scenario)


def test_running_and_stale_pages_fill_up_from_the_running_debates(
    store: DebateStore, serve: Callable[..., None]
) -> None:
    """More running debates than one batch holds, live and stale interleaved, among others."""
    kinds = ("running", "stale", "stale", "completed")
    for n in range(2 * RUNNING_BATCH + 30):
        save(store, n, kinds[n % 4])
    newest_first = [d.id for d in store.list()]

    async def scenario(api: Api) -> None:
        for status in ("running", "stale"):
            items = await walk(api, status, 17)
            wanted = [i for i in newest_first if kinds[int(i[4:]) % 4] == status]
            assert [item["id"] for item in items] == wanted
            assert {item["status"] for item in items} == {status}
        everything = await walk(api, None, 100)
        assert [item["status"] for item in everything] == [kinds[int(i[4:]) % 4] for i in newest_first]

    serve(scenario)


def test_a_page_folds_no_debate_and_reads_at_most_limit_leases(store: DebateStore, serve: Callable[..., None]) -> None:
    """Counts, not timings: one page query, no log read, one lease read per running debate on the page."""
    for n in range(120):
        save(store, n, "running" if n % 2 else "completed")

    async def scenario(api: Api) -> None:
        for query, limit in (("", 20), ("status=completed", 20), ("", 7)):
            reads(store).clear()
            first = (await api.client.get(f"/api/debates?{query}&limit={limit}")).json()
            reads(store).clear()
            second = await api.client.get(f"/api/debates?{query}&limit={limit}&cursor={first['nextCursor']}")
            assert second.status_code == 200 and len(second.json()["items"]) == limit
            counted = reads(store)
            assert counted["page"] == 1 and counted["list"] == 0, counted
            assert counted["load"] == counted["changes"] == counted["changes_since"] == 0, counted
            assert counted["read_lease"] <= limit, counted
        reads(store).clear()
        stale = (await api.client.get("/api/debates?status=stale&limit=5")).json()
        assert stale["items"] == [] and stale["nextCursor"] is None
        assert reads(store)["load"] == 0 and reads(store)["read_lease"] == 60  # every running one, none stale

    serve(scenario)


def test_a_cursor_still_pages_after_its_debate_is_deleted(tmp_path: Path, serve: Callable[..., None]) -> None:
    path = tmp_path / "d.sqlite3"
    with SqliteStore(path) as backend:
        for n in range(10):
            save(backend, n)
    with SqliteStore(path) as backend:
        first = backend.page(limit=4)
        db = sqlite3.connect(path)
        with db:
            db.execute("PRAGMA foreign_keys = ON")
            db.execute("DELETE FROM debates WHERE id = ?", (first[-1].listing.id,))
        db.close()
        body = debates_page(backend, status=None, limit=4, cursor=encode_cursor(first[-1].key), now=utc_now())
        assert [item["id"] for item in body["items"]] == ["deb-00005", "deb-00004", "deb-00003", "deb-00002"]


# --- the cursor ------------------------------------------------------------------------------

KEY = PageKey(T0, 42)
BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_="
GOOD = encode_cursor(KEY)


@pytest.mark.parametrize(
    "cursor",
    [
        "deb-00001",  # an id: what the cursor was before it was opaque
        "",
        " ",
        GOOD + "=",
        GOOD + "A",
        GOOD[:-1],
        GOOD.replace(GOOD[3], "." if GOOD[3] != "." else "-"),
        GOOD + "\x00",
        "²" + GOOD,
        "A" * 5000,
        encode_cursor(KEY).lower(),
        "MjAyNC0wMS0wMVQwMDowMDowMC4wMDAwMDArMDA6MDB8",  # "2024-01-01T00:00:00.000000+00:00|" (no ordinal)
        "MjAyNC0wMS0wMVQwMDowMDowMHwx",  # "2024-01-01T00:00:00|1" (a time with no zone)
        "MjAyNC0wMS0wMVQwMDowMDowMC4wMDAwMDArMDE6MDB8MQ",  # "2024-01-01T00:00:00.000000+01:00|1"
        "MjAyNC0wMS0wMVQwMDowMDowMC4wMDAwMDArMDA6MDB8OTk5OTk5OTk5OTk5OTk5OTk5OTk5",  # an ordinal past SQLite's
        "MjAyNC0wMS0wMVQwMDowMDowMC4wMDAwMDArMDA6MDB8LTE",  # ordinal -1
        "bm90IGEgY3Vyc29y",  # "not a cursor"
        "_w",  # b"\xff"
    ],
)
def test_a_cursor_this_server_did_not_give_is_a_400(serve: Callable[..., None], cursor: str) -> None:
    async def scenario(api: Api) -> None:
        save(api.ctx.store, 1)
        response = await api.client.get("/api/debates", params={"cursor": cursor})
        assert response.status_code == 400, response.text
        body = response.json()
        assert body["error"] == "bad_request" and "\n" not in body["detail"] and "cursor" in body["detail"]

    serve(scenario)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(text=st.one_of(st.text(max_size=80), st.text(alphabet=BASE64URL, max_size=80)))
def test_decoding_accepts_only_what_encoding_writes(text: str) -> None:
    try:
        key = decode_cursor(text)
    except ApiError as exc:
        assert exc.status == 400 and exc.error == "bad_request"
    else:
        assert encode_cursor(key) == text


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    moment=st.datetimes(timezones=st.timezones()),
    ordinal=st.integers(min_value=0, max_value=2**63 - 1),
)
def test_every_place_round_trips_through_a_cursor(moment: datetime, ordinal: int) -> None:
    try:
        key = PageKey(moment.astimezone(UTC), ordinal)
    except (OverflowError, ValueError):  # a time at the edge of the calendar, in a zone that moves it off it
        return
    cursor = encode_cursor(key)
    assert len(cursor) <= 100 and decode_cursor(cursor) == key


def test_the_page_keeps_the_cursor_opaque(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        for n in range(3):
            save(api.ctx.store, n)
        first = (await api.client.get("/api/debates?limit=2")).json()
        cursor = first["nextCursor"]
        assert cursor == encode_cursor(api.ctx.store.page(limit=2)[-1].key)
        assert "deb-" not in cursor and cursor.isascii() and "=" not in cursor
        second = (await api.client.get("/api/debates", params={"limit": "2", "cursor": cursor})).json()
        assert [item["id"] for item in second["items"]] == ["deb-00000"] and second["nextCursor"] is None

    serve(scenario)


def test_the_store_a_run_writes_through_pages_as_the_store_it_wraps(store: DebateStore) -> None:
    save(store, 1)
    save(store, 2, "running")
    wrapped = LeasedStore(store, "owner")
    assert wrapped.page(status="running", limit=5) == store.page(status="running", limit=5)
    assert wrapped.page(limit=1, after=store.page(limit=1)[0].key) == store.page(limit=5)[1:]
