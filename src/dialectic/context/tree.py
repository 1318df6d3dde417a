"""Which files of a context directory an agent may see: the one walk both ``paste`` and ``tools`` use.

Skipped, never read or listed:

- hidden files and directories (``.env``, ``.git``…: secrets and repository internals);
- ``__pycache__`` and ``node_modules``;
- what a ``.gitignore`` in the directory (or in any folder under it) ignores, matched with
  git's own rules (the ``pathspec`` library), unless the caller turns that off;
- symlinked directories (not followed: their target may lie anywhere);
- files and directories whose names are not UTF-8 (the OS hands them over with lone surrogates,
  which no prompt, index or store can hold).

A symlinked *file* is listed here; whether it may be read (it must resolve inside the
directory, to a regular UTF-8 file, not through a symlink loop) is decided when it is read
(:mod:`dialectic.context.confine`), as is whether it is a device or a FIFO.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from dialectic.core.files import CONTEXT_FILE, try_read_user_text

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

SKIPPED_DIRS = frozenset({"__pycache__", "node_modules"})
GITIGNORE = ".gitignore"
_TOP = PurePosixPath(".")


@dataclass
class WalkedTree:
    files: list[str] = field(default_factory=list)
    """Every visible file, as a POSIX path relative to the directory, sorted."""
    skipped: dict[str, str] = field(default_factory=dict)
    """What was passed over and why: ``path/`` (a directory) or ``path`` → the reason. A name that is
    not UTF-8 is shown with its bytes escaped (``bad\\xffname.txt``)."""


@dataclass(frozen=True)
class _Ignores:
    """The ``.gitignore`` rules in force in one folder: each ancestor's spec with the folder it sits in."""

    specs: tuple[tuple[PurePosixPath, GitIgnoreSpec], ...] = ()

    def ignores(self, relative: PurePosixPath, *, is_dir: bool) -> bool:
        for base, spec in self.specs:
            inside = relative.relative_to(base).as_posix() if base != _TOP else relative.as_posix()
            if spec.match_file(inside + "/" if is_dir else inside):
                return True
        return False

    def with_file(self, folder: Path, relative: PurePosixPath) -> _Ignores:
        """These rules plus the ``.gitignore`` in ``folder`` (at ``relative``), if it has a readable one."""
        text, _ = try_read_user_text(folder / GITIGNORE, CONTEXT_FILE)
        if not text:
            return self
        from pathspec import GitIgnoreSpec  # only a walk that meets a .gitignore pays for it (~10 ms)

        return _Ignores((*self.specs, (relative, GitIgnoreSpec.from_lines(text.splitlines()))))


SYMLINKED_DIRECTORY = "a symlinked directory"
NOT_UTF8_NAME = "its name is not UTF-8"


def hidden(name: str) -> bool:
    return name.startswith(".")


def utf8_name(name: str) -> bool:
    """Whether ``name`` (as ``os`` decodes it, undecodable bytes as lone surrogates) is UTF-8 text."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(path: PurePosixPath) -> str:
    """``path`` for a message: bytes that are not UTF-8 escaped (``\\xff``), so it can be printed and saved."""
    return path.as_posix().encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def walk_visible(directory: Path, *, respect_gitignore: bool = True) -> WalkedTree:
    """The files under ``directory`` an agent may see (see the module's docstring)."""
    tree = WalkedTree()
    rules: dict[str, _Ignores] = {}
    for root, dirs, files in os.walk(directory):
        folder = Path(root)
        relative = PurePosixPath(folder.relative_to(directory).as_posix())
        ignores = rules.get(relative.parent.as_posix(), _Ignores()) if relative != _TOP else _Ignores()
        if respect_gitignore:
            ignores = ignores.with_file(folder, relative)
        rules[relative.as_posix()] = ignores
        kept = []
        for name in sorted(dirs):
            path = relative / name if relative != _TOP else PurePosixPath(name)
            if hidden(name) or name in SKIPPED_DIRS or ignores.ignores(path, is_dir=True):
                continue
            if (folder / name).is_symlink():
                tree.skipped[f"{shown_name(path)}/"] = SYMLINKED_DIRECTORY
            elif not utf8_name(name):
                tree.skipped[f"{shown_name(path)}/"] = NOT_UTF8_NAME
            else:
                kept.append(name)
        dirs[:] = kept
        for name in files:
            path = relative / name if relative != _TOP else PurePosixPath(name)
            if hidden(name) or ignores.ignores(path, is_dir=False):
                continue
            if utf8_name(name):
                tree.files.append(path.as_posix())
            else:
                tree.skipped[shown_name(path)] = NOT_UTF8_NAME
    tree.files.sort()
    return tree
