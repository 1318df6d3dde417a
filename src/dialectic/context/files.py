"""Gathering the text files of a directory into one context block (``--context DIR``).

Hidden files and directories are skipped (they often hold secrets such as ``.env`` or
repository internals such as ``.git``), and so are binaries and files that are not UTF-8.
The result is bounded so a large tree cannot blow up every prompt of the debate.
"""

from __future__ import annotations

import os
from pathlib import Path

from dialectic.errors import InvalidArgumentsError

DEFAULT_MAX_CHARS = 40_000
_SKIPPED_DIRS = frozenset({"__pycache__", "node_modules"})
_SNIFF_BYTES = 8192
_MAX_LISTED_OMISSIONS = 10


def gather_context(directory: Path, *, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """The directory's text files, sorted by path, each under a ``### path`` header.

    Files are added whole while they fit in ``max_chars``; the first one that does not is
    cut, and a closing note names what was cut and the files after it, which are not read.
    Returns ``""`` when the directory holds no readable, non-empty text file.
    """
    if not directory.exists():
        raise InvalidArgumentsError(f"context directory not found: {directory}")
    if not directory.is_dir():
        raise InvalidArgumentsError(f"context path is not a directory: {directory}")
    parts: list[str] = []
    used = 0
    left_out: list[str] = []
    for path in _candidate_files(directory):
        relative = path.relative_to(directory).as_posix()
        if left_out:
            left_out.append(relative)
            continue
        text = _read_text(path)
        if not text or not text.strip():
            continue
        block = f"### {relative}\n\n{text.rstrip()}\n\n"
        room = max_chars - used
        if room <= 0:
            left_out.append(relative)
        elif len(block) <= room:
            parts.append(block)
            used += len(block)
        else:
            parts.append(block[:room].rstrip() + "\n\n")
            used = max_chars
            left_out.append(f"{relative} (cut)")
    if left_out:
        parts.append(_omission_note(max_chars, left_out))
    return "".join(parts).rstrip() + "\n" if parts else ""


def _candidate_files(directory: Path) -> list[Path]:
    """Every non-hidden file under ``directory`` outside skipped directories, sorted by path."""
    found: list[Path] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS]
        found.extend(Path(root, name) for name in files if not name.startswith("."))
    return sorted(found, key=lambda p: p.relative_to(directory).as_posix())


def _read_text(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\x00" in data[:_SNIFF_BYTES]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _omission_note(max_chars: int, left_out: list[str]) -> str:
    shown = ", ".join(left_out[:_MAX_LISTED_OMISSIONS])
    more = len(left_out) - _MAX_LISTED_OMISSIONS
    if more > 0:
        shown += f" and {more} more"
    return f"[context limited to {max_chars} characters; left out: {shown}]\n"
