"""Move some arms of a `dialectic bench` results file into a results file of their own.

Use it when a run's arms must part: some of its arms turned out to measure a defect (the file keeps
them as evidence, apart) or must be run again another way, while `bench --resume FILE` goes on with
the others. Both files stay results files: each keeps the run's definition with its own arms, and
the summaries are recomputed from the items when the files are read.

    .venv/bin/python benchmarks/results_split.py benchmarks/results/dates-0.5b-debates-gpu.json \\
        --arms format:vote,dialectic -o benchmarks/results/defects/dates-0.5b-one-agent-gpu.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def split(document: dict[str, Any], moved: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(what stays, what moves): the run's arms, summaries and item results, divided by arm."""
    arms = list(document["run"]["arms"])
    missing = [arm for arm in moved if arm not in arms]
    if missing:
        raise ValueError(f"the run has no arm {', '.join(missing)} (its arms: {', '.join(arms)})")
    if len(moved) == len(arms):
        raise ValueError("every arm would move: copy the file instead")

    def part(keep: set[str]) -> dict[str, Any]:
        items = []
        for entry in document.get("items", []):
            results = {arm: result for arm, result in entry["arms"].items() if arm in keep}
            if results:
                items.append({**entry, "arms": results})
        return {
            **document,
            "run": {**document["run"], "arms": [arm for arm in arms if arm in keep]},
            "arms": [summary for summary in document.get("arms", []) if summary.get("arm") in keep],
            "items": items,
        }

    return part(set(arms) - set(moved)), part(set(moved))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path, help="the results file; rewritten with the arms that stay")
    parser.add_argument("--arms", required=True, help="the arms to move, comma-separated (as the run names them)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the new results file of the moved arms")
    args = parser.parse_args(argv)
    if args.output.exists():
        print(f"error: {args.output} exists; name a new file", file=sys.stderr)
        return 2
    try:
        document = json.loads(args.file.read_text(encoding="utf-8"))
        stays, moves = split(document, [arm.strip() for arm in args.arms.split(",") if arm.strip()])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"error: {args.file}: {exc}", file=sys.stderr)
        return 2
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(moves, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    args.file.write_text(json.dumps(stays, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{args.file}: {', '.join(stays['run']['arms'])}; {args.output}: {', '.join(moves['run']['arms'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
