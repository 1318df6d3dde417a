"""The Markdown tables of committed `dialectic bench -o` results files, for docs/bench.md.

Reads one or more results JSON files (e.g. ``benchmarks/results/*.json``) and prints, per task and
model, one table: each arm's items, accuracy with its 95% CI, the difference from ``single`` and from
self-consistency (paired-bootstrap CI, the discordant items b/c and the exact McNemar p-value), and
the mean calls and tokens per item. The numbers are recomputed from the files' items with the bench
package's own summary and report code (:func:`dialectic.bench.summary.summarize`,
:func:`dialectic.bench.report.comparison_table`), so they are the numbers `dialectic bench` prints.

Files that asked the same questions of the same model (same task, seed, difficulty, dataset name,
temperature, token limit and agents) form one table, with the differences paired across the files;
each arm must come from one file only.
By default only the items every arm of a table finished are counted, so the arms are compared on the
same items (``--all-items`` counts every finished item of each arm). ``--full`` prints the whole
`dialectic bench` report of each table instead (belief dynamics, decisions, replies); ``--plot PATH``
writes each table's accuracy-against-cost figure with its Pareto frontier (needs matplotlib; with
several tables, ``PATH``'s stem gets ``-1``, ``-2``, … in the order printed).

    .venv/bin/python benchmarks/bench_tables.py benchmarks/results/*.json --plot docs/bench-pareto.png
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from dialectic.bench.arms import ArmSpec
from dialectic.bench.records import ItemResult, RunSpec
from dialectic.bench.report import comparison_legend, comparison_table, to_markdown
from dialectic.bench.results_file import ResultsFile, read_results
from dialectic.bench.runner import arms_for
from dialectic.bench.summary import BenchSummary, summarize
from dialectic.core.errors import DialecticError


class Table:
    """The files that asked the same questions of the same model, read as one run."""

    def __init__(self) -> None:
        self.files: list[ResultsFile] = []

    @property
    def first(self) -> ResultsFile:
        return self.files[0]


def table_key(spec: RunSpec) -> tuple[object, ...]:
    dataset = Path(spec.dataset).name if spec.dataset else None  # a committed file may come from another machine
    models = tuple(sorted(spec.models()))
    level = (spec.operands, spec.difficulty)
    return (spec.task, dataset, spec.seed, level, spec.match, spec.temperature, spec.max_tokens, models)


def group(files: Sequence[ResultsFile]) -> list[Table]:
    """Tables in the order their first file was given."""
    tables: dict[tuple[object, ...], Table] = {}
    for loaded in files:
        tables.setdefault(table_key(loaded.spec), Table()).files.append(loaded)
    return list(tables.values())


def summary_of(table: Table, *, all_items: bool) -> BenchSummary:
    arms: list[ArmSpec] = []
    results: list[ItemResult] = []
    source: dict[str, Path] = {}
    questions: dict[str, str] = {}
    for loaded in table.files:
        for arm in arms_for(loaded.spec):
            if arm.name in source:
                raise SystemExit(
                    f"bench_tables: arm {arm.name} is in both {source[arm.name]} and {loaded.path}; "
                    "give the files of one table with each arm in one of them"
                )
            source[arm.name] = loaded.path
            arms.append(arm)
        for result in loaded.results:
            if questions.setdefault(result.item_id, result.question) != result.question:
                raise SystemExit(
                    f"bench_tables: item {result.item_id} of {loaded.path} asks another question than in "
                    f"{table.first.path}; these files did not ask the same questions"
                )
        results += loaded.results
    if not all_items:
        finished = [{r.item_id for r in results if r.arm == arm.name} for arm in arms]
        common = set.intersection(*finished) if finished else set()
        results = [r for r in results if r.item_id in common]
    spec = table.first.spec
    if len(table.files) > 1:
        spec = spec.model_copy(update={"id": " + ".join(f.spec.id for f in table.files)})
    total = max(f.total_items for f in table.files)
    return summarize(spec, table.first.task, total, arms, results)


def heading(summary: BenchSummary, table: Table) -> list[str]:
    models = ", ".join(sorted(set(summary.spec.models())))
    items = max((arm.items for arm in summary.arms), default=0)
    files = ", ".join(f"`{f.path.name}` (`{f.spec.id}`)" for f in table.files)
    return [
        f"### {summary.task} — {models}",
        "",
        f"{items} items · seed {summary.spec.seed} · sampling temperature {summary.spec.temperature:g} · from {files}",
        "",
    ]


def numbered(path: Path, index: int, count: int) -> Path:
    return path if count == 1 else path.with_name(f"{path.stem}-{index}{path.suffix or '.png'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path, metavar="RESULTS.json")
    parser.add_argument("--all-items", action="store_true", help="count every finished item of each arm")
    parser.add_argument("--full", action="store_true", help="print the whole `dialectic bench` report per table")
    parser.add_argument("--plot", type=Path, metavar="PATH", help="write the accuracy-against-cost figure(s) here")
    args = parser.parse_args(argv)

    try:
        files = [read_results(path) for path in args.files]
    except DialecticError as exc:
        raise SystemExit(f"bench_tables: {exc}") from None
    tables = group(files)
    summaries = [summary_of(table, all_items=args.all_items) for table in tables]
    blocks: list[str] = []
    for summary, table in zip(summaries, tables, strict=True):
        if args.full:
            blocks.append(to_markdown(summary))
        else:
            lines = [*heading(summary, table), *comparison_table(summary), "", comparison_legend(summary)]
            blocks.append("\n".join(lines) + "\n")
    print("\n".join(blocks), end="")
    if args.plot is not None:
        from dialectic.bench.plot import write_pareto

        try:
            for index, summary in enumerate(summaries, start=1):
                path = numbered(args.plot, index, len(summaries))
                path.parent.mkdir(parents=True, exist_ok=True)
                write_pareto(summary, path)
                print(f"wrote {path}", file=sys.stderr)
        except DialecticError as exc:  # matplotlib missing
            raise SystemExit(f"bench_tables: {exc}") from None
    return 0


if __name__ == "__main__":
    sys.exit(main())
