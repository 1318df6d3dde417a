"""An evaluation's outputs: a Rich table for the terminal, JSON, CSV rows and Markdown.

The format of ``--output`` follows the file's suffix. CSV is the one format that
accumulates: each run appends one row (one evaluated debate, the averaged scores), and
the header is written only when the file is new, so several runs compare side by side.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any, Literal

from rich.table import Table

from dialectic.core.errors import DialecticError, InvalidArgumentsError
from dialectic.eval.evaluator import EvaluationReport, EvaluatorOutcome
from dialectic.eval.scores import CRITERIA, CRITERION_KEYS, Spread

OutputFormat = Literal["json", "csv", "md"]
_FORMATS: dict[str, OutputFormat] = {".json": "json", ".csv": "csv", ".md": "md", ".markdown": "md"}
CSV_COLUMNS: tuple[str, ...] = ("evaluatedAt", "debateId", "evaluators", "samples", *CRITERION_KEYS)
"""``evaluators`` counts the evaluators with at least one valid reply; the criteria columns hold means."""
MISSING = "—"


def output_format(path: Path) -> OutputFormat:
    """The format ``--output`` asks for, from its suffix; anything else is an invalid argument."""
    fmt = _FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InvalidArgumentsError(f"--output {path}: use a .json, .csv or .md file")
    if path.is_dir():
        raise InvalidArgumentsError(f"--output {path} is a directory; give a file path")
    return fmt


def report_to_json(report: EvaluationReport) -> dict[str, Any]:
    return {
        "debateId": report.debate_id,
        "problem": report.problem,
        "source": report.source,
        "evaluatedAt": report.evaluated_at.isoformat(),
        "samples": report.samples,
        "scores": {key: s.to_json_dict() for key, s in report.scores().items()},
        "evaluators": [_evaluator_json(e) for e in report.evaluators],
    }


def _evaluator_json(outcome: EvaluatorOutcome) -> dict[str, Any]:
    cfg = outcome.config
    spreads = {key: outcome.spread(key) for key in CRITERION_KEYS}
    return {
        "id": cfg.id,
        "name": cfg.name,
        "provider": cfg.provider,
        "model": cfg.model,
        "status": _status(outcome),
        "prompts": {
            "system": outcome.prompts.system_source.describe(),
            "user": outcome.prompts.user_source.describe(),
        },
        "scores": {key: s.to_json_dict() for key, s in spreads.items() if s is not None},
        "samples": [
            {
                "sample": r.sample,
                "model": r.model,
                "latencyMs": r.latency_ms,
                "usage": r.usage.to_json_dict(),
                "scores": {key: value.model_dump() for key, value in r.output.scores().items()},
                "scorePattern": r.score_pattern,
            }
            for r in outcome.results
        ],
        "failures": [{"sample": f.sample, "error": f.error} for f in outcome.failures],
    }


def _status(outcome: EvaluatorOutcome) -> str:
    if not outcome.results:
        return "failed"
    return "partial" if outcome.failures else "ok"


def render_json(report: EvaluationReport) -> str:
    return json.dumps(report_to_json(report), indent=2, ensure_ascii=False) + "\n"


def csv_row(report: EvaluationReport) -> list[str]:
    scores = report.scores()
    return [
        report.evaluated_at.isoformat(),
        report.debate_id,
        str(len(report.succeeded())),
        str(report.samples),
        *(f"{scores[key].mean:.2f}" for key in CRITERION_KEYS),
    ]


def check_csv_target(path: Path) -> None:
    """Refuse, before any model is called, to append to a CSV file whose columns are not ours."""
    header = _existing_header(path)
    if header is not None and tuple(header) != CSV_COLUMNS:
        raise InvalidArgumentsError(
            f"--output {path} already holds CSV with other columns ({', '.join(header)}); "
            "choose another file to start a new table"
        )


def append_csv(path: Path, report: EvaluationReport) -> None:
    """Append the report's row to ``path``, writing the header first when the file is new or empty."""
    new = _existing_header(path) is None
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if new:
        writer.writerow(CSV_COLUMNS)
    writer.writerow(csv_row(report))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8", newline="") as handle:
            handle.write(buffer.getvalue())
    except OSError as exc:
        raise DialecticError(f"cannot write {path}: {exc.strerror or exc}") from None


def _existing_header(path: Path) -> list[str] | None:
    """The first row of an existing, non-empty CSV file; ``None`` when there is none yet."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            return next(csv.reader(handle), None)
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidArgumentsError(f"cannot read the existing CSV file {path}: {exc}") from None


def render_markdown(report: EvaluationReport) -> str:
    scores = report.scores()
    succeeded = len(report.succeeded())
    lines = [
        f"# Evaluation of debate {report.debate_id}",
        "",
        f"- Problem: {_cell(_headline(report.problem))}",
        f"- Source: {report.source}",
        f"- Evaluated at: {report.evaluated_at.isoformat()}",
        f"- Evaluators: {succeeded} of {len(report.evaluators)} succeeded; samples per evaluator: {report.samples}",
        "",
        "## Scores",
        "",
        "Mean over every successful evaluation; SD is the sample standard deviation.",
        "",
        "| Criterion | Mean | SD | Min | Max | N |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for criterion in CRITERIA:
        s = scores[criterion.key]
        lines.append(f"| {criterion.title} | {s.mean:.2f} | {s.sd:.2f} | {_num(s.min)} | {_num(s.max)} | {s.n} |")
    lines += ["", "## Evaluators"]
    for outcome in report.evaluators:
        lines += ["", *_evaluator_markdown(outcome, report.samples)]
    failures = report.failures()
    if failures:
        lines += ["", "## Failures", ""]
        lines += [f"- {f.evaluator_name} (`{f.evaluator_id}`), sample {f.sample}: {_cell(f.error)}" for f in failures]
    return "\n".join(lines) + "\n"


def _evaluator_markdown(outcome: EvaluatorOutcome, samples: int) -> list[str]:
    cfg = outcome.config
    lines = [f"### {cfg.name} (`{cfg.id}`, {cfg.provider}/{cfg.model})"]
    if not outcome.results:
        lines += ["", "No valid evaluation."]
    for result in outcome.results:
        if samples > 1:
            lines += ["", f"Sample {result.sample}:"]
        lines += ["", "| Criterion | Score | Reason |", "| --- | ---: | --- |"]
        scored = result.output.scores()
        lines += [f"| {c.title} | {_num(scored[c.key].score)} | {_cell(scored[c.key].reason)} |" for c in CRITERIA]
        if result.score_pattern is not None:
            lines += ["", f"Warning: {pattern_warning(result.score_pattern)}."]
    return lines


def pattern_warning(pattern: str) -> str:
    """What to tell the reader of an evaluation whose criterion scores follow a pattern."""
    return (
        f"the criterion scores follow a pattern down the list ({pattern}), not the solution; they may not "
        "measure it (read the reasons, or evaluate with a stronger model)"
    )


def scores_table(report: EvaluationReport) -> Table:
    """Criteria down, the aggregate spread across, then each evaluator's own mean."""
    scores = report.scores()
    table = Table(
        title=f"Evaluation of debate {report.debate_id}",
        caption=(
            f"{len(report.succeeded())} of {len(report.evaluators)} evaluator(s), {report.samples} sample(s) each; "
            "SD: sample standard deviation"
        ),
    )
    table.add_column("Criterion")
    for heading in ("Mean", "SD", "Min", "Max", "N"):
        table.add_column(heading, justify="right")
    for outcome in report.evaluators:
        table.add_column(outcome.config.name, justify="right")
    for criterion in CRITERIA:
        s = scores[criterion.key]
        own = [_mean_or_missing(outcome.spread(criterion.key)) for outcome in report.evaluators]
        table.add_row(
            criterion.title,
            f"{s.mean:.2f}",
            f"{s.sd:.2f}",
            _num(s.min),
            _num(s.max),
            str(s.n),
            *own,
            end_section=criterion is CRITERIA[-2],  # a rule above the overall score
        )
    return table


def _mean_or_missing(s: Spread | None) -> str:
    return MISSING if s is None else f"{s.mean:.2f}"


def _num(value: float) -> str:
    """``8`` for whole scores, ``7.5`` otherwise."""
    return f"{value:g}"


def _cell(text: str) -> str:
    """Text safe inside one Markdown table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _headline(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
