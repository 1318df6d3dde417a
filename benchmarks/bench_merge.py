"""One report from several `dialectic bench` runs on the same questions.

A run's report compares only its own arms. When the arms of one comparison were run as several runs
(one at a time, resumed across sessions, or added after a fix), this prints them as one report: the
same tables as `dialectic bench --report`, with the paired differences computed across the runs.
Runs must have asked the same questions (same task, seed, operands and item fingerprint); an arm
that two runs both have is taken from the run it is listed under, so each arm is named once.
By default only the items every listed arm has finished are counted, so the arms are compared on
the same items (``--all-items`` counts every finished item of each arm).

    .venv/bin/python benchmarks/bench_merge.py --store DIR \\
        bench-…-4268=single,self-consistency:7,debate:3x2 bench-…-E939=dialectic,format:vote
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dialectic.bench.records import ItemResult, RunSpec, merged_run_id
from dialectic.bench.report import to_markdown
from dialectic.bench.runner import arms_for, task_for
from dialectic.bench.store import BenchStore, bench_database
from dialectic.bench.summary import summarize


def parse_selection(text: str) -> tuple[str, list[str]]:
    run_id, _, arms = text.partition("=")
    names = [name.strip() for name in arms.split(",") if name.strip()]
    if not run_id or not names:
        raise SystemExit(f"bench_merge: expected RUN=ARM[,ARM...], got {text!r}")
    return run_id, names


def same_questions(first: RunSpec, other: RunSpec) -> bool:
    keys = ("task", "dataset", "n", "seed", "operands", "match", "fingerprint")
    return all(getattr(first, key) == getattr(other, key) for key in keys)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("selections", nargs="+", metavar="RUN=ARM[,ARM...]")
    parser.add_argument("--store", type=Path, required=True, help="directory of bench.sqlite3")
    parser.add_argument("--all-items", action="store_true", help="count every finished item of each arm")
    args = parser.parse_args(argv)

    selections = [parse_selection(text) for text in args.selections]
    names = [name for _, arms in selections for name in arms]
    if len(set(names)) != len(names):
        raise SystemExit("bench_merge: an arm is listed twice; take each arm from one run")
    with BenchStore(bench_database(args.store)) as store:
        specs = [store.load_run(run_id) for run_id, _ in selections]
        first = specs[0]
        for spec in specs[1:]:
            if not same_questions(first, spec):
                raise SystemExit(f"bench_merge: {spec.id} did not ask the questions {first.id} asked")
        arms = []
        results: list[ItemResult] = []
        for spec, (run_id, wanted) in zip(specs, selections, strict=True):
            known = {arm.name: arm for arm in arms_for(spec)}
            missing = [name for name in wanted if name not in known]
            if missing:
                raise SystemExit(f"bench_merge: {run_id} has no arm {', '.join(missing)}")
            arms += [known[name] for name in wanted]
            results += [r for r in store.results(run_id) if r.arm in wanted]
    if not args.all_items:
        finished = [{r.item_id for r in results if r.arm == name} for name in names]
        common = set.intersection(*finished)
        results = [r for r in results if r.item_id in common]
    merged = first.model_copy(update={"id": merged_run_id(run_id for run_id, _ in selections)})
    task = task_for(first)
    print(to_markdown(summarize(merged, task.description, len(task.items), arms, results)), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
