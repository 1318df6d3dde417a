"""Trust figures: debates under injected faults, and SIGKILL at a random moment then resume.

``faults``: N debates (3 agents × 2 rounds) through the installed command against the fake
server failing a share of its calls (429 with Retry-After, 500, stalled replies past the
per-call timeout, dropped connections; seeded), at each rate given. Prints, per rate, how many
completed, their contributions (24 in a clean run), agents dropped and faults served.

``kills``: N trials of ``dialectic debate`` killed with SIGKILL at a random moment of its run,
then ``dialectic resume ID``. Per trial: does it complete, and how many calls did the resume
make against what was still missing (``clean calls − saved results``): a larger number means
a saved call was repeated.

    .venv/bin/python benchmarks/trust.py faults --debates 10 --rates 0.2,0.4
    .venv/bin/python benchmarks/trust.py kills --trials 30
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dialectic.core.domain import DebateState
from dialectic.testing.fake_server import FakeLLMServer

DIALECTIC = str(Path(sys.executable).parent / "dialectic")
PROBLEM = "Design a rate limiter for a public API"
ROLES = ("architect", "performance", "security")
FAST_RETRY = {"baseDelayMs": 50, "maxDelayMs": 400, "jitterMs": 50, "maxRetryAfterMs": 500}
ID = re.compile(r"deb-\d{8}-\d{6}-[0-9A-F]{4}")


def config_file(directory: Path, server: FakeLLMServer, **agent: Any) -> Path:
    endpoint = {"provider": "openai", "baseUrl": server.openai_base_url, "model": "fake", **agent}
    data = {
        "agents": [{"id": f"agent-{r}", "name": r.title(), "role": r, **endpoint} for r in ROLES],
        "judge": {"id": "judge", "name": "Judge", "role": "generalist", **endpoint},
        "debate": {"rounds": 2, "retry": FAST_RETRY},
    }
    path = directory / "config.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def environment(home: Path) -> dict[str, str]:
    return {**os.environ, "DIALECTIC_HOME": str(home), "OPENAI_API_KEY": "trust"}


def export(debate_id: str, env: dict[str, str]) -> DebateState:
    out = subprocess.run([DIALECTIC, "export", debate_id], env=env, capture_output=True, text=True, check=True)
    return DebateState.model_validate(json.loads(out.stdout))


def llm_results(state: DebateState) -> int:
    """Saved records that came from an LLM call (each must never be asked for again)."""
    count = sum(1 for c in state.all_contributions() if c.ok and not c.metadata.carried_over)
    count += sum(len(r.summaries) for r in state.rounds)
    count += sum(1 for r in state.rounds if r.evaluation is not None)
    count += 1 if state.judge_summary is not None else 0
    count += 1 if state.final_solution is not None else 0
    return count


def faults(debates: int, rates: list[float]) -> None:
    print("| fault rate | completed | contributions (clean: 24) | agents dropped | faults served | exit codes |")
    print("|--:|--:|---|--:|--:|---|")
    for rate in rates:
        completed, counts, dropped, served, codes = 0, [], 0, 0, []
        for seed in range(1, debates + 1):
            with (
                tempfile.TemporaryDirectory() as tmp,
                FakeLLMServer(fault_rate=rate, seed=seed, stall_s=10.0, retry_after_s=0.2) as server,
            ):
                env = environment(Path(tmp) / "home")
                config = config_file(Path(tmp), server, timeout=2000)
                run = subprocess.run(
                    [DIALECTIC, "debate", PROBLEM, "-c", str(config)], env=env, capture_output=True, text=True
                )
                codes.append(run.returncode)
                served += sum(server.faults_served.values())
                found = ID.search(run.stderr)
                if run.returncode == 0 and found:
                    state = export(found.group(0), env)
                    completed += state.status == "completed"
                    counts.append(len(state.all_contributions()))
                    dropped += len(state.dropped)
        spread = f"{min(counts)}–{max(counts)}" if counts else "—"
        print(f"| {rate:.0%} | {completed}/{debates} | {spread} | {dropped} | {served} | {sorted(set(codes))} |")


def kills(trials: int, seed: int) -> None:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp, FakeLLMServer(latency_s=0.15, latency_sigma=0.3, seed=seed) as server:
        work = Path(tmp)
        config = config_file(work, server)
        env = environment(work / "clean")
        before = server.call_count
        started = time.monotonic()
        subprocess.run([DIALECTIC, "debate", PROBLEM, "-c", str(config)], env=env, capture_output=True, check=True)
        clean_wall, clean_calls = time.monotonic() - started, server.call_count - before
        print(f"clean run: {clean_calls} calls, {clean_wall:.1f} s\n")
        print("| trial | killed after s | saved results | resume calls | missing | completed | repeated |")
        print("|--:|--:|--:|--:|--:|---|--:|")
        complete = repeated_total = before_creation = finished_first = 0
        for trial in range(1, trials + 1):
            env = environment(work / f"trial-{trial}")
            delay = rng.uniform(0.2, clean_wall * 0.95)
            process = subprocess.Popen(
                [DIALECTIC, "debate", PROBLEM, "-c", str(config)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            time.sleep(delay)
            process.send_signal(signal.SIGKILL)
            _, err = process.communicate()
            listing = subprocess.run([DIALECTIC, "list", "--json"], env=env, capture_output=True, text=True)
            rows = json.loads(listing.stdout or "[]")
            if not rows:
                print(f"| {trial} | {delay:.2f} | — | — | — | killed before the debate was created | — |")
                before_creation += 1
                continue
            debate_id = rows[0]["id"]
            killed = export(debate_id, env)
            if killed.status == "completed":  # the kill came after the debate had finished: nothing to resume
                print(f"| {trial} | {delay:.2f} | — | — | — | finished before the kill | — |")
                finished_first += 1
                continue
            saved = llm_results(killed)
            before = server.call_count
            resumed = subprocess.run([DIALECTIC, "resume", debate_id], env=env, capture_output=True, text=True)
            calls = server.call_count - before
            final = export(debate_id, env)
            done = resumed.returncode == 0 and final.status == "completed"
            missing = clean_calls - saved
            repeated = max(0, calls - missing)
            complete += done
            repeated_total += repeated
            print(f"| {trial} | {delay:.2f} | {saved} | {calls} | {missing} | {done} | {repeated} |")
        resumed_trials = trials - before_creation - finished_first
        print(
            f"\n{complete}/{resumed_trials} killed debates completed on resume; saved calls repeated: "
            f"{repeated_total}; {before_creation} trial(s) killed before the debate existed and {finished_first} "
            "after it had finished (nothing to resume)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    f = sub.add_parser("faults")
    f.add_argument("--debates", type=int, default=10)
    f.add_argument("--rates", default="0.2,0.4")
    k = sub.add_parser("kills")
    k.add_argument("--trials", type=int, default=30)
    k.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.what == "faults":
        faults(args.debates, [float(r) for r in args.rates.split(",")])
    else:
        kills(args.trials, args.seed)


if __name__ == "__main__":
    main()
