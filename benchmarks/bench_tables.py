"""The Markdown tables of committed `dialectic bench -o` results files, for docs/bench.md.

Reads one or more results JSON files (e.g. ``benchmarks/results/*.json``) and prints, per task and
model, one table: each arm's items, accuracy with its 95% CI, the difference from ``single`` and from
self-consistency (paired-bootstrap CI, the discordant items b/c and the exact McNemar p-value), and
the mean calls and tokens per item. The numbers are recomputed from the files' items with the bench
package's own summary and report code (:func:`dialectic.bench.summary.summarize`,
:func:`dialectic.bench.report.comparison_table`), so they are the numbers `dialectic bench` prints.

Files that asked the same questions of the same model (same task, seed, difficulty, dataset name,
temperature, token limit and agents) form one table, with the differences paired across the files;
each arm must come from one file only. A file given with ``--panel`` joins the table of the same
questions whatever its agents: its arms are named after its panel (``adaptive · panel of
qwen2.5-1.5b + qwen2.5-0.5b``), so a panel of other models or temperatures is paired item by item
with one model's ``single`` and self-consistency. A file given with ``--named FILE=LABEL`` joins it
the same way under ``ARM · LABEL``: a later run of an arm whose rules changed stands beside the
earlier run of the same name (``--named dates-0.5b-adaptive-cpu.json="rules of 2026-11-26"``).
``--pool`` reads the files of the same task, level and model on different seeds as one table, each
item told apart by its seed (``2028/dates-0007``): a replication on a new seed pooled with the run
that suggested it; an arm may then come from one file per seed.
By default only the items every arm of a table finished are counted, so the arms are compared on the
same items (``--all-items`` counts every finished item of each arm). ``--full`` prints the whole
`dialectic bench` report of each table instead (belief dynamics, decisions, replies); ``--plot PATH``
writes each table's accuracy-against-cost figure with its Pareto frontier (needs matplotlib; with
several tables, ``PATH``'s stem gets ``-1``, ``-2``, … in the order printed).

    .venv/bin/python benchmarks/bench_tables.py benchmarks/results/*.json --plot docs/bench-pareto.png

``--calibration PATH`` also writes the judges' measured calibration (:mod:`dialectic.bench.calibration`):
per judge model, the Brier score of the confidences it stated against the items' outcomes, pooled over
the files. The package ships that table as ``src/dialectic/core/measured_calibration.json``, which
decides whether a judge's stated confidence is shown:

    .venv/bin/python benchmarks/bench_tables.py benchmarks/results/*.json \
        --calibration src/dialectic/core/measured_calibration.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dialectic.bench.arms import ArmSpec
from dialectic.bench.calibration import measure
from dialectic.bench.calibration import table as calibration_table
from dialectic.bench.records import ItemResult, RunSpec, merged_run_id
from dialectic.bench.report import comparison_legend, comparison_table, to_markdown
from dialectic.bench.results_file import ResultsFile, read_results
from dialectic.bench.runner import arms_for
from dialectic.bench.summary import BenchSummary, summarize
from dialectic.core.errors import DialecticError


@dataclass(frozen=True)
class PanelArm(ArmSpec):
    """An arm of a ``--panel`` or ``--named`` file, named after its panel or label so it stands beside the others."""

    panel: str = ""

    @property
    def name(self) -> str:
        return f"{super().name} · {self.panel}"


def panel_name(spec: RunSpec) -> str:
    """``panel of qwen2.5-1.5b + qwen2.5-0.5b``, ``panel at 0.3 / 0.7`` of one model, or ``on MODEL``."""
    agents = spec.agents  # as the run stored them: the config's agent objects
    if len({a["model"] for a in agents}) > 1:
        return "panel of " + " + ".join(str(a["model"]) for a in agents)
    if len({a["temperature"] for a in agents}) > 1:
        return "panel at " + " / ".join(f"{a['temperature']:g}" for a in agents)
    return f"on {agents[0]['model']}"


class Table:
    """The files that asked the same questions of the same model, read as one run."""

    def __init__(self) -> None:
        self.files: list[ResultsFile] = []
        self.panels: dict[Path, str] = {}
        """The files joined under their own names, and the label their arms' names get."""

    @property
    def seeds(self) -> list[int | None]:
        return sorted({f.spec.seed for f in self.files}, key=lambda seed: (seed is None, seed or 0))

    @property
    def first(self) -> ResultsFile:
        return self.files[0]


def questions_key(spec: RunSpec, *, pool: bool = False) -> tuple[object, ...]:
    """What makes two files ask the same questions (with ``pool``, the same kind of questions: any seed)."""
    dataset = Path(spec.dataset).name if spec.dataset else None  # a committed file may come from another machine
    level = (spec.operands, spec.difficulty)
    seed = None if pool else spec.seed
    return (spec.task, dataset, seed, level, spec.match, spec.temperature, spec.max_tokens)


def table_key(spec: RunSpec, *, pool: bool = False) -> tuple[object, ...]:
    return (*questions_key(spec, pool=pool), tuple(sorted(spec.models())))


def group(
    files: Sequence[ResultsFile], panels: Sequence[tuple[ResultsFile, str]] = (), *, pool: bool = False
) -> list[Table]:
    """Tables in the order their first file was given; each panel file (with its label) joins the table of
    its questions (with ``pool``, the files on other seeds join too)."""
    tables: dict[tuple[object, ...], Table] = {}
    for loaded in files:
        tables.setdefault(table_key(loaded.spec, pool=pool), Table()).files.append(loaded)
    for loaded, label in panels:
        key = questions_key(loaded.spec, pool=pool)
        table = next((t for k, t in tables.items() if k[:-1] == key), None)
        if table is None:
            table = tables.setdefault(table_key(loaded.spec, pool=pool), Table())
        table.files.append(loaded)
        table.panels[loaded.path] = label
    return list(tables.values())


def summary_of(table: Table, *, all_items: bool) -> BenchSummary:
    arms: list[ArmSpec] = []
    results: list[ItemResult] = []
    source: dict[tuple[str, int | None], Path] = {}
    questions: dict[str, str] = {}
    pooled = len(table.seeds) > 1
    for loaded in table.files:
        file_arms = arms_for(loaded.spec)
        file_results = loaded.results
        if loaded.path in table.panels:
            panel = table.panels[loaded.path]
            file_arms = [PanelArm(**{**vars(arm), "panel": panel}) for arm in file_arms]
            names = {f"{arm.name}".rsplit(" · ", 1)[0]: arm.name for arm in file_arms}
            file_results = [r.model_copy(update={"arm": names.get(r.arm, r.arm)}) for r in file_results]
        if pooled:  # the same index on two seeds is two items
            seed = loaded.spec.seed
            file_results = [r.model_copy(update={"item_id": f"{seed}/{r.item_id}"}) for r in file_results]
        for arm in file_arms:
            key = (arm.name, loaded.spec.seed)
            if key in source:
                raise SystemExit(
                    f"bench_tables: arm {arm.name} is in both {source[key]} and {loaded.path}; "
                    "give the files of one table with each arm in one of them"
                )
            source[key] = loaded.path
            if all(known.name != arm.name for known in arms):
                arms.append(arm)
        for result in file_results:
            if questions.setdefault(result.item_id, result.question) != result.question:
                raise SystemExit(
                    f"bench_tables: item {result.item_id} of {loaded.path} asks another question than in "
                    f"{table.first.path}; these files did not ask the same questions"
                )
        results += file_results
    if not all_items:
        finished = [{r.item_id for r in results if r.arm == arm.name} for arm in arms]
        common = set.intersection(*finished) if finished else set()
        results = [r for r in results if r.item_id in common]
    if pooled:  # every arm on every seed: an arm missing on one would be compared on other items
        for arm in arms:
            lacking = [seed for seed in table.seeds if (arm.name, seed) not in source]
            if lacking:
                raise SystemExit(
                    f"bench_tables: --pool: arm {arm.name} has no file on seed {lacking[0]}; "
                    "pool files that ran the same arms"
                )
    spec = table.first.spec
    if len(table.files) > 1:
        spec = spec.model_copy(update={"id": merged_run_id(f.spec.id for f in table.files)})
    total = max(f.total_items for f in table.files)
    return summarize(spec, table.first.task, total, arms, results)


def heading(summary: BenchSummary, table: Table) -> list[str]:
    models = ", ".join(sorted(set(summary.spec.models())))
    items = max((arm.items for arm in summary.arms), default=0)
    files = ", ".join(f"`{f.path.name}` (`{f.spec.id}`)" for f in table.files)
    seeds = (
        "seed " + " + ".join(str(seed) for seed in table.seeds) if len(table.seeds) > 1 else f"seed {summary.spec.seed}"
    )
    return [
        f"### {summary.task} — {models}",
        "",
        f"{items} items · {seeds} · sampling temperature {summary.spec.temperature:g} · from {files}",
        "",
    ]


def numbered(path: Path, index: int, count: int) -> Path:
    return path if count == 1 else path.with_name(f"{path.stem}-{index}{path.suffix or '.png'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path, metavar="RESULTS.json")
    parser.add_argument(
        "--panel",
        type=Path,
        action="append",
        default=[],
        metavar="RESULTS.json",
        help="a file whose arms join the table of the same questions, named after its panel (repeat for more)",
    )
    parser.add_argument(
        "--named",
        action="append",
        default=[],
        metavar="RESULTS.json=LABEL",
        help="a file whose arms join the table of the same questions, named ARM · LABEL (repeat for more)",
    )
    parser.add_argument(
        "--pool", action="store_true", help="read the files of the same task and model on other seeds as one table"
    )
    parser.add_argument("--all-items", action="store_true", help="count every finished item of each arm")
    parser.add_argument("--full", action="store_true", help="print the whole `dialectic bench` report per table")
    parser.add_argument("--plot", type=Path, metavar="PATH", help="write the accuracy-against-cost figure(s) here")
    parser.add_argument(
        "--calibration", type=Path, metavar="PATH", help="write the judges' measured calibration (JSON) here"
    )
    args = parser.parse_args(argv)

    try:
        files = [read_results(path) for path in args.files]
        panels = [(loaded, panel_name(loaded.spec)) for loaded in map(read_results, args.panel)]
        for text in args.named:
            path, _, label = text.partition("=")
            if not label.strip():
                raise SystemExit(f"bench_tables: --named {text}: give it as RESULTS.json=LABEL")
            panels.append((read_results(Path(path)), label.strip()))
    except DialecticError as exc:
        raise SystemExit(f"bench_tables: {exc}") from None
    tables = group(files, panels, pool=args.pool)
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
    if args.calibration is not None:
        write_calibration(args.calibration, files)
    return 0


CALIBRATION_ABOUT = (
    "Judges' stated confidences measured on the bench (benchmarks/bench_tables.py --calibration). A model listed "
    "here with a Brier score below its base rate's, over 50 items or more, has its stated confidence shown."
)


def write_calibration(path: Path, files: Sequence[ResultsFile]) -> None:
    rows = measure(files)
    document = calibration_table(rows, CALIBRATION_ABOUT)
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    for row in rows:
        verdict = "shown" if row.earned else "withheld"
        print(
            f"calibration: {row.model}: Brier {row.brier:.3f} against {row.base_rate:.3f} over {row.forecasts} "
            f"forecasts: its confidence is {verdict}",
            file=sys.stderr,
        )
    print(f"wrote {path} ({len(rows)} judge model{'s' if len(rows) != 1 else ''})", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
