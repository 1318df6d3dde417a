"""What a huge number costs the installed command: its exit code, peak RSS and wall time.

Runs ``dialectic`` on the numbers that used to take the machine (``batch -k 1000000000`` grew to
15.5 GB in 3 minutes) and their siblings, against the fake OpenAI-compatible server, each under a
safety cap on its address space (``--cap-mb``, default 2048: a regression fails here instead of
swapping), and prints one row per command: the exit code, the peak RSS of the process
(``wait4``'s ``ru_maxrss``) and the wall time. The goal: exit 2 at once, or a run with no more
workers than work, under 300 MB.

    .venv/bin/python benchmarks/hostile_numbers.py [--cap-mb 2048]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dialectic.testing.fake_server import FakeLLMServer

HUGE = "1000000000"
GOAL_MB = 300


def config(url: str) -> dict[str, object]:
    def member(ident: str, role: str) -> dict[str, object]:
        return {"id": ident, "name": role.title(), "role": role, "provider": "openai", "model": "fake", "baseUrl": url}

    return {
        "agents": [member("a1", "architect"), member("a2", "security")],
        "judge": member("judge", "generalist"),
        "debate": {"rounds": 1},
    }


COMMANDS: list[tuple[str, ...]] = [
    ("batch", "problems.jsonl", "-k", HUGE),
    ("batch", "problems.jsonl", "-k", "1000", "-o", "out.jsonl"),
    ("bench", "arithmetic", "--concurrency", HUGE, "--provider", "scripted", "-n", "3"),
    ("bench", "arithmetic", "--concurrency", "1000", "--provider", "scripted", "-n", "3", "--arms", "single"),
    ("bench", "arithmetic", "-n", HUGE, "--provider", "scripted"),
    ("list", "--limit", str(10**30)),
    ("memory", "list", "--limit", str(10**30)),
    ("debate", "Design a cache", "--rounds", HUGE),
    ("debate", "Design a cache", "--budget-tokens", str(10**30)),
]


def run(executable: str, args: tuple[str, ...], cwd: Path, env: dict[str, str], cap: int) -> tuple[int, float, float]:
    """Exit code, peak RSS in MB and wall seconds of ``dialectic *args``."""

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    began = time.monotonic()
    process = subprocess.Popen(
        [executable, *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=limited,
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - began
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, usage.ru_maxrss / 1024, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cap-mb", type=int, default=2048, help="address-space cap of each command (safety)")
    args = parser.parse_args()
    executable = shutil.which("dialectic", path=str(Path(sys.executable).parent)) or "dialectic"
    work = Path(tempfile.mkdtemp(prefix="hostile-numbers-"))
    try:
        with FakeLLMServer() as server:
            (work / "debate-config.json").write_text(json.dumps(config(server.openai_base_url)), encoding="utf-8")
            problems = [json.dumps({"id": f"p{i}", "problem": f"Design cache {i}"}) for i in range(3)]
            (work / "problems.jsonl").write_text("\n".join(problems) + "\n", encoding="utf-8")
            env = {**os.environ, "DIALECTIC_HOME": str(work / "home"), "OPENAI_API_KEY": "test-key"}
            print(f"{'command':<88} {'exit':>4} {'RSS MB':>7} {'wall s':>7}")
            worst = 0.0
            for command in COMMANDS:
                code, rss, wall = run(executable, command, work, env, args.cap_mb * 1024 * 1024)
                worst = max(worst, rss)
                print(f"{'dialectic ' + ' '.join(command):<88} {code:>4} {rss:>7.1f} {wall:>7.2f}")
            print(f"largest peak RSS: {worst:.1f} MB (goal: under {GOAL_MB} MB)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
