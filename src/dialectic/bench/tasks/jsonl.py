"""Any dataset of questions: one ``{"id", "question", "answer"}`` JSON object per line."""

from __future__ import annotations

from pathlib import Path

from dialectic.bench.tasks.base import Item, Task, check_count, make_task
from dialectic.core.answers import MatchMode, canonical_number
from dialectic.core.errors import InvalidArgumentsError
from dialectic.core.files import DATASET_FILE, parse_json, read_user_text


def jsonl_task(path: Path, n: int | None, match: MatchMode | None) -> Task:
    """Items from ``path``: one ``{"id", "question", "answer"}`` object per line, first ``n`` kept.

    Without ``match`` an item is scored numerically when its answer parses as a number and by
    normalised exact match otherwise; ``--match numeric`` on a non-numeric answer is an error.
    """
    if n is not None:
        check_count(n)
    lines = read_user_text(path, DATASET_FILE).splitlines()
    items: list[Item] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        item = _parse_line(path, number, line, len(items), match)
        if item.id in seen:
            raise InvalidArgumentsError(f"{path}:{number}: duplicate id '{item.id}'")
        seen.add(item.id)
        items.append(item)
        if n is not None and len(items) == n:
            break
    if not items:
        raise InvalidArgumentsError(f"dataset {path} holds no items")
    return make_task("jsonl", f"jsonl ({path.name})", items)


def _parse_line(path: Path, number: int, line: str, index: int, match: MatchMode | None) -> Item:
    where = f"{path}:{number}"
    try:
        data = parse_json(line)
    except ValueError as exc:
        raise InvalidArgumentsError(f"{where}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise InvalidArgumentsError(f"{where}: expected an object with id, question and answer")
    missing = [key for key in ("id", "question", "answer") if data.get(key) is None]
    if missing:
        raise InvalidArgumentsError(f"{where}: missing {', '.join(missing)}")
    question, answer = str(data["question"]).strip(), str(data["answer"]).strip()
    if not question or not answer:
        raise InvalidArgumentsError(f"{where}: question and answer must not be empty")
    numeric = canonical_number(answer) is not None
    if match == "numeric" and not numeric:
        raise InvalidArgumentsError(f"{where}: --match numeric, but the answer '{answer}' is not a number")
    mode: MatchMode = match or ("numeric" if numeric else "exact")
    return Item(id=str(data["id"]), index=index, question=question, truth=answer, match=mode)
