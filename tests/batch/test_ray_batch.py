"""``dialectic batch --ray ADDRESS`` on a real local Ray cluster (``ray start --head``, 2 CPUs: 2 workers).

Skipped where Ray is not installed (the ``[ray]`` extra). The debates go to the fake OpenAI server.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dialectic.llm.scripted import default_reply
from dialectic.store import open_store
from dialectic.testing.fake_server import FakeLLMServer
from tests.batch.ray_support import PeakCounter, Place, free_port, local_cluster, require_ray, result_lines

require_ray()

PROBLEMS = 200
"""The issue's proof: 200 problems on 2 workers, one of them killed midway."""
COMPLETIONS = ("/v1/responses", "/v1/chat/completions")


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    with local_cluster(cpus=2) as address:
        yield address


@pytest.fixture
def place(tmp_path: Path) -> Place:
    return Place(tmp_path)


def worker_pids(stderr: str) -> list[int]:
    found = re.search(r"ray: \d+ workers \(([^)]*)\)", stderr)
    return [int(pid) for pid in re.findall(r"pid (\d+)", found.group(1))] if found else []


def test_every_problem_completes_with_a_worker_killed_midway(cluster: str, place: Place) -> None:
    with FakeLLMServer(latency_s=0.01) as server:
        config = place.write_config(server)
        problems = place.write_problems(PROBLEMS)
        out = place.root / "results.jsonl"
        began = time.monotonic()
        process = place.spawn("batch", str(problems), "-c", str(config), "-o", str(out), "-k", "16", "--ray", cluster)
        try:
            deadline = time.monotonic() + 150
            pids: list[int] = []
            while True:
                assert process.poll() is None, f"the batch ended before the kill: {place.stderr()}"
                assert time.monotonic() < deadline, f"the batch never got a quarter of the way: {place.stderr()}"
                pids = pids or worker_pids(place.stderr())
                items = place.items()
                if pids and sum(1 for i in items if i.finished) >= PROBLEMS // 4:
                    break
                time.sleep(0.05)
            assert len(pids) == 2, place.stderr()
            os.kill(pids[0], signal.SIGKILL)
            killed = {i.id: i.debate_id for i in place.items() if not i.finished and i.debate_id is not None}
            code = process.wait(timeout=150)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        took = time.monotonic() - began
        time.sleep(0.2)  # let the server record any request still on the wire
        sent = sum(1 for path in server.paths() if path in COMPLETIONS)
    stderr = place.stderr()
    stdout = (place.root / "run.stdout").read_text(encoding="utf-8")
    assert code == 0, stderr
    assert "a worker died; restarted as pid" in stderr, stderr
    assert stdout.startswith("batch batch-"), stdout  # what Ray prints about the dead worker goes to stderr
    lines = result_lines(out)
    assert sorted(line["id"] for line in lines) == [f"p{i:03d}" for i in range(PROBLEMS)]
    assert {line["status"] for line in lines} == {"completed"}, [line["error"] for line in lines if line["error"]]
    assert len({line["debate_id"] for line in lines}) == PROBLEMS
    by_id = {line["id"]: line for line in lines}
    assert killed, "no debate was in flight at the kill"
    # the debates in flight at the kill were resumed, each in the debate it had started, not started again
    assert all(by_id[item_id]["debate_id"] == debate_id for item_id, debate_id in killed.items())
    assert f"{PROBLEMS}/{PROBLEMS} debates finished ({PROBLEMS} completed)" in stdout
    # no saved call was made again: only the calls in flight at the kill (at most 2 a debate) were repeated
    saved = sum(int(line["calls"]) for line in lines)
    assert saved <= sent <= saved + 2 * len(killed), (saved, sent, len(killed))
    print(
        f"{PROBLEMS} debates on 2 Ray workers, one killed: {took:.1f} s; {len(killed)} in flight at the kill, "
        f"{sent - saved} calls repeated"
    )


def test_the_limiter_actor_bounds_concurrent_requests_across_the_cluster(cluster: str, place: Place) -> None:
    counted = PeakCounter(default_reply)

    with FakeLLMServer(counted) as server:
        config = place.write_config(server, maxConcurrency=2)
        problems = place.write_problems(8)
        out = place.root / "results.jsonl"
        result = place.run("batch", str(problems), "-c", str(config), "-o", str(out), "-k", "8", "--ray", cluster)
        calls = sum(1 for path in server.paths() if path in COMPLETIONS)
    assert result.returncode == 0, result.stderr
    assert "2 calls at a time per endpoint across the cluster" in result.stderr
    assert {line["status"] for line in result_lines(out)} == {"completed"}
    # 8 debates on 2 workers: each debate alone could send 2 at once, each worker 8; the cluster sends 2
    assert calls > 8 and counted.most == 2, (calls, counted.most)


def test_sigterm_saves_the_debates_in_flight_and_resume_on_ray_finishes_the_run(cluster: str, place: Place) -> None:
    with FakeLLMServer(latency_s=0.05) as server:
        config = place.write_config(server)
        problems = place.write_problems(24)
        out = place.root / "results.jsonl"
        process = place.spawn("batch", str(problems), "-c", str(config), "-o", str(out), "-k", "8", "--ray", cluster)
        try:
            deadline = time.monotonic() + 120
            while True:
                assert process.poll() is None, place.stderr()
                assert time.monotonic() < deadline, place.stderr()
                items = place.items()
                if any(i.finished for i in items) and sum(1 for i in items if i.status == "running") >= 2:
                    break
                time.sleep(0.05)
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=60) == 143, place.stderr()
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        stderr = place.stderr()
        assert "stopped with" in stderr and "resume with: dialectic batch --resume batch-" in stderr, stderr
        store = open_store(place.home)
        try:
            assert store.list(status="running", limit=None) == []  # cancelled on the workers: saved as interrupted
        finally:
            store.close()
        run_id = stderr.split()[1].rstrip(":")
        resumed = place.run("batch", "--resume", run_id, "--ray", cluster)
    lines = result_lines(out)
    assert resumed.returncode == 0, [line for line in lines if line["error"]] or resumed.stderr
    assert sorted(line["id"] for line in lines) == [f"p{i:03d}" for i in range(24)]
    assert {line["status"] for line in lines} == {"completed"}
    assert resumed.stdout.startswith(f"batch {run_id}: 24/24 debates finished")


def test_an_address_nobody_answers_at_is_a_one_line_error(place: Place) -> None:
    address = f"127.0.0.1:{free_port()}"  # bound and let go: nothing listens there (Ray would wait for ever)
    result = place.run("batch", str(place.write_problems(1)), "--ray", address)
    assert result.returncode == 1, result.stderr
    refused = f"error: cannot join the Ray cluster at {address}: nothing answers there (Connection refused)"
    assert result.stderr.splitlines() == [refused], "one line, before any run is created"


def test_each_debate_on_a_worker_posts_its_hook_before_the_batch_ends(cluster: str, place: Place) -> None:
    from tests.hook_receiver import SECRET, HookReceiver

    with HookReceiver().running() as receiver, FakeLLMServer(latency_s=0.01) as server:
        config = place.write_config(server)
        env = place.env() | {"DIALECTIC_HOOK_SECRET": SECRET}
        args = ("batch", str(place.write_problems(4)), "-c", str(config), "--ray", cluster, "--notify", receiver.url)
        result = place.run(*args, env=env)
        posted = list(receiver.received)  # what arrived while the batch ran: nothing may come after it
    assert result.returncode == 0, result.stderr
    assert len(posted) == 4 and all(post.signed_with(SECRET) for post in posted)
    debate_ids = {item.debate_id for item in place.items()}
    assert {post.json()["debateId"] for post in posted} == debate_ids
