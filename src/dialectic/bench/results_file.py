"""Reading back the JSON ``dialectic bench -o`` writes: the run's definition and every finished (arm, item).

The file is what outlives the machine a run was on: committed to a repository, it is enough to resume
the run elsewhere (``--resume results.json``, see :func:`dialectic.bench.plan.resume_from_results`) and
to rebuild its tables (``benchmarks/bench_tables.py``). The per-arm summaries in the file are not read
back: they are recomputed from the items.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from dialectic.bench.records import ItemResult, RunSpec
from dialectic.core.errors import InvalidArgumentsError
from dialectic.core.files import MB, FileKind, parse_json, read_user_text

RESULTS_FILE = FileKind("bench results file", 512 * MB, InvalidArgumentsError)
RESULTS_SUFFIX = ".json"
ITEM_KEYS = ("arm", "item_id", "index", "question", "truth", "match")
"""The fields of an :class:`ItemResult` that the file keeps once per item, not once per arm."""


@dataclass(frozen=True)
class ResultsFile:
    path: Path
    spec: RunSpec
    results: tuple[ItemResult, ...]
    task: str
    """The task's description, as the report titles it."""
    total_items: int


def names_results_file(value: str) -> bool:
    """Whether ``--resume VALUE`` names a results file rather than a run id: a ``.json`` name, a path
    with a directory in it, or an existing file (run ids are ``bench-…`` and never any of these)."""
    path = Path(value).expanduser()
    return path.suffix.lower() == RESULTS_SUFFIX or "/" in value or path.is_file()


def read_results(path: Path) -> ResultsFile:
    """The run and its finished results; a file that is not a bench results file raises a one-line error."""
    text = read_user_text(path, RESULTS_FILE)
    try:
        document = parse_json(text)
    except json.JSONDecodeError as exc:
        raise InvalidArgumentsError(f"{path} is not JSON ({exc.msg}, line {exc.lineno})") from None
    spec, results = parse_document(document, str(path))
    task = document.get("task")
    total = document.get("total_items")
    return ResultsFile(
        path,
        spec,
        tuple(results),
        task if isinstance(task, str) else spec.task,
        total if isinstance(total, int) else len({r.item_id for r in results}),
    )


def parse_document(document: Any, where: str) -> tuple[RunSpec, list[ItemResult]]:
    if not isinstance(document, dict) or not isinstance(document.get("run"), dict):
        raise InvalidArgumentsError(f'{where} is not a results file of dialectic bench (no "run" in it)')
    try:
        spec = RunSpec.model_validate(document["run"])
    except ValidationError as exc:
        raise InvalidArgumentsError(f"{where}: the run's definition is not readable ({_first_error(exc)})") from None
    items = document.get("items", [])
    if not isinstance(items, list):
        raise InvalidArgumentsError(f'{where}: "items" is not a list')
    results: list[ItemResult] = []
    for entry in items:
        if not isinstance(entry, dict) or not isinstance(entry.get("arms"), dict):
            raise InvalidArgumentsError(f'{where}: an item is not an object with "arms"')
        shared = {"item_id": entry.get("id"), **{key: entry.get(key) for key in ITEM_KEYS[2:]}}
        for arm, result in entry["arms"].items():
            if not isinstance(result, dict):
                raise InvalidArgumentsError(f"{where}: item {entry.get('id')} has no result object for arm {arm}")
            fields = {key: value for key, value in result.items() if key != "correct"}
            try:
                results.append(ItemResult.model_validate({**fields, **shared, "arm": arm}))
            except ValidationError as exc:
                raise InvalidArgumentsError(
                    f"{where}: the result of {arm} on item {entry.get('id')} is not readable ({_first_error(exc)})"
                ) from None
    return spec, results


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    location = ".".join(str(part) for part in error["loc"])
    return f"{location}: {error['msg']}" if location else error["msg"]
