"""``GET /api/debates`` at size: how long a page of the debates list takes with 10,000 debates stored.

Builds a throwaway SQLite store of ``--debates`` debates (default 10,000), written through the
store's own ``append`` as runs write them: created, running, two rounds of three agents'
proposals, critiques and refinements with token usage and ledger lines, a summary now and
then, a synthesis, and a final status. The statuses are mixed (completed, failed, paused,
interrupted, suspended), and a few debates are still ``running``: some held by a live lease
(this process), some ``stale`` (their lease expired, its owner gone).

Then it times pages through the real FastAPI app (``create_app`` on a ``ServerState``, driven by
httpx's ASGI transport, so no socket): the first page, deep pages (via the ``nextCursor`` of
the page before), status filters (``completed``, ``failed``, ``running``, ``stale``), and a
100-row page, many times each, and prints p50/p95/p99 per case and whether p99 ≤ 50 ms.

Beside it, the listing as it was before pages (every debate listed, every running one's lease
read, the cursor found by scanning ids, each row of the page folded from its log), mounted on
the same app at another path, for fewer repetitions. It also times opening the store (the
check that every debate's listing details are current) and upgrading a copy of the database
to the schema from before (the details filled in from 10,000 logs once).

It prints figures and asserts nothing about them.

    .venv/bin/python benchmarks/listing.py [--debates 10000] [--reps 300] [--old-reps 20] [--no-upgrade]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import httpx2 as httpx
from fastapi import FastAPI, Query, Response

from dialectic.core.changes import (
    CallRecorded,
    Change,
    ContributionRecorded,
    CursorMoved,
    DebateCreated,
    RoundStarted,
    SolutionRecorded,
    StatusChanged,
    SummaryRecorded,
)
from dialectic.core.domain import (
    Contribution,
    ContributionMetadata,
    ContributionType,
    DebateState,
    DebateSummary,
    LedgerEntry,
    Participant,
    Solution,
    SummaryMetadata,
    utc_now,
)
from dialectic.llm.registry import ProviderPool
from dialectic.store import SqliteStore
from dialectic.store.base import DebateStore
from dialectic.store.leases import LeaseOwner
from dialectic.testing.harness import make_config
from dialectic.web.app import create_app
from dialectic.web.errors import ApiError
from dialectic.web.new_debate import ServerConfig
from dialectic.web.state import ServerState, ServeSettings, build_context
from dialectic.web.views import listing_row, shown

BASE_URL = "http://127.0.0.1:8000"
TARGET_P99_MS = 50.0
ROLES = ("architect", "performance", "security")
KINDS: tuple[ContributionType, ...] = ("proposal", "critique", "refinement")
LIVE = LeaseOwner.for_this_run()
GONE = LeaseOwner(id="gone", pid=4_000_000, host="a-host-that-is-not-this-one")
TEXT = (
    "Use a token bucket per API key, kept in Redis with a Lua script so a check and a take are one "
    "round trip; refill lazily from the last timestamp. Shard keys by tenant. Under a Redis outage, "
    "fail open for reads and closed for writes, and say so in the response headers. "
) * 2


def debate_changes(n: int, created: datetime, status: str) -> list[Change]:
    """One debate's log after a run: 3 agents × 2 rounds, calls with usage, a summary, a synthesis, a status."""
    agents = [Participant(id=f"agent-{r}", name=r.title(), role=r, provider="openai", model="gpt-4o") for r in ROLES]
    state = DebateState(
        id=f"deb-{n:05d}",
        problem=f"Design a rate limiter for public API #{n}\nIt serves 10k requests per second at peak.",
        status="pending",
        agents=agents,
        judge=Participant(id="judge", name="Judge", role="generalist", provider="openai", model="gpt-4o"),
        config=make_config(agents=3, rounds=2).to_json_dict(),
        created_at=created,
        updated_at=created,
    )
    at = created
    changes: list[Change] = [DebateCreated(state=state, at=at), StatusChanged(status="running", at=at)]
    for rnd in (1, 2):
        changes.append(RoundStarted(round_number=rnd, at=at))
        for kind in KINDS:
            for agent in agents:
                at += timedelta(seconds=2)
                usage = ContributionMetadata(input_tokens=900 + n % 97, output_tokens=300, latency_ms=1200, model="m")
                done = Contribution(agent_id=agent.id, agent_role=agent.role, type=kind, content=TEXT, metadata=usage)
                changes.append(ContributionRecorded(round_number=rnd, contribution=done, at=at))
                entry = LedgerEntry(
                    agent_id=agent.id,
                    kind=kind,
                    provider="openai",
                    model="gpt-4o",
                    input_tokens=usage.input_tokens or 0,
                    output_tokens=300,
                    round_number=rnd,
                )
                changes.append(CallRecorded(entry=entry, at=at))
        if n % 5 == 0:
            meta = SummaryMetadata(before_chars=6000, after_chars=2500, tokens_used=400)
            summary = DebateSummary(agent_id="agent-architect", agent_role="architect", summary=TEXT, metadata=meta)
            changes.append(SummaryRecorded(round_number=rnd, summary=summary, at=at))
    if status in ("completed", "failed"):
        at += timedelta(seconds=5)
        solution = Solution(description=TEXT, confidence=80, metadata=ContributionMetadata(input_tokens=4000))
        changes.append(SolutionRecorded(solution=solution, at=at))
    if status not in ("running", "stale"):
        changes.append(StatusChanged(status=status, at=at + timedelta(seconds=1)))
        changes.append(CursorMoved(next_node=None, at=at + timedelta(seconds=1)))
    return changes


def build_store(path: Path, debates: int, running: int, stale: int) -> dict[str, int]:
    """Write ``debates`` debates; the count of each status written."""
    counts: dict[str, int] = {}
    start = datetime(2025, 1, 1, tzinfo=UTC)
    live = set(range(0, debates, max(1, debates // running)))
    gone = {n + 1 for n in range(3, debates, max(1, debates // stale))} - live
    with SqliteStore(path) as store:
        for n in range(debates):
            status = "running" if n in live else "stale" if n in gone else _stored_status(n)
            counts[status] = counts.get(status, 0) + 1
            created = start + timedelta(minutes=7 * n, microseconds=n % 1000)
            first, *rest = debate_changes(n, created, status)
            assert isinstance(first, DebateCreated)
            if status == "running":
                store.acquire_lease(first.state.id, LIVE, now=utc_now(), ttl=timedelta(hours=2), create=first)
            elif status == "stale":
                store.acquire_lease(first.state.id, GONE, now=created, ttl=timedelta(seconds=30), create=first)
            else:
                store.append(first.state.id, first)
            store.append(first.state.id, *rest)
    return counts


def _stored_status(n: int) -> str:
    mix = ("completed",) * 14 + ("failed", "failed", "paused", "interrupted", "suspended", "completed")
    return mix[n % len(mix)]


# --- the listing as it was before pages --------------------------------------------------------


def old_listing(ctx: ServerState, status: str | None, limit: int, cursor: str | None) -> dict[str, Any]:
    """``list_debates`` before keyset pages (kept here, verbatim in effect, to compare against)."""
    now = utc_now()
    stored_status = "running" if status == "stale" else status
    rows = [(d, shown(ctx.store, d, now)) for d in ctx.store.list(status=stored_status)]
    if status is not None:
        rows = [row for row in rows if row[1] == status]
    start = 0
    if cursor is not None:
        ids = [d.id for d, _ in rows]
        if cursor not in ids:
            raise ApiError(400, "bad_request", f"unknown cursor '{cursor}' (start again without one)")
        start = ids.index(cursor) + 1
    page = rows[start : start + limit]
    items = [listing_row(ctx.store.load(d.id), shown_status) for d, shown_status in page]
    more = start + limit < len(rows)
    return {"items": items, "nextCursor": page[-1][0].id if more and page else None}


def mount_old(app: FastAPI, ctx: ServerState) -> None:
    def old(
        status: Annotated[str | None, Query()] = None,
        limit: Annotated[int, Query()] = 20,
        cursor: Annotated[str | None, Query()] = None,
    ) -> Response:
        return Response(json.dumps(old_listing(ctx, status, limit, cursor)), media_type="application/json")

    app.add_api_route("/bench/old-debates", old, methods=["GET"])


# --- timing --------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    path: str
    params: dict[str, str]


@dataclass
class Figures:
    p50: float
    p95: float
    p99: float
    n: int


def percentiles(samples: list[float]) -> Figures:
    ordered = sorted(samples)
    cuts = statistics.quantiles(ordered, n=100, method="inclusive") if len(ordered) > 1 else ordered * 99
    return Figures(cuts[49], cuts[94], cuts[98], len(ordered))


async def timed(client: httpx.AsyncClient, case: Case, reps: int, warmup: int) -> Figures:
    samples: list[float] = []
    for index in range(warmup + reps):
        began = time.perf_counter()
        response = await client.get(case.path, params=case.params)
        elapsed = (time.perf_counter() - began) * 1000
        if response.status_code != 200:
            raise SystemExit(f"{case.name}: {response.status_code} {response.text[:200]}")
        if index >= warmup:
            samples.append(elapsed)
    return percentiles(samples)


async def cursor_at(client: httpx.AsyncClient, path: str, params: dict[str, str], depth: int) -> str | None:
    """The cursor that gives the page after ``depth`` rows (walking there page by page)."""
    cursor: str | None = None
    seen = 0
    while seen < depth:
        step = {**params, "limit": str(min(100, depth - seen)), **({"cursor": cursor} if cursor else {})}
        body = (await client.get(path, params=step)).json()
        seen += len(body["items"])
        cursor = body["nextCursor"]
        if cursor is None:
            return None
    return cursor


async def cases_for(client: httpx.AsyncClient, path: str, debates: int) -> list[Case]:
    cases = [Case("first page (20)", path, {"limit": "20"}), Case("first page (100)", path, {"limit": "100"})]
    for depth in (1000, debates // 2, debates - 40):
        cursor = await cursor_at(client, path, {"limit": "100"}, depth)
        if cursor is not None:
            cases.append(Case(f"page after {depth:,} rows (20)", path, {"limit": "20", "cursor": cursor}))
    cases.append(Case("status=completed (20)", path, {"limit": "20", "status": "completed"}))
    cursor = await cursor_at(client, path, {"limit": "100", "status": "completed"}, debates // 2)
    if cursor is not None:
        cases.append(
            Case("status=completed, deep (20)", path, {"limit": "20", "status": "completed", "cursor": cursor})
        )
    for status in ("failed", "running", "stale"):
        cases.append(Case(f"status={status} (20)", path, {"limit": "20", "status": status}))
    return cases


async def measure(ctx: ServerState, debates: int, reps: int, old_reps: int) -> None:
    app = create_app(ctx)
    mount_old(app, ctx)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        new_cases = await cases_for(client, "/api/debates", debates)
        old_cases = await cases_for(client, "/bench/old-debates", debates) if old_reps else []
        await check_same(client, new_cases)
        print(
            f"\n{'case':34} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'p99≤50':>7}   {'before: p50':>11} {'p99 ms':>8}"
        )
        old_by_name = {case.name: case for case in old_cases}
        for case in new_cases:
            figures = await timed(client, case, reps, warmup=10)
            before = ""
            if case.name in old_by_name:
                old = await timed(client, old_by_name[case.name], old_reps, warmup=2)
                before = f"{old.p50:>11.1f} {old.p99:>8.1f}"
            ok = "yes" if figures.p99 <= TARGET_P99_MS else "NO"
            print(f"{case.name:34} {figures.p50:8.2f} {figures.p95:8.2f} {figures.p99:8.2f} {ok:>7}   {before}")
        print(f"\n(new: {reps} requests per case after 10 warm-up; before: {old_reps} per case, same app and store)")


async def check_same(client: httpx.AsyncClient, cases: list[Case]) -> None:
    """The first page of each filter is what the listing before pages gave (the rows must not change)."""
    for case in cases:
        if "cursor" in case.params:
            continue
        new = (await client.get(case.path, params=case.params)).json()["items"]
        old = (await client.get("/bench/old-debates", params=case.params)).json()["items"]
        print(f"same rows as before: {case.name:28} {'yes' if new == old else 'NO'} ({len(new)} rows)")


def time_open(path: Path) -> float:
    began = time.perf_counter()
    SqliteStore(path).close()
    return (time.perf_counter() - began) * 1000


def downgrade(path: Path) -> None:
    """Bring a copy back to the schema from before listing details (m001 to m005)."""
    db = sqlite3.connect(path)
    with db:
        for index in ("debates_ordinal", "debates_status_created_ordinal", "debates_created_ordinal"):
            db.execute(f"DROP INDEX {index}")
        for column in ("details", "details_seq", "ordinal"):
            db.execute(f"ALTER TABLE debates DROP COLUMN {column}")
        db.execute("CREATE INDEX debates_status_created ON debates (status, created_at)")
        db.execute("CREATE INDEX debates_created ON debates (created_at)")
        db.execute("DELETE FROM migrations WHERE name = 'm006_listing_pages'")
    db.execute("VACUUM")
    db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--debates", type=int, default=10_000)
    parser.add_argument("--running", type=int, default=20, help="debates held by a live run")
    parser.add_argument("--stale", type=int, default=15, help="debates saved as running whose run is gone")
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--old-reps", type=int, default=20, help="0 leaves the listing before pages out")
    parser.add_argument("--no-upgrade", action="store_true", help="skip timing the upgrade of an old database")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dialectic-listing-") as tmp:
        path = Path(tmp) / "debates.sqlite3"
        began = time.perf_counter()
        counts = build_store(path, args.debates, args.running, args.stale)
        size = sum(p.stat().st_size for p in Path(tmp).iterdir()) / 2**20
        print(f"built {args.debates:,} debates in {time.perf_counter() - began:.1f} s ({size:.0f} MiB): {counts}")
        print(f"opening the store (details current?): {min(time_open(path) for _ in range(5)):.1f} ms")
        if not args.no_upgrade:
            old_copy = Path(tmp) / "old.sqlite3"
            shutil.copy(path, old_copy)
            downgrade(old_copy)
            print(f"upgrading a database from before (details filled in from every log): {time_open(old_copy):.0f} ms")
        with SqliteStore(path) as store:
            asyncio.run(measure(context(store), args.debates, args.reps, args.old_reps))


def context(store: DebateStore) -> ServerState:
    server = ServerConfig(make_config(agents=3, rounds=2), Path(os.getcwd()))
    return build_context(store, server, ServeSettings(), ProviderPool())


if __name__ == "__main__":
    main()
