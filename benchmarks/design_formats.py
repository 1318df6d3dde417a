"""Every deliberation protocol on the same design problems: the evaluator's score beside the cost.

For each design problem and each ``--format``, runs the installed ``dialectic debate`` with the
agents of ``--config``, then scores the debate with ``dialectic eval`` and the evaluator of
``--evaluator``. Everything lands in ``--out DIR`` (a store, each debate's JSON, each evaluation's
JSON); a pair whose evaluation is already there is skipped, so an interrupted run picks up where
it stopped when started again (``--table-only`` prints the table of what is there and runs
nothing). Every format gets ``--rounds`` (default 1), or its minimum when that is more
(``structured``: 2). Prints a Markdown table: per format, the mean overall score (0–10) and the
mean tokens, LLM requests and minutes per debate, with the score of each problem and the share of
each solution's content words that are not in its problem (under 40% the engine warns that the
judge restated the problem: a high score beside a low share is the evaluator's failure, not the
debate's success).

    .venv/bin/python benchmarks/design_formats.py --config agents.json --evaluator evaluator.json \\
        --out runs/formats [--formats critique-refine,vote] [--rounds 1]

The evaluator is a model too: on the local models its scores are coarse (see docs/bench.md), so
read the table with the debates' own text at hand.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from dialectic.core.config import min_rounds
from dialectic.similarity.detectors import novelty_share

FORMATS = (
    "critique-refine",
    "vote",
    "free-form",
    "round-limited",
    "structured",
    "convergence-seeking",
    "simultaneous",
)
PROBLEMS = {
    "rate-limiter": (
        "Design a rate limiter for a public HTTP API that serves 5,000 requests per second from four "
        "instances behind a load balancer. Limits are per API key; a key may burst briefly."
    ),
    "offline-notes": (
        "Design how a note-taking mobile app keeps a user's notes in sync across their phone, tablet and "
        "laptop when any of them may be offline for days and edit the same note."
    ),
    "audit-log": (
        "Design the storage of a payment service's audit log: entries must be tamper-evident, kept for "
        "seven years, and searchable by customer within seconds."
    ),
}


def dialectic(*args: str) -> subprocess.CompletedProcess[str]:
    executable = str(Path(sys.executable).parent / "dialectic")
    return subprocess.run([executable, *args], capture_output=True, text=True, stdin=subprocess.DEVNULL)


def run_pair(out: Path, config: Path, evaluator: Path, problem_id: str, fmt: str, rounds: int) -> str:
    """Debate and evaluate one (problem, format), unless already done; a line saying what happened."""
    debate_file = out / f"{problem_id}.{fmt}.json"
    eval_file = out / f"{problem_id}.{fmt}.eval.json"
    if eval_file.exists():
        return f"{problem_id} {fmt}: done before"
    if not debate_file.exists():
        ran = dialectic(
            "debate", PROBLEMS[problem_id], "--format", fmt, "-r", str(max(rounds, min_rounds(fmt))), "-c", str(config),
            "--problem-kind", "design", "--store", str(out / "store"), "-o", str(debate_file),
        )  # fmt: skip
        if ran.returncode != 0:
            return f"{problem_id} {fmt}: debate failed (exit {ran.returncode}): {ran.stderr.strip()[-300:]}"
    scored = dialectic("eval", "-d", str(debate_file), "-c", str(evaluator), "-o", str(eval_file))
    if scored.returncode != 0:
        return f"{problem_id} {fmt}: eval failed (exit {scored.returncode}): {scored.stderr.strip()[-300:]}"
    return f"{problem_id} {fmt}: scored"


def overall(eval_file: Path) -> float | None:
    scores: dict[str, Any] = json.loads(eval_file.read_text(encoding="utf-8")).get("scores", {})
    mean = scores.get("overall", {}).get("mean")
    return float(mean) if mean is not None else None


def table(out: Path, formats: list[str], problems: list[str]) -> str:
    head = ["format", "mean score", *problems, "new words", "tokens", "requests", "minutes"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["--:"] * (len(head) - 1)) + "|"]
    for fmt in formats:
        cells: list[str] = []
        scores: list[float] = []
        tokens: list[int] = []
        requests: list[int] = []
        minutes: list[float] = []
        novelty: list[str] = []
        for problem_id in problems:
            eval_file = out / f"{problem_id}.{fmt}.eval.json"
            debate_file = out / f"{problem_id}.{fmt}.json"
            score = overall(eval_file) if eval_file.exists() else None
            cells.append("–" if score is None else f"{score:.1f}")
            if score is not None:
                scores.append(score)
            if debate_file.exists():
                debate = json.loads(debate_file.read_text(encoding="utf-8"))
                solution = (debate.get("finalSolution") or {}).get("description", "")
                novelty.append(f"{novelty_share(solution, debate['problem']):.0%}")
                totals = debate["totals"]
                tokens.append(totals["totalTokens"])
                requests.append(totals["requests"])
                minutes.append(totals["latencyMs"] / 60_000)
        mean = f"{statistics.mean(scores):.1f}" if scores else "–"
        cost = [
            f"{statistics.mean(tokens):,.0f}" if tokens else "–",
            f"{statistics.mean(requests):.0f}" if requests else "–",
            f"{statistics.mean(minutes):.1f}" if minutes else "–",
        ]
        lines.append("| " + " | ".join([fmt, mean, *cells, " / ".join(novelty) or "–", *cost]) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, required=True, help="agents and judge of every debate")
    parser.add_argument("--evaluator", type=Path, required=True, help="configuration of `dialectic eval`")
    parser.add_argument("--out", type=Path, required=True, help="directory of the runs (kept; resumable)")
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--table-only", action="store_true", help="print the table of the runs in --out; run nothing")
    args = parser.parse_args()
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    problems = [p.strip() for p in args.problems.split(",") if p.strip()]
    unknown = sorted(set(problems) - set(PROBLEMS))
    if unknown:
        parser.error(f"unknown problem(s) {', '.join(unknown)}; known: {', '.join(PROBLEMS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    for problem_id in (
        [] if args.table_only else problems
    ):  # problem-major: every format gets each problem before the next
        for fmt in formats:
            print(run_pair(args.out, args.config, args.evaluator, problem_id, fmt, args.rounds), flush=True)
    print(table(args.out, formats, problems))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
