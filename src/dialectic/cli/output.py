"""Writing a finished debate out: the solution, the JSON export, the Markdown report.

Every output path is checked by :func:`check_output` before the work that produces it
starts (before the first LLM call), so a path that can never be written fails in a second,
not after a paid debate. Files are written atomically (a temporary file in the same
directory, then a rename), so an interrupted write never leaves half a file where a
previous good one was, and with the permissions the umask gives a new file.

``/dev/null`` is accepted as an output and means "discard it", as in a shell; any other
device, FIFO or socket, and anything under ``/proc``, ``/sys`` or ``/dev``, is refused.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dialectic.cli.console import Terminal
from dialectic.core.domain import DebateState
from dialectic.core.errors import DialecticError, InvalidArgumentsError
from dialectic.core.files import special_file_kind, system_directory_of
from dialectic.reporting.export import export_json
from dialectic.reporting.report import render_report

REPORT_SUFFIX = ".md"
NEW_FILE_MODE = 0o666
"""What ``open(path, "w")`` would ask for; the umask takes its share."""


@dataclass(frozen=True)
class OutputTarget:
    """A checked output path: a file, a directory to write ``<debate-id>.md`` into, or the null device."""

    path: Path
    into_directory: bool = False
    discard: bool = False

    def file_for(self, debate_id: str, suffix: str) -> Path:
        """The file to write: ``<dir>/<debate-id><suffix>`` for a directory, else the path itself."""
        return self.path / f"{debate_id}{suffix}" if self.into_directory else self.path


def check_output(path: str | Path, flag: str, *, directory_ok: bool = False) -> OutputTarget:
    """Check that ``path`` can be written, creating its missing parent directories.

    Refused: an existing directory (unless ``directory_ok``: then the output goes inside it,
    as it does for a path ending in ``/``), an existing non-regular file (``/dev/null``
    excepted), a system path, a parent that is a file, and a directory we cannot write in.
    """
    raw = str(path)
    if not raw.strip():
        raise InvalidArgumentsError(f"{flag} needs a path")
    try:
        return _checked(raw, flag, directory_ok=directory_ok)
    except OSError as exc:  # e.g. a parent we may not even look into
        raise InvalidArgumentsError(f"{flag} {raw}: {exc.strerror or exc}") from None


def _checked(raw: str, flag: str, *, directory_ok: bool) -> OutputTarget:
    as_directory = raw.endswith(("/", os.sep))
    target = Path(raw).expanduser()
    if target.exists():
        return _existing(target, flag, directory_ok=directory_ok)
    if as_directory:
        if not directory_ok:
            raise InvalidArgumentsError(f"{flag} {raw} names a directory; give a file path")
        _make_directory(target, flag, raw)
        _check_writable(target, flag, raw)
        return OutputTarget(target, into_directory=True)
    _refuse_system_path(target.absolute(), flag, raw)
    _make_directory(target.parent, flag, raw)
    _check_writable(target.parent, flag, raw)
    return OutputTarget(target)


def _existing(target: Path, flag: str, *, directory_ok: bool) -> OutputTarget:
    """An existing path; a symlink is written through (the link stays, its file is replaced)."""
    resolved = target.resolve()
    where = resolved if target.is_symlink() else target
    mode = resolved.stat().st_mode
    if stat.S_ISDIR(mode):
        if not directory_ok:
            raise InvalidArgumentsError(f"{flag} {target} is a directory; give a file path")
        _refuse_system_path(resolved, flag, str(target))
        _check_writable(resolved, flag, str(target))
        return OutputTarget(where, into_directory=True)
    if _is_null_device(resolved):
        return OutputTarget(resolved, discard=True)
    if not stat.S_ISREG(mode):
        raise InvalidArgumentsError(f"{flag} {target} is {special_file_kind(mode)}, not a regular file")
    _refuse_system_path(resolved, flag, str(target))
    _check_writable(resolved.parent, flag, str(target))
    return OutputTarget(where)


def _is_null_device(path: Path) -> bool:
    return path.resolve() == Path(os.devnull).resolve()


def _refuse_system_path(path: Path, flag: str, raw: str) -> None:
    system = system_directory_of(path.resolve())
    if system is not None:
        raise InvalidArgumentsError(f"{flag} {raw} is under {system}, where no output may be written")


def _make_directory(directory: Path, flag: str, raw: str) -> None:
    for ancestor in (directory, *directory.parents):
        if ancestor.exists():
            if not ancestor.is_dir():
                raise InvalidArgumentsError(f"{flag} {raw}: {ancestor} is a file, not a directory")
            break
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidArgumentsError(f"{flag} {raw}: cannot create {directory}: {exc.strerror or exc}") from None


def _check_writable(directory: Path, flag: str, raw: str) -> None:
    """Create and remove a temporary file there: the only test that holds for root and odd file systems."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".dialectic-probe-", dir=directory)
    except OSError as exc:
        raise InvalidArgumentsError(f"{flag} {raw}: cannot write in {directory}: {exc.strerror or exc}") from None
    os.close(fd)
    Path(probe).unlink(missing_ok=True)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically, creating parent directories as needed.

    The new file gets ``0o666`` less the umask, as any file the user's shell would create
    (``mkstemp`` alone would leave it readable by its owner only).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.chmod(temp, NEW_FILE_MODE & ~current_umask())
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise DialecticError(f"cannot write {path}: {exc.strerror or exc}") from None


def write_output(target: OutputTarget, text: str) -> None:
    """Write ``text`` to a checked target (nothing for ``/dev/null``)."""
    if not target.discard:
        write_atomic(target.path, text)


def current_umask() -> int:
    """The process umask (reading it means setting it; it is put back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def report_path(path: Path) -> Path:
    return path if path.suffix.lower() == REPORT_SUFFIX else path.with_name(path.name + REPORT_SUFFIX)


def report_file(target: OutputTarget, debate_id: str) -> Path:
    """Where the report of ``debate_id`` goes: ``<dir>/<id>.md``, or the path with ``.md`` added if missing."""
    if target.into_directory:
        return target.file_for(debate_id, REPORT_SUFFIX)
    return target.path if target.discard else report_path(target.path)


def check_report(path: str | Path, flag: str) -> OutputTarget:
    """Check a report path: a directory (existing, or ending in ``/``) gets ``<debate-id>.md`` inside."""
    raw = str(path)
    given = Path(raw).expanduser()
    if raw.endswith(("/", os.sep)) or given.is_dir():
        return check_output(raw, flag, directory_ok=True)
    if given.exists() and _is_null_device(given):
        return OutputTarget(Path(os.devnull), discard=True)
    return check_output(report_path(given), flag)


def solution_text(state: DebateState) -> str:
    return state.final_solution.description.rstrip() + "\n" if state.final_solution else ""


def emit_results(
    state: DebateState,
    *,
    output: OutputTarget | None,
    report: OutputTarget | None,
    verbose: bool,
    term: Terminal,
) -> None:
    """The solution to stdout (or ``output``), then the report; a failed report is only a warning."""
    if output is None:
        sys.stdout.write(solution_text(state))
        sys.stdout.flush()
    elif output.path.suffix.lower() == ".json":
        write_output(output, export_json(state))
    else:
        write_output(output, solution_text(state))
    if report is not None:
        write_report(state, report, verbose=verbose, term=term, fatal=False)


def write_report(state: DebateState, target: OutputTarget, *, verbose: bool, term: Terminal, fatal: bool) -> None:
    """Render and write the Markdown report of ``state`` where ``target`` says."""
    path = report_file(target, state.id)
    try:
        write_output(OutputTarget(path, discard=target.discard), render_report(state, verbose=verbose))
    except Exception as exc:  # the report is a by-product of a saved debate: never lose the run over it
        if fatal:
            raise
        term.warning(f"could not generate the report {path}: {exc}")
        return
    if not target.discard:
        term.line(f"Generated report: {path}")
