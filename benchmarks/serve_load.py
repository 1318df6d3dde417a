"""Load on ``dialectic serve``: many debates at once, each watched over its event stream.

Starts the fake OpenAI-compatible server (300 ms per call by default) and one ``dialectic serve``
process, then for each size (50, then 100 debates of 3 agents × 2 rounds) starts every debate at
once through the API and watches each with one SSE client until its stream ends. Reports:

* completed debates (every one must end ``completed``);
* wall time, from the first POST to the last stream's end;
* event delivery latency, stored change → client receipt (the change's ``at`` to the moment the
  client read it; only changes saved after the client connected, so a replay does not count);
* each client's sequence checked: the stored changes' ids are 1, 2, … with no gap and no
  repeat and as many as the store holds; the live events' ids ``N.k`` strictly increase;
* the server's peak RSS and the CPU it used (from ``/proc``).

The server gets a fresh store for each size. The clients, the fake server and ``dialectic serve``
are three processes on one machine, so the latency includes the clients' own scheduling.

    .venv/bin/python benchmarks/serve_load.py [--sizes 50,100] [--latency 0.3] [--rounds 2] [--agents 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx2 as httpx

from dialectic.store import SqliteStore

ROLES = ("architect", "performance", "kiss", "security", "testing")
TIME_LIMIT_S = 900.0
"""The whole run stops by itself after this, whatever happened."""


def write_config(directory: Path, url: str, agents: int, rounds: int) -> Path:
    endpoint = {"provider": "openai", "model": "fake", "baseUrl": url}
    config = {
        "agents": [{"id": f"agent-{r}", "name": r.title(), "role": r, **endpoint} for r in ROLES[:agents]],
        "judge": {"id": "judge", "name": "Judge", "role": "generalist", **endpoint},
        "debate": {"rounds": rounds},
    }
    path = directory / "debate-config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


@dataclass
class Watch:
    """What one SSE client saw."""

    debate_id: str
    stored_ids: list[int] = field(default_factory=list)
    live_ids: list[tuple[int, int]] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    final_status: str | None = None
    errors: list[str] = field(default_factory=list)


async def watch(client: httpx.AsyncClient, debate_id: str) -> Watch:
    """Read the stream as raw bytes (parsing only the stored changes' JSON, to keep the client light)."""
    seen = Watch(debate_id)
    buffer = b""
    async with client.stream("GET", f"/api/debates/{debate_id}/events") as response:
        connected = time.time()
        async for chunk in response.aiter_raw():
            received = time.time()
            buffer += chunk
            *blocks, buffer = buffer.replace(b"\r\n", b"\n").split(b"\n\n")
            for block in blocks:
                fields = dict(line.split(b": ", 1) for line in block.split(b"\n") if b": " in line)
                event, event_id = fields.get(b"event", b"message"), fields.get(b"id")
                if event == b"end":
                    seen.final_status = json.loads(fields[b"data"])["status"]
                    return seen
                if event_id is None:
                    continue
                if b"." in event_id:
                    seq, n = event_id.split(b".")
                    seen.live_ids.append((int(seq), int(n)))
                else:
                    seen.stored_ids.append(int(event_id))
                    at = datetime.fromisoformat(json.loads(fields[b"data"])["at"].replace("Z", "+00:00")).timestamp()
                    if at >= connected:
                        seen.latencies_ms.append((received - at) * 1000)
    seen.errors.append("the stream ended without an end event")
    return seen


async def start_and_watch(client: httpx.AsyncClient, problem: str) -> Watch:
    response = await client.post("/api/debates", json={"problem": problem})
    if response.status_code != 201:
        failed = Watch("(not created)")
        failed.errors.append(f"POST answered {response.status_code}: {response.text}")
        return failed
    return await watch(client, response.json()["id"])


def check_sequence(seen: Watch, stored_count: int) -> list[str]:
    problems: list[str] = []
    if seen.stored_ids != list(range(1, len(seen.stored_ids) + 1)):
        problems.append("stored change ids not 1..N without gaps or repeats")
    if len(seen.stored_ids) != stored_count:
        problems.append(f"{len(seen.stored_ids)} stored changes received, the store holds {stored_count}")
    if seen.live_ids != sorted(set(seen.live_ids)):
        problems.append("live event ids not strictly increasing")
    return problems


def proc_figures(pid: int) -> tuple[float, float]:
    """CPU seconds used so far and the peak RSS in MiB of process ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    peak_kib = next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
    return cpu, peak_kib / 1024


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


async def run_size(url: str, size: int, store_path: Path, pid: int) -> dict[str, object]:
    cpu_before, _ = proc_figures(pid)
    limits = httpx.Limits(max_connections=size * 2 + 10, max_keepalive_connections=size * 2 + 10)
    timeout = httpx.Timeout(TIME_LIMIT_S, connect=30.0)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=timeout) as client:
        started = time.perf_counter()
        watches = await asyncio.wait_for(
            asyncio.gather(*(start_and_watch(client, f"Design a rate limiter, variant {n}") for n in range(size))),
            TIME_LIMIT_S,
        )
        wall = time.perf_counter() - started
    cpu_after, peak_mib = proc_figures(pid)
    with SqliteStore(store_path, create=False) as store:
        counts = {w.debate_id: len(store.changes(w.debate_id)) for w in watches if not w.errors}
    problems = [
        f"{w.debate_id}: {problem}"
        for w in watches
        for problem in [*w.errors, *check_sequence(w, counts.get(w.debate_id, -1))]
    ]
    latencies = [ms for w in watches for ms in w.latencies_ms]
    return {
        "debates": size,
        "completed": sum(1 for w in watches if w.final_status == "completed"),
        "wall_s": round(wall, 2),
        "stored_events": sum(len(w.stored_ids) for w in watches),
        "live_events": sum(len(w.live_ids) for w in watches),
        "latency_p50_ms": round(statistics.median(latencies), 1) if latencies else None,
        "latency_p99_ms": round(percentile(latencies, 0.99), 1) if latencies else None,
        "latency_max_ms": round(max(latencies), 1) if latencies else None,
        "server_cpu_s": round(cpu_after - cpu_before, 2),
        "server_cpu_pct_of_wall": round(100 * (cpu_after - cpu_before) / wall, 1),
        "server_peak_rss_mib": round(peak_mib, 1),
        "sequence_problems": problems[:10],
        "sequence_problem_count": len(problems),
    }


def serve(
    directory: Path, config: Path, max_running: int, store: str | None = None
) -> tuple[subprocess.Popen[str], str]:
    """``dialectic serve`` on a free port (the store: ``store``, else ``directory/store``); the process and its URL."""
    executable = str(Path(sys.executable).parent / "dialectic")
    env = {**os.environ, "OPENAI_API_KEY": "bench-key", "DIALECTIC_HOME": str(directory / "home")}
    env.pop("DIALECTIC_TOKEN", None)
    process = subprocess.Popen(
        [executable, "serve", "--port", "0", "--store", store or str(directory / "store"), "-c",
         str(config), "--max-running", str(max_running)],
        cwd=directory, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=(directory / "serve.stderr").open("w"), text=True,
    )  # fmt: skip
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("Serving on "):
        process.kill()
        raise SystemExit(f"dialectic serve did not start: {line!r} {(directory / 'serve.stderr').read_text()}")
    return process, line.split()[2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="50,100", help="comma-separated numbers of debates run at once")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per call on the fake server")
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results = []
    llm = subprocess.Popen(  # its own process: its threads do not compete with the clients for the GIL
        [sys.executable, "-m", "dialectic.testing.fake_server", "--latency", str(args.latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert llm.stdout is not None
    llm_url = llm.stdout.readline().strip() + "/v1"
    with tempfile.TemporaryDirectory(prefix="serve-load-") as tmp:
        for size in sizes:
            directory = Path(tmp) / f"size-{size}"
            directory.mkdir()
            config = write_config(directory, llm_url, args.agents, args.rounds)
            process, url = serve(directory, config, max_running=max(sizes))
            try:
                result = asyncio.run(run_size(url, size, directory / "store" / "debates.sqlite3", process.pid))
            finally:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=60)
            results.append(result)
            print(json.dumps(result), flush=True)
    llm.send_signal(signal.SIGTERM)
    llm.wait(timeout=30)
    failed = [r for r in results if r["completed"] != r["debates"] or r["sequence_problem_count"]]
    print(f"{'FAILED' if failed else 'OK'}: " + "; ".join(
        f"{r['debates']} debates: {r['completed']} completed in {r['wall_s']} s, latency p50 {r['latency_p50_ms']} ms "
        f"p99 {r['latency_p99_ms']} ms, server CPU {r['server_cpu_s']} s, peak RSS {r['server_peak_rss_mib']} MiB"
        for r in results))  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
