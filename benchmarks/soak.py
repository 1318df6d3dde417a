"""A soak of ``dialectic serve`` on Postgres: many debates, a fixed number at a time, each watched over SSE.

Starts a throwaway Postgres cluster (:mod:`tests.postgres_cluster`), the fake OpenAI-compatible server
(300 ms per call by default) and one ``dialectic serve`` on the cluster's database, then runs ``--debates``
debates (3 agents × 2 rounds), ``--at-once`` of them at a time: each started through the API and watched
by one SSE client until its stream ends; the next starts as soon as one ends. Reports:

* completed and failed debates (every one must end ``completed``; a stream with a gap or a repeat in
  its stored changes' ids counts as failed too);
* the server's RSS when the first debate starts, when half of them have ended, and at the end (the
  end must be within 1.2× of the middle: nothing grows with the number of debates served);
* the p99 of event delivery latency (stored change → client receipt) for each tenth of the debates,
  in the order they started (flat: the last tenth's within 1.5× of the first's);
* the server's open file descriptors at the same three moments.

    .venv/bin/python benchmarks/soak.py [--debates 1000] [--at-once 20] [--latency 0.3] [--rounds 2] [--agents 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx2 as httpx
from serve_load import Watch, check_sequence, percentile, serve, start_and_watch, write_config

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the throwaway cluster the tests use

from dialectic.store.postgres import PostgresStore
from tests.postgres_cluster import controlled_cluster

TIME_LIMIT_S = 3_600.0
"""The whole run stops by itself after this, whatever happened."""


def rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    return int(next(line.split()[1] for line in status if line.startswith("VmRSS"))) / 1024


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


async def soak(url: str, debates: int, at_once: int, pid: int) -> tuple[list[Watch], dict[str, float]]:
    """Every debate started and watched, ``at_once`` at a time; the server's figures at start, middle and end."""
    figures: dict[str, float] = {"rss_start_mib": rss_mib(pid), "fds_start": open_fds(pid)}
    watches: list[Watch | None] = [None] * debates
    ended = 0
    slots = asyncio.Semaphore(at_once)
    limits = httpx.Limits(max_connections=at_once * 2 + 10, max_keepalive_connections=at_once * 2 + 10)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=httpx.Timeout(600.0, connect=30.0)) as client:

        async def one(n: int) -> None:
            nonlocal ended
            async with slots:
                watches[n] = await start_and_watch(client, f"Design a rate limiter, variant {n}")
            ended += 1
            if ended == debates // 2:
                figures["rss_middle_mib"], figures["fds_middle"] = rss_mib(pid), open_fds(pid)

        await asyncio.wait_for(asyncio.gather(*(one(n) for n in range(debates))), TIME_LIMIT_S)
    figures["rss_end_mib"], figures["fds_end"] = rss_mib(pid), open_fds(pid)
    return [w for w in watches if w is not None], figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--debates", type=int, default=1_000)
    parser.add_argument("--at-once", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per call on the fake server")
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if not 2 <= args.debates <= 100_000 or not 1 <= args.at_once <= 1_000:
        parser.error("--debates must be 2 to 100000 and --at-once 1 to 1000")
    llm = subprocess.Popen(  # its own process: its threads do not compete with the clients for the GIL
        [sys.executable, "-m", "dialectic.testing.fake_server", "--latency", str(args.latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert llm.stdout is not None
    llm_url = llm.stdout.readline().strip() + "/v1"
    try:
        with controlled_cluster() as database, tempfile.TemporaryDirectory(prefix="soak-") as tmp:
            directory = Path(tmp)
            config = write_config(directory, llm_url, args.agents, args.rounds)
            process, url = serve(directory, config, args.at_once, store=database.url)
            started = time.perf_counter()
            try:
                watches, figures = asyncio.run(soak(url, args.debates, args.at_once, process.pid))
            finally:
                wall = time.perf_counter() - started
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=120)
            store = PostgresStore(database.url)
            try:
                counts = {w.debate_id: len(store.changes(w.debate_id)) for w in watches if not w.errors}
            finally:
                store.close()
    finally:
        llm.send_signal(signal.SIGTERM)
        llm.wait(timeout=30)
    broken = {w.debate_id for w in watches if w.errors or check_sequence(w, counts.get(w.debate_id, -1))}
    completed = sum(1 for w in watches if w.final_status == "completed" and w.debate_id not in broken)
    tenth = max(1, len(watches) // 10)
    deciles = [
        round(percentile([ms for w in watches[i : i + tenth] for ms in w.latencies_ms], 0.99), 1)
        for i in range(0, tenth * 10, tenth)
    ]
    result = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "debates": args.debates,
        "at_once": args.at_once,
        "latency_s": args.latency,
        "completed": completed,
        "failed": args.debates - completed,
        "wall_s": round(wall, 1),
        **{k: round(v, 1) for k, v in figures.items()},
        "p99_latency_ms_by_decile": deciles,
        "problems": sorted(broken)[:10],
    }
    print(json.dumps(result), flush=True)
    rss_ok = figures["rss_end_mib"] <= 1.2 * figures["rss_middle_mib"]
    flat = deciles[-1] <= 1.5 * deciles[0]
    ok = completed == args.debates and rss_ok and flat
    print(
        f"{'OK' if ok else 'FAILED'}: {completed}/{args.debates} completed in {result['wall_s']} s; RSS "
        f"{figures['rss_start_mib']:.0f} / {figures['rss_middle_mib']:.0f} / {figures['rss_end_mib']:.0f} MiB "
        f"(end {'within' if rss_ok else 'past'} 1.2× the middle); p99 by tenth {deciles} ms "
        f"({'flat' if flat else 'not flat'}: last ≤ 1.5× first); fds {figures['fds_start']:.0f} / "
        f"{figures['fds_middle']:.0f} / {figures['fds_end']:.0f}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
