"""Two ``dialectic resume ID`` started at the same moment: does exactly one of them run?

Makes one debate (3 agents × 2 rounds by default) that was interrupted before it saved
anything: Ctrl-C while the fake OpenAI-compatible server holds its first calls. Then, for
every trial, copies that store and starts two ``dialectic resume ID`` on it at once, against
the fake server with a fixed per-call latency. A trial counts as "exactly one ran" when one
run exits 0, the other exits 2 naming the first one's pid, and the debate ends with the
contributions, calls and single synthesis of a clean, uninterrupted run.

    .venv/bin/python benchmarks/two_runners.py [--trials 10] [--latency 0.05] [--agents 3] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import ScriptedReply, default_reply
from dialectic.store import open_store
from dialectic.testing.fake_server import FakeLLMServer

ROLES = ("architect", "performance", "kiss", "security", "testing")
PROBLEM = "Design a rate limiter for a public API"
COMPLETION_PATHS = ("/v1/responses", "/v1/chat/completions")
SYNTHESIS_SCHEMA = "SynthesisOutput"
DEADLINE_S = 120.0


class Model:
    """The fake server's responder: counts syntheses, and holds every call while the gate is closed."""

    def __init__(self) -> None:
        self.syntheses = 0
        self._lock = threading.Lock()
        self._open = threading.Event()
        self._open.set()

    def close_gate(self) -> None:
        self._open.clear()

    def open_gate(self) -> None:
        self._open.set()

    def respond(self, request: CompletionRequest) -> ScriptedReply:
        self._open.wait(timeout=DEADLINE_S)
        if request.json_schema is not None and request.json_schema.name == SYNTHESIS_SCHEMA:
            with self._lock:
                self.syntheses += 1
        return default_reply(request)


@dataclass(frozen=True)
class Outcome:
    exit_codes: tuple[int, int]
    loser_named_owner: bool
    contributions: int
    calls: int
    syntheses: int
    status: str


def config(url: str, agents: int, rounds: int) -> dict[str, object]:
    def member(index: int, role: str) -> dict[str, object]:
        return {"id": f"a{index}", "name": role.title(), "role": role, "provider": "openai", "baseUrl": url}

    judge = {"id": "judge", "name": "Judge", "role": "generalist", "provider": "openai", "baseUrl": url}
    return {
        "agents": [member(i, role) for i, role in enumerate(ROLES[:agents])],
        "judge": judge,
        "debate": {"rounds": rounds},
    }


def completions(server: FakeLLMServer) -> int:
    return sum(1 for path in server.paths() if path in COMPLETION_PATHS)


def saved(store_dir: Path) -> tuple[str, int]:
    """The only debate's status and how many contributions it holds."""
    with open_store(store_dir, create=False) as store:
        (listing,) = store.list()
        state = store.load(listing.id)
    return state.status, len(state.all_contributions())


def interrupted_debate(dialectic: list[str], env: dict[str, str], cfg: Path, store_dir: Path, model: Model) -> str:
    """Start a debate, and Ctrl-C it as soon as it exists (its calls held), so nothing but its creation is saved."""
    model.close_gate()
    run = subprocess.Popen(
        [*dialectic, "debate", PROBLEM, "-c", str(cfg), "--store", str(store_dir)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + DEADLINE_S
    debate_id = None
    while debate_id is None:
        if time.monotonic() > deadline or run.poll() is not None:
            raise SystemExit("could not create the debate to resume")
        if (store_dir / "debates.sqlite3").exists():
            with open_store(store_dir, create=False) as store:
                listed = store.list()
                if listed:
                    debate_id = listed[0].id
        time.sleep(0.02)
    run.send_signal(signal.SIGINT)
    run.wait(timeout=DEADLINE_S)
    model.open_gate()
    return debate_id


def trial(
    dialectic: list[str], env: dict[str, str], debate_id: str, store_dir: Path, server: FakeLLMServer, model: Model
) -> Outcome:
    calls_before, syntheses_before = completions(server), model.syntheses
    command = [*dialectic, "resume", debate_id, "--store", str(store_dir)]
    runs = [
        subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    errors = [run.communicate(timeout=DEADLINE_S)[1] for run in runs]
    codes = (runs[0].returncode, runs[1].returncode)
    named = any(
        codes[i] == 2 and f"is being run by pid {runs[1 - i].pid} " in errors[i] and codes[1 - i] == 0 for i in range(2)
    )
    status, contributions = saved(store_dir)
    return Outcome(
        exit_codes=codes,
        loser_named_owner=named,
        contributions=contributions,
        calls=completions(server) - calls_before,
        syntheses=model.syntheses - syntheses_before,
        status=status,
    )


def row(*cells: object) -> str:
    widths = (5, 10, 17, 13, 5, 9)
    return " ".join(f"{cell!s:>{width}}" for cell, width in zip(cells, widths, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per call (default 0.05)")
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    executable = shutil.which("dialectic") or str(Path(sys.executable).with_name("dialectic"))
    dialectic = [executable]
    model = Model()
    with FakeLLMServer(model.respond, latency_s=args.latency) as server, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cfg = root / "config.json"
        cfg.write_text(json.dumps(config(server.openai_base_url, args.agents, args.rounds)), encoding="utf-8")
        env = {**os.environ, "OPENAI_API_KEY": "bench", "DIALECTIC_HOME": str(root / "home")}

        calls_before, syntheses_before = completions(server), model.syntheses
        clean_dir = root / "clean"
        subprocess.run(
            [*dialectic, "debate", PROBLEM, "-c", str(cfg), "--store", str(clean_dir)],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        clean_calls, clean_syntheses = completions(server) - calls_before, model.syntheses - syntheses_before
        _, clean_contributions = saved(clean_dir)

        seed = root / "seed"
        debate_id = interrupted_debate(dialectic, env, cfg, seed, model)
        print(
            f"{args.agents} agents × {args.rounds} rounds, {args.latency:.2f} s per call; a clean run: "
            f"{clean_contributions} contributions, {clean_calls} calls, {clean_syntheses} synthesis"
        )
        print(row("trial", "exit codes", "loser named owner", "contributions", "calls", "syntheses"))
        outcomes: list[Outcome] = []
        for number in range(1, args.trials + 1):
            store_dir = root / f"trial-{number}"
            shutil.copytree(seed, store_dir)
            outcome = trial(dialectic, env, debate_id, store_dir, server, model)
            outcomes.append(outcome)
            codes = ",".join(str(code) for code in sorted(outcome.exit_codes))
            named = "yes" if outcome.loser_named_owner else "no"
            print(row(number, codes, named, outcome.contributions, outcome.calls, outcome.syntheses))

    exactly_one = sum(
        1
        for o in outcomes
        if o.loser_named_owner
        and o.status == "completed"
        and (o.contributions, o.calls, o.syntheses) == (clean_contributions, clean_calls, clean_syntheses)
    )
    counts = sorted({o.contributions for o in outcomes})
    print(f"trials: {len(outcomes)}")
    print(f"exactly one ran (other exit 2 naming the owner, clean-run figures): {exactly_one}/{len(outcomes)}")
    print(f"contribution counts seen: {', '.join(str(c) for c in counts)} (clean run: {clean_contributions})")
    print(f"synthesis calls per trial: {', '.join(str(o.syntheses) for o in outcomes)}")


if __name__ == "__main__":
    main()
