"""Keeping every path an agent names inside the context directory.

A model can ask for anything: ``../../etc/passwd``, ``/proc/self/environ``, a symlink to
``/dev/zero``, a FIFO that never ends, a directory, ``.env``. A path is refused unless it is
relative, has no ``..`` and no hidden part, and resolves (symlinks followed) inside the
directory; the file itself is then read by :mod:`dialectic.user_files`, which reads regular
UTF-8 files only, up to a size cap, without ever blocking on a FIFO or a device.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath

from dialectic.context.tree import hidden
from dialectic.user_files import CONTEXT_FILE, try_read_user_text


class Refused(Exception):
    """Why a path cannot be used, as a sentence the model is shown."""


def normal_relative(given: str) -> PurePosixPath:
    """``given`` as a clean relative path (``""`` and ``"."`` are the directory itself).

    Raises :class:`Refused` for an absolute path, a ``..`` part or a hidden part.
    """
    text = given.strip().replace("\\", "/")
    if not text or text == ".":
        return PurePosixPath(".")
    if text.startswith("/") or text.startswith("~") or PureWindowsPath(given.strip()).drive:
        raise Refused(f"{given!r} is an absolute path; give a path relative to the context directory")
    path = PurePosixPath(text)
    parts = [part for part in path.parts if part != "."]
    if ".." in parts:
        raise Refused(f"{given!r} goes up with '..'; only paths inside the context directory can be read")
    if any(hidden(part) for part in parts):
        raise Refused(f"{given!r} is hidden; hidden files are not available")
    return PurePosixPath(*parts) if parts else PurePosixPath(".")


def resolve_inside(root: Path, relative: PurePosixPath) -> Path:
    """The real path of ``relative`` under ``root`` (itself resolved); :class:`Refused` if it lies outside."""
    target = (root / relative).resolve()
    if not target.is_relative_to(root):
        raise Refused(f"{relative.as_posix()!r} leads outside the context directory")
    return target


def read_inside(root: Path, relative: PurePosixPath) -> tuple[str | None, str | None]:
    """``(text, None)`` for a readable text file inside ``root``, or ``(None, why)``; nothing outside is opened."""
    try:
        target = resolve_inside(root, relative)
    except Refused:
        return None, "links outside the context directory"
    return try_read_user_text(target, CONTEXT_FILE)
