"""``dialectic bench --ray ADDRESS`` on a real local Ray cluster (``ray start --head``, 2 CPUs: 2 workers).

Skipped where Ray is not installed (the ``[ray]`` extra), failed instead when ``DIALECTIC_REQUIRE_RAY`` is
set. The arms ask the fake OpenAI server, whose model is the parity one (right exactly when the truth is even).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dialectic.testing.fake_server import FakeLLMServer
from tests.batch.ray_support import PeakCounter, Place, free_port, local_cluster, require_ray
from tests.bench.conftest import parity

require_ray()

ARMS = "single,majority:3,self-consistency:3"
"""majority:3 and self-consistency:3 draw the same samples: shared, each is asked once per item."""
COMPLETIONS = ("/v1/responses", "/v1/chat/completions")


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    with local_cluster(cpus=2) as address:
        yield address


def write_config(place: Place, server: FakeLLMServer) -> Path:
    agent = {"provider": "openai", "model": "fake-1", "baseUrl": server.openai_base_url}
    config = {
        "agents": [{"id": "a1", "name": "A1", "role": "architect", **agent}],
        "judge": {"id": "j", "name": "J", "role": "generalist", **agent},
        "debate": {"rounds": 1},
    }
    path = place.root / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def bench_args(config: Path, out: Path, items: int, *extra: str) -> list[str]:
    return ["bench", "arithmetic", "-n", str(items), "--arms", ARMS, "-c", str(config), "-o", str(out), *extra]


def pairs(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Every (arm, item id) of a results file, with its result."""
    document = json.loads(out.read_text(encoding="utf-8"))
    return {(arm, item["id"]): result for item in document["items"] for arm, result in item["arms"].items()}


def saved_rows(home: Path) -> list[tuple[str, str]]:
    path = home / "bench.sqlite3"
    if not path.exists():
        return []
    with sqlite3.connect(path) as db:
        return [(arm, item) for arm, item in db.execute("SELECT arm, item_id FROM bench_results")]


def completions(server: FakeLLMServer) -> int:
    return sum(1 for path in server.paths() if path in COMPLETIONS)


def test_a_bench_on_ray_gives_the_local_runs_results_and_shares_its_draws(cluster: str, tmp_path: Path) -> None:
    local, on_ray = Place(tmp_path / "local"), Place(tmp_path / "ray")
    for place in (local, on_ray):
        place.root.mkdir()
    items = 20
    with FakeLLMServer(parity) as server:
        config = write_config(local, server)
        ran_here = local.run(*bench_args(config, local.root / "r.json", items, "--concurrency", "4"))
        asked_here = completions(server)
        ran_there = on_ray.run(
            *bench_args(config, on_ray.root / "r.json", items, "--concurrency", "4", "--ray", cluster)
        )
        asked_there = completions(server) - asked_here
    assert ran_here.returncode == 0, ran_here.stderr
    assert ran_there.returncode == 0, ran_there.stderr
    assert "ray: joined the cluster at" in ran_there.stderr and "ray: 2 workers (pid" in ran_there.stderr
    here, there = pairs(local.root / "r.json"), pairs(on_ray.root / "r.json")
    assert len(there) == 3 * items and there.keys() == here.keys()
    for key, result in here.items():
        assert (there[key]["final"], there[key]["outcome"], there[key]["calls"]) == (
            result["final"],
            result["outcome"],
            result["calls"],
        ), key
    assert sum(r["calls"] for r in there.values()) == 7 * items  # each arm counts a shared draw as its own call
    # shared draws: single's greedy answer plus three samples shared by majority:3 and self-consistency:3
    assert asked_here == asked_there == 4 * items, (asked_here, asked_there)
    assert sorted(saved_rows(on_ray.home)) == sorted(there)


def worker_pids(stderr: str) -> list[int]:
    found = re.search(r"ray: \d+ workers \(([^)]*)\)", stderr)
    return [int(pid) for pid in re.findall(r"pid (\d+)", found.group(1))] if found else []


def test_every_pair_is_saved_once_with_a_worker_killed_midway(cluster: str, tmp_path: Path) -> None:
    place = Place(tmp_path)
    items = 60
    total = 3 * items
    with FakeLLMServer(parity, latency_s=0.02) as server:
        config = write_config(place, server)
        out = place.root / "r.json"
        process = place.spawn(*bench_args(config, out, items, "--concurrency", "8", "--ray", cluster))
        try:
            deadline = time.monotonic() + 150
            pids: list[int] = []
            while True:
                assert process.poll() is None, f"the run ended before the kill: {place.stderr()}"
                assert time.monotonic() < deadline, f"the run never got a quarter of the way: {place.stderr()}"
                pids = pids or worker_pids(place.stderr())
                if pids and len(saved_rows(place.home)) >= total // 4:
                    break
                time.sleep(0.05)
            assert len(pids) == 2, place.stderr()
            os.kill(pids[0], signal.SIGKILL)
            at_kill = len(saved_rows(place.home))
            code = process.wait(timeout=150)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    stderr = place.stderr()
    assert code == 0, stderr
    assert at_kill < total, "the run was over before the kill"
    assert "a worker died; restarted as pid" in stderr, stderr
    rows = saved_rows(place.home)
    assert len(rows) == len(set(rows)) == total
    results = pairs(out)
    assert len(results) == total
    assert {r["outcome"] for r in results.values()} <= {"correct", "wrong"}
    assert sum(r["calls"] for r in results.values()) == 7 * items


def test_an_address_nobody_answers_at_is_a_one_line_error(tmp_path: Path) -> None:
    place = Place(tmp_path)
    address = f"127.0.0.1:{free_port()}"  # bound and let go: nothing listens there
    with FakeLLMServer(parity) as server:
        result = place.run(*bench_args(write_config(place, server), place.root / "r.json", 2, "--ray", address))
        asked = completions(server)
    assert result.returncode == 1, result.stderr
    refused = f"error: cannot join the Ray cluster at {address}: nothing answers there (Connection refused)"
    assert result.stderr.splitlines() == [refused], "one line, before any run is created"
    assert asked == 0


def test_the_limiter_actor_bounds_the_arms_requests_across_the_cluster(cluster: str, tmp_path: Path) -> None:
    counted = PeakCounter(parity)

    place = Place(tmp_path)
    with FakeLLMServer(counted) as server:
        config = write_config(place, server)
        document = json.loads(config.read_text(encoding="utf-8"))
        config.write_text(json.dumps(document | {"debate": {"rounds": 1, "maxConcurrency": 2}}), encoding="utf-8")
        result = place.run(*bench_args(config, place.root / "r.json", 6, "--concurrency", "8", "--ray", cluster))
        asked = completions(server)
    assert result.returncode == 0, result.stderr
    assert "2 calls at a time per endpoint across the cluster" in result.stderr
    # 8 pairs at once on 2 workers could send 8 x 3 requests at a time; the cluster sends 2
    assert asked == 4 * 6 and counted.most == 2, (asked, counted.most)


def test_sigterm_keeps_the_saved_results_and_resume_on_ray_finishes_the_run(cluster: str, tmp_path: Path) -> None:
    place = Place(tmp_path)
    items = 40
    with FakeLLMServer(parity, latency_s=0.05) as server:
        config = write_config(place, server)
        out = place.root / "r.json"
        process = place.spawn(*bench_args(config, out, items, "--concurrency", "8", "--ray", cluster))
        try:
            deadline = time.monotonic() + 120
            while len(saved_rows(place.home)) < 6:
                assert process.poll() is None, place.stderr()
                assert time.monotonic() < deadline, place.stderr()
                time.sleep(0.05)
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=60) == 143, place.stderr()
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        stderr = place.stderr()
        stopped = re.search(r"run (bench-\S+) stopped with (\d+) of (\d+) results saved", stderr)
        assert stopped is not None, stderr
        run_id, saved, total = stopped.group(1), int(stopped.group(2)), int(stopped.group(3))
        assert 6 <= saved < total == 3 * items
        assert len(pairs(out)) == saved == len(saved_rows(place.home))  # the results file holds what was saved
        resumed = place.run("bench", "--resume", run_id, "-o", str(out), "--ray", cluster)
    assert resumed.returncode == 0, resumed.stderr
    rows = saved_rows(place.home)
    assert len(rows) == len(set(rows)) == total
    assert len(pairs(out)) == total
