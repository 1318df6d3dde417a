"""The problems of a batch: a JSONL file of ``{"id": str, "problem": str}`` lines, ids unique."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from dialectic.core.errors import InvalidArgumentsError


@dataclass(frozen=True)
class Problem:
    id: str
    problem: str


def read_problems(path: Path) -> list[Problem]:
    """Every problem in ``path``; :class:`InvalidArgumentsError` naming the first bad line (blank lines skipped)."""
    if not path.exists():
        raise InvalidArgumentsError(f"no such problems file: {path}")
    if not path.is_file():
        raise InvalidArgumentsError(f"the problems file is not a regular file: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidArgumentsError(
            f"cannot read problems file {path}: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        try:
            item = json.loads(line)
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
        problems.append(Problem(ident, problem))
    if not problems:
        raise InvalidArgumentsError(f"{path}: no problems")
    return problems
