"""Reading a file the user named: the one place every such file goes through.

A path on the command line or in a configuration file can name anything: ``/dev/zero``, a
FIFO that never ends, a directory, ``/proc/self/environ``, or a 10 GB log. Every
user-supplied file is therefore read here, with the same rules:

- only a **regular file** (after symlinks are resolved) is read; a device, FIFO or socket is
  refused without being opened, and so is anything under ``/proc``, ``/sys`` or ``/dev``;
- at most a **size cap per kind** is read (``cap + 1`` bytes, so a ``/proc``-like file that
  claims size 0 cannot slip past ``st_size``);
- the content must be **UTF-8 text without NUL** (a leading byte-order mark is dropped).

Each kind of file names the error it raises (and so the exit code): a problem, answers or
env file is an invalid argument (exit 2), a config or prompt file a configuration error (exit 4).
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, replace
from pathlib import Path

from dialectic.core.errors import ConfigError, DialecticError, InvalidArgumentsError
from dialectic.core.json_values import JsonValue

KB = 1024
MB = 1024 * KB

SYSTEM_DIRECTORIES: tuple[Path, ...] = (Path("/proc"), Path("/sys"), Path("/dev"))
"""Virtual or device file systems: never a user's document, never read or written."""

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
"""Non-blocking, so a file swapped for a FIFO between the check and the open cannot hang us."""


@dataclass(frozen=True)
class FileKind:
    """What a file is for: how messages call it, how much of it may be read, what error it raises."""

    label: str
    max_bytes: int
    error: type[DialecticError]
    raise_hint: str | None = None
    """How the user may allow a larger file, appended to the too-large message (``None``: they cannot)."""

    def with_limit(self, max_bytes: int, raise_hint: str | None) -> FileKind:
        return replace(self, max_bytes=max_bytes, raise_hint=raise_hint)


PROBLEM_FILE = FileKind("problem file", 1 * MB, InvalidArgumentsError)
ANSWERS_FILE = FileKind("answers file", 1 * MB, InvalidArgumentsError)
ENV_FILE = FileKind("env file", 256 * KB, InvalidArgumentsError)
CONTEXT_FILE = FileKind("context file", 1 * MB, InvalidArgumentsError)
DATASET_FILE = FileKind("dataset", 64 * MB, InvalidArgumentsError)
DEBATE_FILE = FileKind("debate file", 64 * MB, InvalidArgumentsError)
CONFIG_FILE = FileKind("config file", 1 * MB, ConfigError)
EVAL_CONFIG_FILE = FileKind("eval config file", 1 * MB, ConfigError)
PROMPT_FILE = FileKind("prompt file", 256 * KB, ConfigError)
POOL_FILE = FileKind("pool file", 1 * MB, ConfigError)
KEY_FILE = FileKind("key file", 64 * KB, ConfigError)
"""A receipt's signing key (``--sign-key``) or public key (``--public-key``): a few hundred bytes of PEM."""
RECEIPT_FILE = FileKind("receipt file", 64 * MB, InvalidArgumentsError)
"""``dialectic verify RECEIPT.json``: a receipt, or a whole export that carries one."""


def parse_json(text: str) -> JsonValue:
    """``json.loads`` for a file the user named: a document nested past the parser's depth (``[[[[…``) is a
    ``json.JSONDecodeError`` as any other malformed JSON is, never a ``RecursionError``."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None


class _Refused(Exception):
    """Why a file cannot be used, as the end of a sentence about it ("is a directory")."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_user_text(path: Path, kind: FileKind) -> str:
    """The UTF-8 text of ``path``; any reason it cannot be used raises ``kind.error``."""
    data = read_user_bytes(path, kind)
    text = decode_text(data)
    if text is None:
        raise kind.error(f"{kind.label} {path} is not a UTF-8 text file")
    return text


def read_user_bytes(path: Path, kind: FileKind) -> bytes:
    """At most ``kind.max_bytes`` of the regular file ``path``; anything else raises ``kind.error``."""
    try:
        return _read_capped(path, kind)
    except _Refused as refused:
        if refused.reason == "not found":
            raise kind.error(f"{kind.label} not found: {path}") from None
        raise kind.error(f"{kind.label} {path} {refused.reason}") from None


def try_read_user_text(path: Path, kind: FileKind) -> tuple[str | None, str | None]:
    """``(text, None)``, or ``(None, why)`` for a caller that skips unusable files instead of failing."""
    try:
        data = _read_capped(path, kind)
    except _Refused as refused:
        return None, refused.reason
    text = decode_text(data)
    return (text, None) if text is not None else (None, "is not UTF-8 text")


def decode_text(data: bytes) -> str | None:
    """``data`` as UTF-8 text (a byte-order mark dropped), or ``None`` when it is not text."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    return None if "\x00" in text else text


def system_directory_of(path: Path) -> Path | None:
    """The system directory (``/proc``, ``/sys``, ``/dev``) holding the resolved ``path``, if any."""
    for directory in SYSTEM_DIRECTORIES:
        if path.is_relative_to(directory):
            return directory
    return None


def describe_size(size: int) -> str:
    """``1048576`` → ``1 MB``; ``262144`` → ``256 KB``."""
    if size >= MB and size % MB == 0:
        return f"{size // MB} MB"
    if size >= KB and size % KB == 0:
        return f"{size // KB} KB"
    return f"{size:,} bytes"


def _read_capped(path: Path, kind: FileKind) -> bytes:
    resolved = _resolve(path)
    _check_type(_stat(resolved))
    system = system_directory_of(resolved)
    if system is not None:
        raise _Refused(f"is a system file (under {system}), not a user file")
    try:
        fd = os.open(resolved, _OPEN_FLAGS)
    except OSError as exc:
        raise _Refused(f"cannot be read ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        _check_type(info)  # the path may have been swapped since it was checked
        if info.st_size > kind.max_bytes:
            raise _Refused(_too_large(kind))
        try:
            data = handle.read(kind.max_bytes + 1)
        except OSError as exc:
            raise _Refused(f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > kind.max_bytes:
        raise _Refused(_too_large(kind))
    return data


def _resolve(path: Path) -> Path:
    try:
        return path.expanduser().resolve(strict=True)
    except FileNotFoundError:
        raise _Refused("not found") from None
    except RuntimeError:  # a symlink loop (Python 3.11/3.12)
        raise _Refused("cannot be read (a symlink loop)") from None
    except OSError as exc:
        raise _Refused(f"cannot be read ({exc.strerror or exc})") from None


def _stat(path: Path) -> os.stat_result:
    try:
        return path.stat()
    except OSError as exc:
        raise _Refused(f"cannot be read ({exc.strerror or exc})") from None


def _check_type(info: os.stat_result) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise _Refused("is a directory")
    if not stat.S_ISREG(info.st_mode):
        raise _Refused(f"is {special_file_kind(info.st_mode)}, not a regular file")


def special_file_kind(mode: int) -> str:
    """``a device``, ``a FIFO`` or ``a socket``: what a non-regular, non-directory file is."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def _too_large(kind: FileKind) -> str:
    reason = f"is larger than {describe_size(kind.max_bytes)}, the limit for {kind.label}s"
    return f"{reason}; {kind.raise_hint}" if kind.raise_hint else reason
