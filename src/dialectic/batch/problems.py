"""The problems of a batch: a JSONL file of ``{"id": str, "problem": str}`` lines, ids unique."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from dialectic.core.config import LimitsConfig, problem_text
from dialectic.core.errors import InvalidArgumentsError
from dialectic.core.files import MB, FileKind, parse_json, read_user_text

PROBLEMS_FILE = FileKind("problems file", 64 * MB, InvalidArgumentsError)
"""A batch's JSONL file, read as every file the user names is (:mod:`dialectic.core.files`)."""


@dataclass(frozen=True)
class Problem:
    id: str
    problem: str
    line: int = field(default=0, compare=False)
    """Its line in the problems file (for messages)."""


def read_problems(path: Path, limits: LimitsConfig | None = None) -> list[Problem]:
    """Every problem in ``path``; :class:`InvalidArgumentsError` naming the first bad line (blank lines skipped).

    With ``limits``, a problem is held to ``limits.maxProblemChars`` as ``dialectic debate``'s is
    (:func:`check_problems`)."""
    text = read_user_text(path, PROBLEMS_FILE)
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        try:
            item = parse_json(line)
        except json.JSONDecodeError as exc:
            raise InvalidArgumentsError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(item, dict):
            raise InvalidArgumentsError(f'{where}: expected an object {{"id": ..., "problem": ...}}')
        ident, problem = item.get("id"), item.get("problem")
        if isinstance(ident, int) and not isinstance(ident, bool):
            ident = str(ident)
        if not isinstance(ident, str) or not ident.strip():
            raise InvalidArgumentsError(f'{where}: "id" must be a non-empty string')
        if not isinstance(problem, str) or not problem.strip():
            raise InvalidArgumentsError(f'{where}: "problem" must be a non-empty string')
        if ident in seen:
            raise InvalidArgumentsError(f"{where}: id {ident!r} repeats line {seen[ident]}")
        seen[ident] = number
        problems.append(Problem(ident, problem, number))
    if not problems:
        raise InvalidArgumentsError(f"{path}: no problems")
    if limits is not None:
        check_problems(path, problems, limits)
    return problems


def check_problems(path: Path, problems: list[Problem], limits: LimitsConfig) -> None:
    """Every problem within ``limits.maxProblemChars`` (the rule ``dialectic debate`` applies); the first that is not
    is an :class:`InvalidArgumentsError` naming its line."""
    for item in problems:
        try:
            problem_text(item.problem, limits)
        except InvalidArgumentsError as exc:
            raise InvalidArgumentsError(f"{path}, line {item.line}: {exc.message}") from None
