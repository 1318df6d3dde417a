"""``dialectic batch --ray`` on a local Ray cluster with 2 workers, one of them killed midway (issue 24's proof).

Starts a head node (``ray start --head``, ``--cpus`` CPUs: one worker each) on 127.0.0.1 with a token of
its own, runs ``--n`` problems against the fake OpenAI-compatible server at ``--latency`` seconds a call,
kills one worker with SIGKILL when ``--kill-at`` of the problems are finished, and reports whether every
problem completed, how many calls were made again (only those in flight at the kill should be) and the
wall time, beside the same batch run locally (no Ray) in the same invocation. Needs the ``[ray]`` extra.

    .venv/bin/python benchmarks/batch_ray.py [--n 200] [--concurrency 20] [--latency 0.3] [--kill-at 0.4]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dialectic.testing.fake_server import FakeLLMServer

COMPLETIONS = ("/v1/responses", "/v1/chat/completions")
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def finished(home: Path) -> int:
    path = home / "batch.sqlite3"
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=30) as db:
            return int(db.execute("SELECT count(*) FROM batch_items WHERE record IS NOT NULL").fetchone()[0])
    except sqlite3.OperationalError:  # not made yet
        return 0


def run_batch(
    tmp: Path, name: str, server: FakeLLMServer, args: argparse.Namespace, env: dict[str, str], ray: str | None
) -> dict[str, object]:
    home = tmp / name
    problems = tmp / "problems.jsonl"
    out = tmp / f"{name}.jsonl"
    command = [str(BIN / "dialectic"), "batch", str(problems), "-c", str(tmp / "config.json"), "-o", str(out)]
    command += ["--concurrency", str(args.concurrency)] + (["--ray", ray] if ray else [])
    before = sum(1 for p in server.paths() if p in COMPLETIONS)
    stderr_path = tmp / f"{name}.stderr"
    began = time.perf_counter()
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            command, env=env | {"DIALECTIC_HOME": str(home)}, stdout=subprocess.PIPE, stderr=stderr
        )
        killed_pid = None
        if ray:
            while process.poll() is None and finished(home) < args.n * args.kill_at:
                time.sleep(0.05)
            found = re.search(r"ray: \d+ workers \(pid (\d+)", stderr_path.read_text(errors="replace"))
            if found and process.poll() is None:
                killed_pid = int(found.group(1))
                os.kill(killed_pid, signal.SIGKILL)
        stdout, _ = process.communicate(timeout=1800)
    wall = time.perf_counter() - began
    time.sleep(0.2)
    sent = sum(1 for p in server.paths() if p in COMPLETIONS) - before
    lines = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    saved = sum(int(line["calls"]) for line in lines)
    return {
        "mode": f"ray ({ray}), worker pid {killed_pid} killed at {args.kill_at:.0%}" if ray else "local",
        "exit": process.returncode,
        "completed": sum(1 for line in lines if line["status"] == "completed"),
        "n": args.n,
        "wall_s": round(wall, 1),
        "calls_saved": saved,
        "calls_sent": sent,
        "calls_repeated": sent - saved,
        "summary": stdout.decode(errors="replace").strip().splitlines()[:1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the head node: one worker each")
    parser.add_argument("--kill-at", type=float, default=0.4, help="kill a worker when this share is finished")
    parser.add_argument("--skip-local", action="store_true", help="leave out the local baseline")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ray-bench-", dir="/tmp"))
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_AUTH_TOKEN_PATH")}
    env |= {"OPENAI_API_KEY": "bench", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    env |= {"RAY_USAGE_STATS_ENABLED": "0"}
    port = free_port()
    ray = str(BIN / "ray")
    start = [ray, "start", "--head", f"--port={port}", f"--num-cpus={args.cpus}", "--include-dashboard=false"]
    start += ["--node-ip-address=127.0.0.1", f"--temp-dir={tmp / 'ray'}", "--disable-usage-stats"]
    results = []
    try:
        with FakeLLMServer(latency_s=args.latency) as server:
            member = {"provider": "openai", "model": "fake", "baseUrl": server.openai_base_url}
            config = {
                "agents": [
                    {"id": f"a{i}", "name": r.title(), "role": r, **member}
                    for i, r in enumerate(("architect", "security"))
                ],
                "judge": {"id": "judge", "name": "Judge", "role": "generalist", **member},
                "debate": {"rounds": 1},
            }
            (tmp / "config.json").write_text(json.dumps(config))
            (tmp / "problems.jsonl").write_text(
                "".join(
                    json.dumps({"id": f"p{i}", "problem": f"Design cache number {i}"}) + "\n" for i in range(args.n)
                )
            )
            if not args.skip_local:
                results.append(run_batch(tmp, "local", server, args, env, None))
            subprocess.run(start, env=env, check=True, capture_output=True, timeout=300)
            results.append(run_batch(tmp, "ray", server, args, env, f"127.0.0.1:{port}"))
    finally:
        subprocess.run([ray, "stop", "--force"], env=env, capture_output=True, timeout=120, check=False)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{time.strftime('%Y-%m-%d')} on {socket.gethostname()} ({os.cpu_count()} CPUs), latency {args.latency} s")
    for result in results:
        print(json.dumps(result))
    ray_result = results[-1]
    if ray_result["completed"] != args.n:
        sys.exit(f"only {ray_result['completed']}/{args.n} completed on Ray")


if __name__ == "__main__":
    main()
