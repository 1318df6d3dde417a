"""What the user hands the CLI besides flags: the problem text and the ``.env`` file."""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path

from dialectic.errors import DialecticError, InvalidArgumentsError

DEFAULT_ENV_FILE = ".env"


def resolve_problem(problem: str | None, problem_file: Path | None) -> str:
    """The problem from exactly one of the argument and ``--problem-file``.

    The argument is trimmed; the file (relative to the working directory) must be non-empty
    UTF-8 text, and its raw content is returned so its formatting reaches the agents intact.
    """
    if problem is not None and problem_file is not None:
        raise InvalidArgumentsError("give the problem either as an argument or with --problem-file, not both")
    if problem_file is not None:
        return _read_problem_file(problem_file)
    if problem is None:
        raise InvalidArgumentsError('no problem given: use dialectic debate "PROBLEM" or --problem-file FILE')
    text = problem.strip()
    if not text:
        raise InvalidArgumentsError("the problem is empty")
    return text


def _read_problem_file(path: Path) -> str:
    if not path.exists():
        raise InvalidArgumentsError(f"problem file not found: {path}")
    if path.is_dir():
        raise InvalidArgumentsError(f"problem file {path} is a directory")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DialecticError(f"cannot read problem file {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None or "\x00" in text:
        raise InvalidArgumentsError(f"problem file {path} is not a UTF-8 text file")
    if not text.strip():
        raise InvalidArgumentsError(f"problem file {path} is empty")
    return text


def load_env_file(path: Path, *, explicit: bool, environ: MutableMapping[str, str] | None = None) -> list[str]:
    """Load ``KEY=VALUE`` lines from ``path`` into ``environ`` (``os.environ`` by default).

    Variables already set win over the file. Blank lines and ``#`` comments are ignored, an
    ``export`` prefix is allowed, and surrounding quotes are removed. A missing default file
    is fine; a missing file the user named is an error. Returns the names that were set.
    """
    env = os.environ if environ is None else environ
    if not path.exists():
        if explicit:
            raise InvalidArgumentsError(f"env file not found: {path}")
        return []
    if path.is_dir():
        raise InvalidArgumentsError(f"env file {path} is a directory")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InvalidArgumentsError(f"env file {path} is not a UTF-8 text file") from None
    except OSError as exc:
        raise InvalidArgumentsError(f"cannot read env file {path}: {exc.strerror or exc}") from None
    loaded: list[str] = []
    for key, value in parse_env(text):
        if key not in env:
            env[key] = value
            loaded.append(key)
    return loaded


def parse_env(text: str) -> list[tuple[str, str]]:
    """The ``(key, value)`` pairs of a dotenv text; lines that are not assignments are skipped."""
    pairs: list[tuple[str, str]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        line = line.removeprefix("export ").lstrip()
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not key or any(c.isspace() for c in key):
            continue
        pairs.append((key, _env_value(value.strip())))
    return pairs


def _env_value(value: str) -> str:
    """A quoted value up to its closing quote; an unquoted one up to a `` #`` comment."""
    if value[:1] in ("'", '"'):
        end = value.find(value[0], 1)
        if end > 0:
            return value[1:end]
    comment = value.find(" #")
    return value[:comment].rstrip() if comment >= 0 else value
