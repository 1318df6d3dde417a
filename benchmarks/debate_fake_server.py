"""How long a debate takes when every call has latency, and what data-driven scheduling buys.

Runs the installed ``dialectic debate`` (3 agents × 3 rounds by default) against the fake
OpenAI-compatible server with a fixed per-call latency, once with calls overlapped
(``maxConcurrency`` 4) and once one call at a time (``maxConcurrency`` 1), and prints wall
time, the number of calls the server answered, and the prompt tokens the debate used.

    .venv/bin/python benchmarks/debate_fake_server.py [--latency 0.5] [--agents 3] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dialectic.testing.fake_server import FakeLLMServer

ROLES = ("architect", "performance", "kiss", "security", "testing")


def config(url: str, agents: int, rounds: int, concurrency: int) -> dict[str, object]:
    def member(index: int, role: str) -> dict[str, object]:
        return {
            "id": f"a{index}",
            "name": role.title(),
            "role": role,
            "provider": "openai",
            "model": "fake",
            "baseUrl": url,
        }

    return {
        "agents": [member(i, role) for i, role in enumerate(ROLES[:agents])],
        "judge": {
            "id": "judge",
            "name": "Judge",
            "role": "generalist",
            "provider": "openai",
            "model": "fake",
            "baseUrl": url,
        },
        "debate": {"rounds": rounds, "maxConcurrency": concurrency},
    }


def run_once(latency: float, agents: int, rounds: int, concurrency: int) -> dict[str, float]:
    dialectic = shutil.which("dialectic") or str(Path(sys.executable).with_name("dialectic"))
    with FakeLLMServer(latency_s=latency) as server, tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp, "config.json")
        cfg.write_text(json.dumps(config(server.openai_base_url, agents, rounds, concurrency)))
        env = {**os.environ, "OPENAI_API_KEY": "bench", "DIALECTIC_HOME": tmp}
        started = time.perf_counter()
        subprocess.run(
            [dialectic, "debate", "Design a rate limiter for a public API", "-c", str(cfg), "-o", f"{tmp}/out.json"],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wall = time.perf_counter() - started
        state = json.loads(Path(tmp, "out.json").read_text())
    contributions = [c for r in state["rounds"] for c in r["contributions"]]
    prompt_tokens = sum(c["metadata"].get("inputTokens", 0) for c in contributions)
    prompt_tokens += state["finalSolution"]["metadata"].get("inputTokens", 0)
    return {"wall_s": wall, "calls": server.call_count, "prompt_tokens": prompt_tokens}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per call (default 0.5)")
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"{args.agents} agents × {args.rounds} rounds, {args.latency:.2f} s per call")
    print(f"{'maxConcurrency':>15} {'wall s':>8} {'calls':>6} {'prompt tokens':>14}")
    results = {}
    for concurrency in (4, 1):
        r = run_once(args.latency, args.agents, args.rounds, concurrency)
        results[concurrency] = r
        print(f"{concurrency:>15} {r['wall_s']:>8.2f} {r['calls']:>6} {r['prompt_tokens']:>14}")
    print(f"speed-up from overlapping calls: {results[1]['wall_s'] / results[4]['wall_s']:.2f}×")


if __name__ == "__main__":
    main()
