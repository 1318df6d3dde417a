"""Decide the judged arms of a `dialectic bench` results file again, under the majority rule.

Since 2026-11-27 a judge's answer to a question with one right answer does not overrule the
participants' majority: when more than half of the last round's replies state the same answer and
the judge's final answer is another, the majority's answer stands (`dialectic.engine.judge_answer`).
Items recorded before the rule are decided here again, exactly, from their recorded replies: only
the final answer of an item whose last replies have a majority can change. The rewritten file is a
results file, for `bench_tables.py`:

    .venv/bin/python benchmarks/majority_replay.py benchmarks/results/word-problems-0.5b-convergence-gpu.json \\
        -o /tmp/word-problems-replayed.json
    .venv/bin/python benchmarks/bench_tables.py benchmarks/results/word-problems-0.5b-gpu.json \\
        --named /tmp/word-problems-replayed.json="3 agents, replayed" --all-items
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, cast

from dialectic.core.answers import MatchMode, is_correct
from dialectic.engine.judge_answer import majority

STATED = ("boxed", "final-answer")
"""How a reply's answer was read when the reply stated it (the engine's tally counts only those)."""


def replayed(item: dict[str, Any], result: dict[str, Any]) -> dict[str, Any] | None:
    """``result`` decided under the rule, or ``None`` when the rule leaves it as it was."""
    if not result.get("judge") or not result.get("rounds"):
        return None
    last = result["rounds"][-1]
    # the engine counts a stated answer only, not a reply's last number
    answers = [reply.get("answer") if reply.get("method") in STATED else None for reply in last]
    agreed = majority({str(k): answer for k, answer in enumerate(answers)})
    if agreed is None or result.get("final") == agreed:
        return None
    correct = is_correct(agreed, str(item["truth"]), cast(MatchMode, item.get("match") or "numeric"))
    return {**result, "final": agreed, "correct": correct, "outcome": "correct" if correct else "wrong"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path, help="a results file written by `dialectic bench -o`")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the replayed results file")
    args = parser.parse_args(argv)
    try:
        document = json.loads(args.file.read_text(encoding="utf-8"))
        changed: list[str] = []
        for item in document["items"]:
            for arm, result in item["arms"].items():
                decided = replayed(item, result)
                if decided is not None:
                    was = "right" if result.get("correct") else "wrong"
                    now = "right" if decided["correct"] else "wrong"
                    moved = f"{result.get('final')} → {decided['final']}"
                    changed.append(f"item {item['index']} ({arm}): {moved}, {was} → {now}")
                    item["arms"][arm] = decided
    except KeyError as exc:
        print(f"error: {args.file}: not a results file of dialectic bench (no {exc} in it)", file=sys.stderr)
        return 2
    except (OSError, ValueError, TypeError) as exc:
        print(f"error: {args.file}: {exc}", file=sys.stderr)
        return 2
    document["arms"] = []  # the summaries are recomputed from the items when the file is read
    args.output.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(changed)} item results decided otherwise under the majority rule")
    for line in changed:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
