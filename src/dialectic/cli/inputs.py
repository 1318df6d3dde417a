"""What the user hands the CLI besides flags: the problem text and the ``.env`` file."""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from dotenv import dotenv_values

from dialectic.core.config import LimitsConfig, check_problem_length, problem_text
from dialectic.core.errors import InvalidArgumentsError
from dialectic.core.files import ENV_FILE, PROBLEM_FILE, read_user_text

_UTF8_MAX_BYTES_PER_CHAR = 4


def resolve_problem(problem: str | None, problem_file: Path | None, limits: LimitsConfig | None = None) -> str:
    """The problem from exactly one of the argument and ``--problem-file``, within ``limits``.

    The argument is trimmed; the file (relative to the working directory) must be non-empty
    UTF-8 text, and its raw content is returned so its formatting reaches the agents intact.
    A problem longer than ``limits.maxProblemChars`` is refused, naming the limit.
    """
    limits = limits or LimitsConfig()
    require_one_problem(problem, problem_file)
    if problem_file is None:
        return problem_text(problem or "", limits)  # every front door's rule (the web API's, MCP's, batch's)
    text = _read_problem_file(problem_file, limits)
    check_problem_length(text, limits)
    return text


def require_one_problem(problem: str | None, problem_file: Path | None) -> None:
    """Exactly one of the argument and ``--problem-file`` (checked before anything is read)."""
    if problem is not None and problem_file is not None:
        raise InvalidArgumentsError("give the problem either as an argument or with --problem-file, not both")
    if problem is None and problem_file is None:
        raise InvalidArgumentsError('no problem given: use dialectic debate "PROBLEM" or --problem-file FILE')


def _read_problem_file(path: Path, limits: LimitsConfig) -> str:
    """The file's text; the byte cap grows with ``maxProblemChars`` so raising that limit is enough."""
    kind = PROBLEM_FILE.with_limit(
        max(PROBLEM_FILE.max_bytes, _UTF8_MAX_BYTES_PER_CHAR * limits.max_problem_chars),
        f"problems are limited to {limits.max_problem_chars:,} characters "
        "(raise limits.maxProblemChars in the config file to allow more)",
    )
    text = read_user_text(path, kind)
    if not text.strip():
        raise InvalidArgumentsError(f"problem file {path} is empty")
    return text


@dataclass
class EnvFileLoad:
    loaded: list[str] = field(default_factory=list)
    """The variables the file set (those already in the environment are left alone)."""
    warnings: list[str] = field(default_factory=list)


def load_env_file(path: Path, *, explicit: bool, environ: MutableMapping[str, str] | None = None) -> EnvFileLoad:
    """Load the dotenv file ``path`` into ``environ`` (``os.environ`` by default).

    Parsed by python-dotenv: quotes, escapes, ``export``, multi-line values and ``${VAR}``
    expansion (from the file and the process environment). Variables already set win over
    the file. A missing default file is fine; a missing file the user named is an error.
    Lines that cannot be parsed are skipped with a warning.
    """
    env = os.environ if environ is None else environ
    if not explicit and not path.exists() and not path.is_symlink():
        return EnvFileLoad()
    text = read_user_text(path, ENV_FILE)
    result = EnvFileLoad()
    with _dotenv_warnings() as messages:
        values = dotenv_values(stream=io.StringIO(text), interpolate=True)
    result.warnings = [f"env file {path}: {message}; the statement is ignored" for message in messages]
    for key, value in values.items():
        if value is not None and key not in env:
            env[key] = value
            result.loaded.append(key)
    return result


class _Collect(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.WARNING)
        self._into = into

    def emit(self, record: logging.LogRecord) -> None:
        self._into.append(record.getMessage().removeprefix("python-dotenv ").rstrip("."))


@contextmanager
def _dotenv_warnings() -> Iterator[list[str]]:
    """python-dotenv logs unparsable lines; collect them so they reach the user as our warnings."""
    logger = logging.getLogger("dotenv.main")
    messages: list[str] = []
    handler = _Collect(messages)
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield messages
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
