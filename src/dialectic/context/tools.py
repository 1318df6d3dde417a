"""The three tools an agent reads a context directory with: ``list_files``, ``file_read``, ``context_search``.

:class:`ContextDirectory` is the directory opened once per debate: its visible text files are
read (through :mod:`dialectic.context.confine`, so nothing outside it is ever opened) and
indexed (:mod:`dialectic.context.search_index`). A :class:`ToolSession` serves one
contribution's calls and holds its cap on the characters handed back.

Nothing here raises at the model: a bad path, a bad argument, an unknown tool or a spent cap
is a result whose text starts with ``error:``, which the model reads and can act on. This
module knows nothing of LLMs; :data:`TOOL_PARAMETERS` describes each tool's arguments as a
JSON schema the agents layer offers to the model.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from dialectic.context.confine import Refused, normal_relative, read_inside, resolve_inside, text_problem
from dialectic.context.files import check_directory
from dialectic.context.search_index import IndexedFile, SearchIndex
from dialectic.context.tree import walk_visible

LIST_FILES = "list_files"
FILE_READ = "file_read"
CONTEXT_SEARCH = "context_search"

TOOL_PARAMETERS: dict[str, tuple[str, dict[str, Any]]] = {
    LIST_FILES: (
        "List the text files under a folder of the context directory (recursively), with their line counts.",
        {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Folder relative to the context directory; default '.'."},
                "pattern": {"type": "string", "description": "Optional glob on the file path or name, e.g. '*.py'."},
            },
            "additionalProperties": False,
        },
    ),
    FILE_READ: (
        "Read a text file of the context directory, or a range of its lines (1-based, inclusive).",
        {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path relative to the context directory."},
                "start_line": {"type": "integer", "minimum": 1},
                "end_line": {"type": "integer", "minimum": 1},
            },
            "required": ["path"],
            "additionalProperties": False,
        },
    ),
    CONTEXT_SEARCH: (
        "Full-text search over the context directory; returns the best-matching passages as path:start-end.",
        {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words to look for."},
                "max_results": {"type": "integer", "minimum": 1, "maximum": 20},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    ),
}
"""Each tool's description and its arguments as a JSON schema (an object)."""


@dataclass(frozen=True)
class ToolLimits:
    """Caps on what the tools hand back."""

    read_lines: int = 400
    """Lines one ``file_read`` returns at most."""
    read_chars: int = 16_000
    """Characters one ``file_read`` returns at most."""
    listed: int = 200
    """Files one ``list_files`` names at most."""
    search_results: int = 20
    """Passages one ``context_search`` returns at most (default 5)."""
    contribution_chars: int = 48_000
    """Characters all the tool calls of one contribution return together."""
    max_files: int = 5_000
    """Files of the directory that are read and indexed at most."""


@dataclass(frozen=True)
class ToolOutcome:
    """What the model is shown; ``error`` is set (and ``text`` starts with ``error:``) when the call failed."""

    text: str
    error: str | None = None

    @classmethod
    def failure(cls, message: str) -> ToolOutcome:
        return cls(f"error: {message}", message)


@dataclass
class ContextDirectory:
    """A context directory opened for one debate."""

    root: Path
    texts: dict[str, str]
    """Each readable text file (relative POSIX path → text), in path order."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Each visible file that cannot be read (relative path → why)."""
    index: SearchIndex | None = None
    limits: ToolLimits = field(default_factory=ToolLimits)

    @classmethod
    def open(cls, directory: Path, *, cache_dir: Path, limits: ToolLimits | None = None) -> ContextDirectory:
        """Read the directory's visible text files and open (or build) their search index."""
        limits = limits or ToolLimits()
        root = check_directory(directory)
        walked = walk_visible(root)
        texts: dict[str, str] = {}
        skipped = {path.removesuffix("/"): reason for path, reason in walked.skipped.items()}
        for relative in walked.files:
            if len(texts) >= limits.max_files:
                skipped[relative] = f"over the limit of {limits.max_files} files"
                continue
            text, reason = read_inside(root, PurePosixPath(relative))
            if text is None:
                skipped[relative] = reason or "cannot be read"
            else:
                texts[relative] = text
        files = [IndexedFile(path, text) for path, text in texts.items()]
        index = SearchIndex.open_or_build(files, cache_dir) if files else None
        return cls(root, texts, skipped, index, limits)

    def close(self) -> None:
        if self.index is not None:
            self.index.close()

    def overview(self, max_entries: int = 40) -> str:
        """A short listing for the prompt: the file count and the first files with their line counts."""
        names = list(self.texts)
        shown = [f"- {name} ({_line_count(self.texts[name])} lines)" for name in names[:max_entries]]
        more = len(names) - max_entries
        if more > 0:
            shown.append(f"- … and {more} more (use list_files)")
        return f"{len(names)} text files.\n" + "\n".join(shown) if names else "No readable text files."

    def session(self) -> ToolSession:
        return ToolSession(self)

    # -- the tools -------------------------------------------------------------------------------

    def list_files(self, path: str = ".", pattern: str | None = None) -> ToolOutcome:
        bad = _bad_text("pattern", pattern)
        if bad is not None:
            return bad
        try:
            folder = normal_relative(path)
        except Refused as refused:
            return ToolOutcome.failure(str(refused))
        if folder.as_posix() in self.texts:
            return ToolOutcome.failure(f"{path!r} is a file; read it with file_read")
        prefix = "" if folder == PurePosixPath(".") else folder.as_posix() + "/"
        inside = [name for name in self.texts if name.startswith(prefix)]
        if prefix and not inside:
            return ToolOutcome.failure(f"no folder {path!r} with readable text files")
        if pattern:
            inside = [n for n in inside if _matches(n, pattern)]
        lines = [f"{name} ({_line_count(self.texts[name])} lines)" for name in inside[: self.limits.listed]]
        more = len(inside) - self.limits.listed
        if more > 0:
            lines.append(f"… and {more} more; narrow with path or pattern")
        return ToolOutcome("\n".join(lines) if lines else "no files match")

    def file_read(self, path: str, start_line: int | None = None, end_line: int | None = None) -> ToolOutcome:
        try:
            relative = normal_relative(path)
            resolve_inside(self.root, relative)
        except Refused as refused:
            return ToolOutcome.failure(str(refused))
        name = relative.as_posix()
        text = self.texts.get(name)
        if text is None:
            return ToolOutcome.failure(self._why_unreadable(name, path))
        lines = text.splitlines()
        if not lines:
            return ToolOutcome(f"{name} (empty file)")
        first = max(1, start_line or 1)
        if first > len(lines):
            return ToolOutcome.failure(f"{name} has {len(lines)} lines; start_line {first} is past its end")
        last = min(len(lines), end_line if end_line is not None else first + self.limits.read_lines - 1)
        if last < first:
            return ToolOutcome.failure(f"end_line {end_line} is before start_line {first}")
        last = min(last, first + self.limits.read_lines - 1)
        body, shown_last = _within(lines, first, last, self.limits.read_chars)
        header = f"{name} (lines {first}-{shown_last} of {len(lines)})"
        note = f"\n[more: read on with start_line={shown_last + 1}]" if shown_last < len(lines) else ""
        return ToolOutcome(f"{header}\n{body}{note}")

    def context_search(self, query: str, max_results: int | None = None) -> ToolOutcome:
        bad = _bad_text("query", query)
        if bad is not None:
            return bad
        if not query.strip():
            return ToolOutcome.failure("query must not be empty")
        limit = max(1, min(max_results or 5, self.limits.search_results))
        hits = self.index.search(query, limit) if self.index is not None else []
        if not hits:
            return ToolOutcome("no matches")
        blocks = [f"{i}. {hit.location}\n   {' '.join(hit.snippet.split())}" for i, hit in enumerate(hits, start=1)]
        return ToolOutcome("\n".join(blocks))

    def _why_unreadable(self, name: str, given: str) -> str:
        if name in self.skipped:
            return f"{name} cannot be read: {self.skipped[name]}"
        if any(other.startswith(name + "/") for other in self.texts):
            return f"{given!r} is a directory; list it with list_files"
        if (self.root / name).is_dir():
            return f"{given!r} is a directory with no readable text files"
        return f"no readable file {given!r} (files that are hidden or .gitignored are not available)"


_Runner = Callable[[ContextDirectory, dict[str, Any]], ToolOutcome]


@dataclass(frozen=True)
class _Argument:
    name: str
    kind: type
    required: bool = False


_ARGUMENTS: dict[str, tuple[_Argument, ...]] = {
    LIST_FILES: (_Argument("path", str), _Argument("pattern", str)),
    FILE_READ: (_Argument("path", str, True), _Argument("start_line", int), _Argument("end_line", int)),
    CONTEXT_SEARCH: (_Argument("query", str, True), _Argument("max_results", int)),
}
_RUNNERS: dict[str, _Runner] = {
    LIST_FILES: lambda d, a: d.list_files(**a),
    FILE_READ: lambda d, a: d.file_read(**a),
    CONTEXT_SEARCH: lambda d, a: d.context_search(**a),
}


class ToolSession:
    """One contribution's tool calls: checks each call's arguments and caps what they return in all."""

    def __init__(self, directory: ContextDirectory) -> None:
        self.directory = directory
        self.used_chars = 0

    def call(self, name: str, arguments: dict[str, Any], raw_arguments: str = "") -> ToolOutcome:
        """Run tool ``name``; every problem is an outcome the model sees, never an exception."""
        if name not in _RUNNERS:
            return ToolOutcome.failure(f"unknown tool {name!r}; the tools are {', '.join(_RUNNERS)}")
        checked = _checked_arguments(name, arguments, raw_arguments)
        if isinstance(checked, ToolOutcome):
            return checked
        room = self.directory.limits.contribution_chars - self.used_chars
        if room <= 0:
            return ToolOutcome.failure(
                f"this contribution's tool output reached its limit of {self.directory.limits.contribution_chars} "
                "characters; write your answer now"
            )
        outcome = _RUNNERS[name](self.directory, checked)
        text = outcome.text
        if len(text) > room:
            text = text[:room] + "\n[cut: this contribution's tool output reached its limit]"
        self.used_chars += len(text)
        return ToolOutcome(text, outcome.error)


def _checked_arguments(name: str, arguments: dict[str, Any], raw: str) -> dict[str, Any] | ToolOutcome:
    expected = {a.name: a for a in _ARGUMENTS[name]}
    if not arguments and raw.strip() and raw.strip() != "{}":
        return ToolOutcome.failure(f"the arguments of {name} must be a JSON object, got: {raw[:200]}")
    unknown = sorted(set(arguments) - set(expected))
    if unknown:
        return ToolOutcome.failure(f"{name} has no argument {', '.join(unknown)} (it takes {', '.join(expected)})")
    for argument in expected.values():
        value = arguments.get(argument.name)
        if value is None:
            if argument.required:
                return ToolOutcome.failure(f"{name} needs the argument {argument.name}")
            continue
        if argument.kind is int and isinstance(value, float) and value.is_integer():
            continue
        if not isinstance(value, argument.kind) or isinstance(value, bool):
            return ToolOutcome.failure(f"{name}: {argument.name} must be {_kind_name(argument.kind)}")
        bad = _bad_text(f"{name}: {argument.name}", value) if isinstance(value, str) else None
        if bad is not None:
            return bad
    given = {key: value for key, value in arguments.items() if value is not None}
    return {key: int(value) if expected[key].kind is int else value for key, value in given.items()}


MAX_ARGUMENT_CHARS = 1_000
"""The longest text argument a tool takes (a path, a pattern, a query): checked before any work."""


def _bad_text(name: str, value: str | None) -> ToolOutcome | None:
    """The error a string argument earns before it reaches the file system or the index, if any."""
    if value is not None and len(value) > MAX_ARGUMENT_CHARS:
        return ToolOutcome.failure(
            f"{name} has {len(value):,} characters, more than the {MAX_ARGUMENT_CHARS:,} allowed"
        )
    problem = text_problem(value) if value is not None else None
    return ToolOutcome.failure(f"{name} {problem}") if problem is not None else None


def _kind_name(kind: type) -> str:
    return "an integer" if kind is int else "a string"


def _matches(name: str, pattern: str) -> bool:
    """``pattern`` matches the whole relative path or the file's own name."""
    return fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(name.rsplit("/", 1)[-1], pattern)


def _line_count(text: str) -> int:
    return len(text.splitlines())


def _within(lines: list[str], first: int, last: int, max_chars: int) -> tuple[str, int]:
    """Lines ``first``..``last`` joined, stopping before the line that would pass ``max_chars`` (at least one)."""
    taken: list[str] = []
    used = 0
    shown_last = first - 1
    for number in range(first, last + 1):
        line = lines[number - 1]
        if taken and used + len(line) + 1 > max_chars:
            break
        taken.append(line[:max_chars] if not taken else line)
        used += len(line) + 1
        shown_last = number
    return "\n".join(taken), shown_last
