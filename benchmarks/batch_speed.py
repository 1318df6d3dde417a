"""How close ``dialectic batch`` comes to the dataflow bound at its concurrency.

Runs the installed ``dialectic batch`` against the fake OpenAI-compatible server with a fixed
per-call latency: first one problem alone at the latency and at twice it (the difference over
the latency is the number of calls along a debate's critical path, free of per-debate overhead),
then ``--n`` problems at ``--concurrency K``. The bound is critical-path calls × latency ×
ceil(n / K); the ratio is the batch's wall time over it (the goal: within 1.3 at n = 200,
latency 0.3 s).

    .venv/bin/python benchmarks/batch_speed.py [--n 200] [--concurrency 20] [--latency 0.3]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dialectic.testing.fake_server import FakeLLMServer

ROLES = ("architect", "security", "performance", "kiss")


def config(url: str, agents: int, rounds: int) -> dict[str, object]:
    def member(ident: str, role: str) -> dict[str, object]:
        return {"id": ident, "name": role.title(), "role": role, "provider": "openai", "model": "fake", "baseUrl": url}

    return {
        "agents": [member(f"a{i}", role) for i, role in enumerate(ROLES[:agents])],
        "judge": member("judge", "generalist"),
        "debate": {"rounds": rounds},
    }


def batch(
    tmp: Path, name: str, count: int, concurrency: int, cfg: Path
) -> tuple[float, float, list[dict[str, object]]]:
    """Run a batch of ``count`` problems; the process's wall time, the run's own and its result lines."""
    dialectic = shutil.which("dialectic") or str(Path(sys.executable).with_name("dialectic"))
    problems = tmp / f"{name}.jsonl"
    problems.write_text(
        "".join(json.dumps({"id": f"p{i}", "problem": f"Design cache number {i}"}) + "\n" for i in range(count))
    )
    out = tmp / f"{name}-results.jsonl"
    env = {**os.environ, "OPENAI_API_KEY": "bench", "DIALECTIC_HOME": str(tmp / name)}
    started = time.perf_counter()
    done = subprocess.run(
        [dialectic, "batch", str(problems), "-c", str(cfg), "-o", str(out), "--concurrency", str(concurrency)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"batch failed ({done.returncode}): {done.stderr}")
    found = re.search(r"wall time: ([0-9.]+) s", done.stdout)
    run_wall = float(found.group(1)) if found else wall
    return wall, run_wall, [json.loads(line) for line in out.read_text().splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--agents", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        alone = []
        for factor in (1, 2):  # one debate at two latencies: the difference is the critical path, not overhead
            with FakeLLMServer(latency_s=args.latency * factor) as server:
                cfg = tmp / f"config-{factor}.json"
                cfg.write_text(json.dumps(config(server.openai_base_url, args.agents, args.rounds)))
                alone.append(float(str(batch(tmp, f"single-{factor}", 1, 1, cfg)[2][0]["wall_s"])))
        critical = max(1, round((alone[1] - alone[0]) / args.latency))
    with FakeLLMServer(latency_s=args.latency) as server, tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        cfg = tmp / "config.json"
        cfg.write_text(json.dumps(config(server.openai_base_url, args.agents, args.rounds)))
        calls_before = len(server.paths())
        wall, run_wall, lines = batch(tmp, "batch", args.n, args.concurrency, cfg)
        requests = len(server.paths()) - calls_before
    completed = sum(1 for line in lines if line["status"] == "completed")
    times = sorted(float(str(line["wall_s"])) for line in lines)
    bound = critical * args.latency * math.ceil(args.n / args.concurrency)
    print(f"{completed}/{args.n} completed, {requests} requests, concurrency {args.concurrency}")
    print(f"critical path: {critical} calls × {args.latency} s (one debate alone: {alone[0]:.2f} s)")
    print(f"dataflow bound: {bound:.1f} s; time per debate in the batch: mean {sum(times) / len(times):.2f} s")
    print(f"wall time: {run_wall:.1f} s in the run ({wall:.1f} s with process start): ratio {run_wall / bound:.2f}")


if __name__ == "__main__":
    main()
