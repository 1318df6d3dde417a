"""Writing a finished debate out: the solution, the JSON export, the Markdown report.

Files are written atomically (a temporary file in the same directory, then a rename), so
an interrupted write never leaves half a file where a previous good one was.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from dialectic.cli.console import Terminal
from dialectic.domain import DebateState
from dialectic.errors import DialecticError, InvalidArgumentsError
from dialectic.report import render_report

REPORT_SUFFIX = ".md"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path``, creating parent directories as needed."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise DialecticError(f"cannot write {path}: {exc.strerror or exc}") from None


def check_writable_target(path: Path, flag: str) -> None:
    """Fail before the debate starts when ``path`` can never be written (it is a directory)."""
    if path.is_dir():
        raise InvalidArgumentsError(f"{flag} {path} is a directory; give a file path")


def report_path(path: Path) -> Path:
    return path if path.suffix.lower() == REPORT_SUFFIX else path.with_name(path.name + REPORT_SUFFIX)


def export_json(state: DebateState) -> str:
    """The debate in the seed's JSON shape (camelCase keys), pretty-printed."""
    return json.dumps(state.to_json_dict(), indent=2, ensure_ascii=False) + "\n"


def solution_text(state: DebateState) -> str:
    return state.final_solution.description.rstrip() + "\n" if state.final_solution else ""


def emit_results(
    state: DebateState, *, output: Path | None, report: Path | None, verbose: bool, term: Terminal
) -> None:
    """The solution to stdout (or ``output``), then the report; a failed report is only a warning."""
    if output is None:
        sys.stdout.write(solution_text(state))
        sys.stdout.flush()
    elif output.suffix.lower() == ".json":
        write_atomic(output, export_json(state))
    else:
        write_atomic(output, solution_text(state))
    if report is not None:
        write_report(state, report, verbose=verbose, term=term, fatal=False)


def write_report(state: DebateState, path: Path, *, verbose: bool, term: Terminal, fatal: bool) -> None:
    """Render and write the Markdown report to ``path`` (``.md`` appended when missing)."""
    target = report_path(path)
    try:
        write_atomic(target, render_report(state, verbose=verbose))
    except Exception as exc:  # the report is a by-product of a saved debate: never lose the run over it
        if fatal:
            raise
        term.warning(f"could not generate the report {target}: {exc}")
        return
    term.line(f"Generated report: {target}")
