"""Keeping every path an agent names inside the context directory.

A model can ask for anything: ``../../etc/passwd``, ``/proc/self/environ``, a symlink to
``/dev/zero``, a FIFO that never ends, a directory, ``.env``, a symlink loop, a path with a NUL
byte. A path is refused unless it is text the file system can take (no NUL, no lone surrogate),
relative, has no ``..`` and no hidden part, and resolves (symlinks followed) inside the
directory; the file itself is then read by :mod:`dialectic.core.files`, which reads regular
UTF-8 files only, up to a size cap, without ever blocking on a FIFO or a device.
"""

from __future__ import annotations

import errno
from pathlib import Path, PurePosixPath, PureWindowsPath

from dialectic.context.tree import hidden
from dialectic.core.files import CONTEXT_FILE, try_read_user_text

OUTSIDE = "links outside the context directory"
LOOP = "is a symlink loop"


class Refused(Exception):
    """Why a path cannot be used, as a sentence the model is shown; ``reason`` ends a sentence about the file."""

    def __init__(self, message: str, reason: str = OUTSIDE) -> None:
        super().__init__(message)
        self.reason = reason


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be handed to the file system or SQLite, or ``None`` when it can.

    A NUL byte makes every ``os`` call raise ``ValueError``, and a lone surrogate (which JSON's
    ``\\ud800`` escapes produce) cannot be encoded; either would crash the caller instead of being
    answered.
    """
    if "\x00" in value:
        return "contains a NUL character"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode text (it holds a lone surrogate)"
    return None


def normal_relative(given: str) -> PurePosixPath:
    """``given`` as a clean relative path (``""`` and ``"."`` are the directory itself).

    Raises :class:`Refused` for text no file system takes, an absolute path, a ``..`` part or a hidden part.
    """
    problem = text_problem(given)
    if problem is not None:
        raise Refused(f"the path {given!r} {problem}")
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
    """The real path of ``relative`` under ``root`` (itself resolved); :class:`Refused` if it lies outside
    or cannot be resolved (a symlink loop: ``RuntimeError`` on Python 3.11 and 3.12, ``OSError`` later)."""
    name = relative.as_posix()
    try:
        target = (root / relative).resolve()
    except RuntimeError:
        raise Refused(f"{name!r} is a symlink loop; it cannot be read", LOOP) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused(f"{name!r} is a symlink loop; it cannot be read", LOOP) from None
        reason = f"cannot be read ({exc.strerror or exc})"
        raise Refused(f"{name!r} {reason}", reason) from None
    except ValueError:  # a NUL byte or a lone surrogate: normal_relative refuses them first
        raise Refused(f"{name!r} is not a usable path", "is not a usable path") from None
    if not target.is_relative_to(root):
        raise Refused(f"{name!r} leads outside the context directory", OUTSIDE)
    return target


def read_inside(root: Path, relative: PurePosixPath) -> tuple[str | None, str | None]:
    """``(text, None)`` for a readable text file inside ``root``, or ``(None, why)``; nothing outside is opened."""
    try:
        target = resolve_inside(root, relative)
    except Refused as refused:
        return None, refused.reason
    return try_read_user_text(target, CONTEXT_FILE)
