"""The one checker of output paths, and atomic writes that respect the umask."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from dialectic.cli.output import OutputTarget, check_output, check_report, report_file, write_atomic, write_output
from dialectic.core.errors import EXIT_INVALID_ARGS, InvalidArgumentsError


@pytest.fixture
def umask() -> Iterator[None]:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_missing_parent_directories_are_created(tmp_path: Path) -> None:
    target = check_output(tmp_path / "a" / "b" / "out.md", "--output")
    assert target == OutputTarget(tmp_path / "a" / "b" / "out.md")
    assert (tmp_path / "a" / "b").is_dir()
    assert list((tmp_path / "a" / "b").iterdir()) == []  # the write probe leaves nothing behind


@pytest.mark.parametrize(
    ("make", "given", "needle"),
    [
        ("file", "afile/out.md", "afile is a file, not a directory"),
        ("file", "afile/deeper/out.md", "afile is a file, not a directory"),
        ("dir", "adir", "is a directory; give a file path"),
        ("none", "newdir/", "names a directory; give a file path"),
        ("fifo", "pipe", "is a FIFO, not a regular file"),
        ("none", "/proc/version", "is under /proc, where no output may be written"),
        ("none", "/proc/new-file.md", "is under /proc"),
        ("none", "/sys/out.md", "is under /sys"),
        ("none", "/dev/zero", "is a device, not a regular file"),
    ],
)
def test_unusable_outputs_are_invalid_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: str, given: str, needle: str
) -> None:
    monkeypatch.chdir(tmp_path)
    if make == "file":
        (tmp_path / "afile").write_text("x", encoding="utf-8")
    elif make == "dir":
        (tmp_path / "adir").mkdir()
    elif make == "fifo":
        os.mkfifo(tmp_path / "pipe")
    with pytest.raises(InvalidArgumentsError, match=needle) as info:
        check_output(given, "--output")
    assert info.value.exit_code == EXIT_INVALID_ARGS
    assert str(info.value).startswith(f"--output {given}")
    assert not (tmp_path / "newdir").exists()


def test_an_unwritable_directory_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Probed by creating a file there (permission bits say nothing to root or a read-only mount)."""

    def refuse(*args: object, **kwargs: object) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(InvalidArgumentsError, match=r"cannot write in .*: Permission denied"):
        check_output(tmp_path / "out.md", "--output")


def test_dev_null_means_discard(tmp_path: Path) -> None:
    target = check_output("/dev/null", "--output")
    assert target.discard
    write_output(target, "thrown away")
    assert stat.S_ISCHR(Path("/dev/null").stat().st_mode)
    assert check_report("/dev/null", "--report").discard


def test_report_into_a_directory_is_named_after_the_debate(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    existing = check_report(tmp_path / "reports", "--report")
    assert existing.into_directory
    assert report_file(existing, "deb-1") == tmp_path / "reports" / "deb-1.md"
    created = check_report(f"{tmp_path}/new-reports/", "--report")
    assert created.into_directory and (tmp_path / "new-reports").is_dir()
    assert report_file(created, "deb-2") == tmp_path / "new-reports" / "deb-2.md"


def test_report_file_gets_md_appended(tmp_path: Path) -> None:
    target = check_report(tmp_path / "out" / "summary", "--report")
    assert report_file(target, "deb-1") == tmp_path / "out" / "summary.md"
    assert report_file(check_report(tmp_path / "r.MD", "--report"), "deb-1") == tmp_path / "r.MD"


def test_output_through_a_symlink_replaces_the_linked_file(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("old", encoding="utf-8")
    (tmp_path / "link.md").symlink_to(tmp_path / "real.md")
    target = check_output(tmp_path / "link.md", "--output")
    write_output(target, "new")
    assert (tmp_path / "link.md").is_symlink()
    assert (tmp_path / "real.md").read_text(encoding="utf-8") == "new"


@pytest.mark.usefixtures("umask")
@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_respect_the_umask(tmp_path: Path, mask: int, mode: int) -> None:
    os.umask(mask)
    target = tmp_path / "out.md"
    write_atomic(target, "text")
    assert stat.S_IMODE(target.stat().st_mode) == mode
    write_atomic(target, "again")  # replacing keeps the same rule
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert [p.name for p in tmp_path.iterdir()] == ["out.md"]
