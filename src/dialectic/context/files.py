"""Gathering the text files of a directory into one context block (``--context DIR``).

Hidden files and directories are skipped (they often hold secrets such as ``.env`` or
repository internals such as ``.git``), and so is what a ``.gitignore`` ignores (the walk is
:mod:`dialectic.context.tree`'s, shared with the agents' tools). Nothing read may come from outside the directory:
a symlink whose target resolves outside it is skipped, symlinked directories are not
followed, a symlink loop and a name that is not UTF-8 are skipped, and every file goes
through the user-file reader (regular files only, at most 1 MB each, UTF-8 text), so a
device, a FIFO or a binary is skipped too. Every skipped file is named with its reason. The
result is bounded so a large tree cannot blow up every prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from dialectic.context.confine import read_inside
from dialectic.context.tree import walk_visible
from dialectic.core.errors import InvalidArgumentsError

DEFAULT_MAX_CHARS = 40_000
_MAX_LISTED = 10


@dataclass
class GatheredContext:
    text: str
    """The context block; ``""`` when no readable, non-empty text file was found."""
    skipped: list[str] = field(default_factory=list)
    """``path (reason)`` for every file that was not read."""

    def skipped_summary(self) -> str:
        """The skipped files on one line (the first ten, then a count)."""
        return listed(self.skipped)


def check_directory(directory: Path) -> Path:
    """``directory`` resolved; ``InvalidArgumentsError`` (exit 2) when it is missing or not a directory."""
    if not directory.exists():
        raise InvalidArgumentsError(f"context directory not found: {directory}")
    if not directory.is_dir():
        raise InvalidArgumentsError(f"context path is not a directory: {directory}")
    return directory.resolve()


def gather_context(directory: Path, *, max_chars: int = DEFAULT_MAX_CHARS) -> GatheredContext:
    """The directory's text files, sorted by path, each under a ``### path`` header.

    Files are added whole while they fit in ``max_chars``; the first one that does not is
    cut, and a closing note names what was cut and the files after it, which are not read.
    """
    root = check_directory(directory)
    parts: list[str] = []
    used = 0
    left_out: list[str] = []
    walked = walk_visible(directory)
    skipped = [f"{path} ({reason})" for path, reason in walked.skipped.items()]
    for relative in walked.files:
        if left_out:
            left_out.append(relative)
            continue
        text, reason = read_inside(root, PurePosixPath(relative))
        if reason is not None:
            skipped.append(f"{relative} ({reason})")
            continue
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
        parts.append(f"[context limited to {max_chars} characters; left out: {listed(left_out)}]\n")
    text = "".join(parts).rstrip() + "\n" if parts else ""
    return GatheredContext(text, sorted(skipped))


def listed(names: list[str]) -> str:
    """``names`` on one line: the first ten, then how many more."""
    shown = ", ".join(names[:_MAX_LISTED])
    more = len(names) - _MAX_LISTED
    return f"{shown} and {more} more" if more > 0 else shown
