"""How fast a debate runs end to end: ``dialectic debate`` as a subprocess against the fake server.

For 3 agents × 3 rounds and 5 agents × 3 rounds, with per-call latency 300 ms × lognormal
σ 0.5 (seeded) and ~150-word replies, over several seeds, it prints per workload:

* wall time of the whole command (median, min–max), calls, prompt tokens;
* time from process start to the first LLM request, and from the last reply to process exit;
* CPU per call of the ``dialectic`` process;
* wall ÷ the critical-path bound: the longest chain of the debate's own saved call latencies
  through its dependency graph (``dialectic.engine.dataflow``) — what a scheduler with no
  round barriers could reach.

Then, at zero latency: CPU per debate for 1, 3 and 8 rounds (the slope is the marginal CPU per
call) and the time one store append takes as the debate grows; and ``dialectic --help`` wall.
``--profile`` runs one 3×3 debate under cProfile and prints where the time outside calls goes;
``--growth`` prints only how the prompt tokens grow from 3 to 6 rounds (summaries included).
``--version`` wall time and the SDKs a debate imports (``python -X importtime``: none) come with the figures.

``--llama`` runs, on the real ``llama-server`` (``make llama-server``'s cached binary, the embedded 0.5B
model, niced), a 3×3 critique-refine debate with the prompt-cache settings on and then off
(``DIALECTIC_PROMPT_CACHE``; each on a fresh server) and prints the share of prompt tokens the server
served from its cache (its own ``usage.prompt_tokens_details.cached_tokens``) and both wall times.

``--baseline DIR`` measures another source tree (a ``src`` directory, e.g. the branch base unpacked
by ``git archive HEAD src | tar -x -C /tmp/base``) in the same invocation: every measurement runs
for this tree and the baseline in turn, alternating which goes first, and the figures come out side
by side with their ratio (this ÷ baseline). Each tree runs as ``python -m dialectic`` with its own
``src`` first on ``PYTHONPATH`` and its own bytecode cache (``PYTHONPYCACHEPREFIX`` in the work
directory, ``PYTHONDONTWRITEBYTECODE`` dropped), warmed by one debate before anything is timed: the
figures are those of an installed program, not of one that compiles its sources at every start.

    .venv/bin/python benchmarks/speed.py            # the figures, with the targets beside them
    .venv/bin/python benchmarks/speed.py --baseline /tmp/base/src  # this tree against another
    .venv/bin/python benchmarks/speed.py --profile  # where the non-call time goes
    .venv/bin/python benchmarks/speed.py --llama    # the prompt cache on a real llama-server, on against off
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pstats
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dialectic.core.domain import DebateState
from dialectic.engine.dataflow import critical_path
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import ScriptedReply, default_reply
from dialectic.testing.fake_server import FakeLLMServer

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = "Design a rate limiter for a public HTTP API serving 10k requests per second across 20 nodes."
ROLES = ("architect", "performance", "kiss", "security", "testing")
WORDS = (
    "the design keeps a token bucket per client in a shared store with local caches and periodic "
    "reconciliation so that bursts are absorbed while the global limit holds within a small error bound "
).split()

TARGETS = {
    "3x3 wall (s)": 3.6,
    "5x3 wall (s)": 5.4,
    "wall / critical path": 1.10,
    "first request (s)": 0.30,
    "after last reply (s)": 0.10,
    "--help wall (s)": 0.35,
    "--version wall (s)": 0.12,
    "marginal CPU per call (ms)": 2.5,
    "prompt tokens 3x6 / 3x3": 2.2,
}


def reply_of_150_words(request: CompletionRequest) -> ScriptedReply:
    """~150-word replies (structured requests get their schema-shaped value)."""
    if request.json_schema is not None:
        return default_reply(request)
    seed = sum(map(ord, request.last_user[-200:])) % len(WORDS)
    words = [WORDS[(seed + i) % len(WORDS)] for i in range(150)]
    return ScriptedReply(text=" ".join(words).capitalize() + ".")


def write_config(directory: Path, server: FakeLLMServer, agents: int, rounds: int) -> Path:
    endpoint = {"provider": "openai", "baseUrl": server.openai_base_url, "model": "fake-model"}
    config = {
        "agents": [{"id": f"agent-{role}", "name": role.title(), "role": role, **endpoint} for role in ROLES[:agents]],
        "judge": {"id": "judge", "name": "Judge", "role": "generalist", **endpoint},
        "debate": {"rounds": rounds},
    }
    path = directory / f"config-{agents}x{rounds}.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


@dataclass(frozen=True)
class Tree:
    """A source tree to measure: ``dialectic`` run from ``src`` with a bytecode cache of its own."""

    label: str
    src: Path
    pycache: Path

    def command(self, *argv: str) -> list[str]:
        return [sys.executable, "-m", "dialectic", *argv]

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        paths = [str(self.src), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
        return {**env, "PYTHONPATH": os.pathsep.join(paths), "PYTHONPYCACHEPREFIX": str(self.pycache), **extra}


def trees_for(work: Path, baseline: Path | None) -> list[Tree]:
    trees = [Tree("this tree", ROOT / "src", work / "pycache-this")]
    if baseline is not None:
        trees.append(Tree("baseline", baseline.resolve(), work / "pycache-baseline"))
    return trees


def in_turn(trees: list[Tree], index: int) -> list[Tree]:
    """The trees in the order run ``index`` takes them: alternating which goes first, so a drift in
    the machine's load falls on both."""
    return trees if index % 2 == 0 else trees[::-1]


def warm_up(trees: list[Tree], work: Path) -> None:
    """One zero-latency debate per tree, untimed, so that every timed run finds its bytecode cached."""
    with FakeLLMServer(reply_of_150_words) as server:
        config = write_config(work, server, 3, 1)
        for tree in trees:
            run_debate(server, config, work / f"home-warm-{tree.pycache.name}", tree)
            subprocess.run(tree.command("--help"), env=tree.env(), capture_output=True, check=True)


@dataclass
class Run:
    wall: float
    cpu: float
    calls: int
    prompt_tokens: int
    first_request: float
    after_last_reply: float
    bound: float
    summary_tokens: int = 0

    @property
    def debate_phase(self) -> float:
        """First request sent → last reply received: the part a scheduler can shorten."""
        return self.wall - self.first_request - self.after_last_reply


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def prompt_tokens(state: DebateState) -> int:
    total = sum(c.metadata.input_tokens or 0 for c in state.all_contributions())
    total += sum(s.metadata.input_tokens or 0 for r in state.rounds for s in r.summaries.values())
    if state.judge_summary is not None:
        total += state.judge_summary.metadata.input_tokens or 0
    if state.final_solution is not None:
        total += state.final_solution.metadata.input_tokens or 0
    return total


def run_debate(server: FakeLLMServer, config: Path, home: Path, tree: Tree) -> Run:
    env = tree.env(DIALECTIC_HOME=str(home), OPENAI_API_KEY="bench")
    requests_before, answers_before, calls_before = len(server.requests), len(server.answered_at), server.call_count
    cpu_before = child_cpu()
    started = time.monotonic()
    result = subprocess.run(
        tree.command("debate", PROBLEM, "-c", str(config)),
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    ended = time.monotonic()
    cpu = child_cpu() - cpu_before
    if result.returncode != 0:
        raise SystemExit(f"dialectic debate failed ({result.returncode}): {result.stderr[-2000:]}")
    requests = [r for r in server.requests[requests_before:] if r.path != "/v1/models"]
    answered = server.answered_at[answers_before:]
    found = re.search(r"Debate (deb-\d{8}-\d{6}-[0-9A-F]{4}) saved", result.stderr)
    debate_id = found.group(1) if found else ""
    export = subprocess.run(
        tree.command("export", debate_id), env=env, capture_output=True, text=True, check=True
    ).stdout
    state = DebateState.model_validate(json.loads(export))
    return Run(
        wall=ended - started,
        cpu=cpu,
        calls=server.call_count - calls_before,
        prompt_tokens=prompt_tokens(state),
        summary_tokens=summary_prompt_tokens(state),
        first_request=min(r.received_at for r in requests) - started,
        after_last_reply=ended - max(answered),
        bound=critical_path(state),
    )


def spread(values: list[float], unit: str = "", digits: int = 2) -> str:
    return f"{statistics.median(values):.{digits}f}{unit} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def workload(
    agents: int, rounds: int, seeds: int, latency: float, sigma: float, work: Path, trees: list[Tree]
) -> dict[Tree, list[Run]]:
    """Per tree, one debate per seed; with several trees each seed's server answers them in turn."""
    runs: dict[Tree, list[Run]] = {tree: [] for tree in trees}
    for seed in range(1, seeds + 1):
        for tree in in_turn(trees, seed):
            with FakeLLMServer(reply_of_150_words, latency_s=latency, latency_sigma=sigma, seed=seed) as server:
                config = write_config(work, server, agents, rounds)
                home = work / f"home-{agents}x{rounds}-{seed}-{tree.pycache.name}"
                runs[tree].append(run_debate(server, config, home, tree))
    return runs


def help_wall(trees: list[Tree], times: int = 5, flag: str = "--help") -> dict[Tree, list[float]]:
    """The wall time of ``dialectic FLAG`` (``--help``, ``--version``) per tree, ``times`` runs each."""
    walls: dict[Tree, list[float]] = {tree: [] for tree in trees}
    for index in range(times):
        for tree in in_turn(trees, index):
            started = time.monotonic()
            subprocess.run(tree.command(flag), env=tree.env(), capture_output=True, check=True)
            walls[tree].append(time.monotonic() - started)
    return walls


SDKS = ("openai", "anthropic")


def sdks_imported(tree: Tree, work: Path) -> list[str]:
    """The SDKs ``python -X importtime -m dialectic debate`` loads for a 3×1 debate on the fake server."""
    with FakeLLMServer(reply_of_150_words) as server:
        config = write_config(work, server, 3, 1)
        env = tree.env(DIALECTIC_HOME=str(work / f"home-imports-{tree.pycache.name}"), OPENAI_API_KEY="bench")
        result = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "dialectic", "debate", PROBLEM, "-c", str(config)],
            env=env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            check=True,
        )
    names = {line.split("|")[2].strip() for line in result.stderr.splitlines() if line.count("|") == 2}
    return sorted(sdk for sdk in SDKS if sdk in names)


@dataclass
class Slope:
    """CPU of whole debates at zero latency for 1, 3 and 8 rounds (per repeat), and the least-squares
    CPU per call of each repeat."""

    points: list[list[tuple[int, int, float]]]
    slopes: list[float]


def least_squares(points: list[tuple[int, int, float]]) -> float:
    xs, ys = [p[1] for p in points], [p[2] for p in points]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / sum((x - mean_x) ** 2 for x in xs)


def cpu_slope(work: Path, trees: list[Tree], repeats: int = 1) -> dict[Tree, Slope]:
    """CPU of whole debates at zero latency for 1, 3 and 8 rounds, and the least-squares CPU per call."""
    found = {tree: Slope([], []) for tree in trees}
    with FakeLLMServer(reply_of_150_words) as server:
        for repeat in range(repeats):
            points: dict[Tree, list[tuple[int, int, float]]] = {tree: [] for tree in trees}
            for index, rounds in enumerate((1, 3, 8)):
                config = write_config(work, server, 3, rounds)
                for tree in in_turn(trees, repeat + index):
                    run = run_debate(server, config, work / f"home-cpu-{rounds}-{repeat}-{tree.pycache.name}", tree)
                    points[tree].append((rounds, run.calls, run.cpu))
            for tree in trees:
                found[tree].points.append(points[tree])
                found[tree].slopes.append(least_squares(points[tree]))
    return found


def append_cost(work: Path) -> list[tuple[int, int, float]]:
    """Mean milliseconds per store append for in-process debates of 1, 3 and 8 rounds (SQLite store)."""
    from dialectic.engine import DebateEngine, DebateRequest
    from dialectic.llm.registry import ProviderPool
    from dialectic.llm.scripted import ScriptedProvider
    from dialectic.store import SqliteStore
    from dialectic.testing.harness import FAST_RETRY, make_config

    rows = []
    for rounds in (1, 3, 8):
        store = SqliteStore(work / f"append-{rounds}.sqlite3")
        timings: list[float] = []
        inner = store.append

        def timed(
            debate_id: str, *changes: Any, inner: Any = inner, timings: list[float] = timings, **kwargs: Any
        ) -> None:
            started = time.perf_counter()
            inner(debate_id, *changes, **kwargs)
            timings.append(time.perf_counter() - started)

        store.append = timed  # type: ignore[method-assign]
        engine = DebateEngine(store, ProviderPool(overrides={"scripted": ScriptedProvider()}), retry=FAST_RETRY)
        config = make_config(agents=3, rounds=rounds)
        asyncio.run(engine.start(DebateRequest(problem=PROBLEM, config=config, config_dir=ROOT)))
        half = len(timings) // 2
        rows.append((rounds, len(timings), 1000 * statistics.fmean(timings[half:])))
        store.close()
    return rows


def summary_prompt_tokens(state: DebateState) -> int:
    return sum(s.metadata.input_tokens or 0 for r in state.rounds for s in r.summaries.values())


def summary_growth(work: Path, tree: Tree) -> list[tuple[int, int, int, int]]:
    """Prompt tokens of whole 3-agent debates of 3 and 6 rounds at zero latency (default summarization):
    (rounds, calls, prompt tokens, of them the summaries' prompt tokens)."""
    rows = []
    with FakeLLMServer(reply_of_150_words) as server:
        for rounds in (3, 6):
            config = write_config(work, server, 3, rounds)
            home = work / f"home-growth-{rounds}-{tree.pycache.name}"
            run = run_debate(server, config, home, tree)
            rows.append((rounds, run.calls, run.prompt_tokens, run.summary_tokens))
    return rows


def print_growth(rows: list[tuple[int, int, int, int]], summary: dict[str, float]) -> None:
    print("\nPrompt growth, 3 agents, default summarization (summaries update the last one incrementally)")
    for rounds, calls, tokens, summaries in rows:
        print(
            f"- {rounds} rounds: {calls} calls, {tokens:,} prompt tokens, {summaries:,} of them summaries' "
            f"({100 * summaries / tokens:.0f}%)"
        )
    summary["prompt tokens 3x6 / 3x3"] = rows[1][2] / rows[0][2]


def verdict(name: str, value: float) -> str:
    target = TARGETS[name]
    return f"{'met' if value <= target else 'NOT met'} (target ≤ {target})"


def report(seeds: int, latency: float, sigma: float, baseline: Path | None, cpu_repeats: int) -> None:
    with tempfile.TemporaryDirectory(prefix="dialectic-speed-") as tmp:
        work = Path(tmp)
        trees = trees_for(work, baseline)
        warm_up(trees, work)
        print(f"# dialectic speed — {seeds} seeds, latency {latency * 1000:.0f} ms × lognormal σ {sigma}\n")
        for tree in trees:
            print(f"- {tree.label}: {tree.src}")
        print(
            "\n| workload | tree | wall s | calls | prompt tokens | first request s | after last reply s "
            "| CPU/call ms | wall ÷ critical path | debate phase ÷ critical path |"
        )
        print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
        summaries: dict[Tree, dict[str, float]] = {tree: {} for tree in trees}
        for agents, rounds in ((3, 3), (5, 3)):
            measured = workload(agents, rounds, seeds, latency, sigma, work, trees)
            for tree, runs in measured.items():
                summary = summaries[tree]
                ratio = [r.wall / r.bound for r in runs]
                print(
                    f"| {agents}×{rounds} | {tree.label} | {spread([r.wall for r in runs])} | {runs[0].calls} "
                    f"| {statistics.median([r.prompt_tokens for r in runs]):,.0f} "
                    f"| {spread([r.first_request for r in runs])} | {spread([r.after_last_reply for r in runs])} "
                    f"| {spread([1000 * r.cpu / r.calls for r in runs], digits=1)} | {spread(ratio)} "
                    f"| {spread([r.debate_phase / r.bound for r in runs])} |"
                )
                summary[f"{agents}x{rounds} wall (s)"] = statistics.median([r.wall for r in runs])
                summary["wall / critical path"] = max(summary.get("wall / critical path", 0), statistics.median(ratio))
                summary["first request (s)"] = max(
                    summary.get("first request (s)", 0), statistics.median([r.first_request for r in runs])
                )
                summary["after last reply (s)"] = max(
                    summary.get("after last reply (s)", 0), statistics.median([r.after_last_reply for r in runs])
                )
        slopes = cpu_slope(work, trees, cpu_repeats)
        walls = help_wall(trees)
        versions = help_wall(trees, flag="--version")
        for tree in trees:
            summaries[tree]["marginal CPU per call (ms)"] = 1000 * statistics.median(slopes[tree].slopes)
            summaries[tree]["--help wall (s)"] = statistics.median(walls[tree])
            summaries[tree]["--version wall (s)"] = statistics.median(versions[tree])
        print("\nSDKs that `python -X importtime -m dialectic debate` (OpenAI-compatible endpoint) imports")
        for tree in trees:
            print(f"- {tree.label}: {', '.join(sdks_imported(tree, work)) or 'none'}")
        print(f"\nZero latency, 3 agents: CPU per debate ({cpu_repeats} repeat(s); per call: median of the slopes)")
        for tree in trees:
            found = slopes[tree]
            for rounds, calls, _ in found.points[0]:
                cpus = [points[[p[0] for p in points].index(rounds)][2] for points in found.points]
                cpu = statistics.median(cpus)
                print(
                    f"- {tree.label}, {rounds} round(s): {calls} calls, {cpu:.2f} s CPU "
                    f"({1000 * cpu / calls:.1f} ms per call)"
                )
            print(
                f"- {tree.label}, marginal CPU per call (least squares): "
                f"{spread([1000 * s for s in found.slopes], ' ms', 1)}"
            )
        print("\nStore append (SQLite, this tree), mean of the second half of each debate's appends")
        for rounds, appends, ms in append_cost(work):
            print(f"- {rounds} round(s): {appends} appends, {ms:.3f} ms per append")
        for tree in trees:
            if len(trees) > 1:
                print(f"\n## {tree.label}")
            print_growth(summary_growth(work, tree), summaries[tree])
        print("\nTargets")
        first = summaries[trees[0]]
        for name, value in first.items():
            line = f"- {name}: {value:.2f} — {verdict(name, value)}"
            if len(trees) > 1:
                before = summaries[trees[1]][name]
                line += f"; baseline {before:.2f} ({verdict(name, before)}), this ÷ baseline {value / before:.2f}"
            print(line)


DEBATE_IMPORTS = ("dialectic.cli.app", "dialectic.cli.debate_run", "dialectic.llm.openai_provider")
"""What ``dialectic debate`` on an OpenAI-compatible endpoint imports before its first request."""


def profile(latency: float, sigma: float) -> None:
    """One 3×3 debate under cProfile; the top functions by own time, waiting excluded."""
    with tempfile.TemporaryDirectory(prefix="dialectic-profile-") as tmp:
        work = Path(tmp)
        tree = trees_for(work, None)[0]
        warm_up([tree], work)
        with FakeLLMServer(reply_of_150_words, latency_s=latency, latency_sigma=sigma, seed=1) as server:
            config = write_config(work, server, 3, 3)
            env = tree.env(DIALECTIC_HOME=str(work / "home"), OPENAI_API_KEY="bench")
            out = work / "debate.prof"
            code = (
                "import sys, cProfile; from dialectic.cli.app import run; "
                f"cProfile.run('code = run(sys.argv[1:])', {str(out)!r})"
            )
            subprocess.run(
                [sys.executable, "-c", code, "debate", PROBLEM, "-c", str(config)],
                env=env,
                capture_output=True,
                check=True,
            )
        stats = pstats.Stats(str(out))
        waiting = ("select", "poll", "epoll", "sleep", "acquire", "wait")
        rows = [
            (tt, ct, f"{Path(file).name}:{line}({name})")
            for (file, line, name), (_, _, tt, ct, _) in stats.stats.items()  # type: ignore[attr-defined]
            if not any(w in name for w in waiting)
        ]
        total = sum(tt for tt, _, _ in rows)
        print(f"CPU outside waiting: {total:.2f} s. Top 25 by own time:")
        for tt, ct, where in sorted(rows, reverse=True)[:25]:
            print(f"  {tt:7.3f} s own  {ct:7.3f} s cumulative  {where}")
        imports = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import {', '.join(DEBATE_IMPORTS)}"],
            env=tree.env(),
            capture_output=True,
            text=True,
            check=True,
        ).stderr.splitlines()
        top = sorted(
            (
                (int(line.split("|")[1]), line.split("|")[2].rstrip())
                for line in imports
                if line.count("|") == 2 and line.split("|")[1].strip().isdigit()
            ),
            reverse=True,
        )[:10]
        print(f"\nSlowest imports of what `dialectic debate` loads before its first request ({DEBATE_IMPORTS[-1]}):")
        print("(cumulative µs, bytecode cached)")
        for micros, name in top:
            print(f"  {micros:>9,}  {name}")


CACHE = Path(os.environ.get("DIALECTIC_CACHE", Path.home() / ".cache" / "dialectic"))


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_llama_server(model: Path, slots: int, threads: int) -> tuple[subprocess.Popen[bytes], str]:
    """The cached ``llama-server`` (``make llama-server``) on a free port, niced, with ``slots`` slots of
    3,072 tokens; its ``/v1`` base URL once ``/health`` answers."""
    import urllib.request

    binaries = sorted((CACHE / "llama-server").glob("*/llama-server"))
    if not binaries:
        raise SystemExit("llama-server is not built: run make llama-server")
    port = free_port()
    command = [
        "nice", "-n", "10", str(binaries[-1]), "-m", str(model), "-a", model.stem, "--host", "127.0.0.1",
        "--port", str(port), "-c", str(3072 * slots), "-np", str(slots), "-t", str(threads), "-tb", str(threads),
        "--jinja", "--no-webui", "-n", "1024", "--poll", "0",
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
                if answer.status == 200:
                    return server, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.5)
    server.kill()
    raise SystemExit("llama-server did not become healthy within 120 s")


@dataclass(frozen=True)
class CacheRun:
    setting: str
    wall: float
    calls: int
    prompt_tokens: int
    cached_tokens: int

    @property
    def share(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


@dataclass(frozen=True)
class LlamaSetup:
    model: Path
    slots: int
    threads: int
    max_tokens: int
    agents: int = 3
    rounds: int = 3


def llama_debate(work: Path, setup: LlamaSetup, setting: str) -> CacheRun:
    """One critique-refine debate (3×3 unless told) on a fresh llama-server, ``DIALECTIC_PROMPT_CACHE`` = ``setting``;
    the cached share is the server's own ``usage.prompt_tokens_details.cached_tokens`` (the ledger keeps it)."""
    tree = trees_for(work, None)[0]
    server, base_url = start_llama_server(setup.model, setup.slots, setup.threads)
    try:
        endpoint = {
            "provider": "openai",
            "baseUrl": base_url,
            "model": setup.model.stem,
            "maxTokens": setup.max_tokens,
            "timeout": 900_000,  # a slow machine: a call may wait long for its slot, and that is no failure here
        }
        config = {
            "agents": [{"id": f"agent-{r}", "name": r.title(), "role": r, **endpoint} for r in ROLES[: setup.agents]],
            "judge": {"id": "judge", "name": "Judge", "role": "generalist", **endpoint},
            "debate": {"rounds": setup.rounds, "format": "critique-refine"},
        }
        path = work / f"llama-{setting}.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        home = work / f"home-llama-{setting}"
        env = tree.env(DIALECTIC_HOME=str(home), OPENAI_API_KEY="bench", DIALECTIC_PROMPT_CACHE=setting)
        started = time.monotonic()
        result = subprocess.run(
            tree.command("debate", PROBLEM, "-c", str(path)),
            env=env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        wall = time.monotonic() - started
    finally:
        server.terminate()
        server.wait(timeout=30)
    if result.returncode != 0:
        raise SystemExit(f"dialectic debate failed ({result.returncode}): {result.stderr[-2000:]}")
    found = re.search(r"Debate (deb-\d{8}-\d{6}-[0-9A-F]{4}) saved", result.stderr)
    export = subprocess.run(
        tree.command("export", found.group(1) if found else ""), env=env, capture_output=True, text=True, check=True
    ).stdout
    totals = json.loads(export)["totals"]
    return CacheRun(setting, wall, totals["calls"], totals["inputTokens"], totals["cachedInputTokens"])


def llama_report(setup: LlamaSetup) -> None:
    """A critique-refine debate on the real llama-server with the prompt-cache settings on, then off."""
    with tempfile.TemporaryDirectory(prefix="dialectic-llama-") as tmp:
        work = Path(tmp)
        warm_up(trees_for(work, None), work)
        runs = [llama_debate(work, setup, setting) for setting in ("on", "off")]
    print(
        f"# prompt cache on llama-server — {setup.agents}×{setup.rounds} critique-refine, {setup.model.name}, "
        f"{setup.slots} slots, {setup.threads} threads, maxTokens {setup.max_tokens}\n"
    )
    print("| caching settings | wall s | calls | prompt tokens | from cache (server's cached_tokens) |")
    print("|---|--:|--:|--:|--:|")
    for run in runs:
        print(
            f"| {run.setting} | {run.wall:.1f} | {run.calls} | {run.prompt_tokens:,} "
            f"| {run.cached_tokens:,} ({run.share:.0%}) |"
        )
    on, off = runs
    met = "met" if on.share >= 0.70 else "NOT met"
    print(f"\n- share from cache with the settings on: {on.share:.0%} — {met} (target ≥ 70%)")
    ratio = on.wall / off.wall
    print(f"- wall on ÷ off: {ratio:.2f} — {'met' if ratio <= 0.8 else 'NOT met'} (target ≤ 0.8)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--sigma", type=float, default=0.5)
    parser.add_argument("--profile", action="store_true", help="where the non-call time of one 3×3 debate goes")
    parser.add_argument("--growth", action="store_true", help="only the prompt growth of 3×3 against 3×6 debates")
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="SRC",
        help="another tree's src directory, measured in the same invocation, side by side",
    )
    parser.add_argument(
        "--cpu-repeats", type=int, default=1, help="times to measure the CPU slope (the median is reported)"
    )
    parser.add_argument(
        "--llama",
        action="store_true",
        help="only the prompt cache on a real llama-server: a 3×3 critique-refine debate with its settings on and off",
    )
    parser.add_argument("--llama-model", type=Path, default=CACHE / "models" / "qwen2.5-0.5b.gguf")
    parser.add_argument("--llama-slots", type=int, default=4, help="the server's slots (one per participant: 4)")
    parser.add_argument("--llama-threads", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--llama-max-tokens", type=int, default=200, help="each participant's maxTokens")
    parser.add_argument("--llama-agents", type=int, default=3, help="agents of the debate (3: the issue's 3×3)")
    parser.add_argument("--llama-rounds", type=int, default=3, help="rounds of the debate")
    args = parser.parse_args()
    if args.llama:
        llama_report(
            LlamaSetup(
                args.llama_model,
                args.llama_slots,
                args.llama_threads,
                args.llama_max_tokens,
                args.llama_agents,
                args.llama_rounds,
            )
        )
    elif args.profile:
        profile(args.latency, args.sigma)
    elif args.growth:
        with tempfile.TemporaryDirectory(prefix="dialectic-speed-") as tmp:
            for tree in trees_for(Path(tmp), args.baseline):
                summary: dict[str, float] = {}
                print(f"\n## {tree.label}: {tree.src}")
                print_growth(summary_growth(Path(tmp), tree), summary)
                for name, value in summary.items():
                    print(f"- {name}: {value:.2f} — {verdict(name, value)}")
    else:
        report(args.seeds, args.latency, args.sigma, args.baseline, args.cpu_repeats)


if __name__ == "__main__":
    main()
