"""The one reader of user-supplied files: regular files only, a cap per kind, UTF-8 text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dialectic.core import files as user_files
from dialectic.core.errors import EXIT_CONFIG_ERROR, EXIT_INVALID_ARGS, DialecticError
from dialectic.core.files import (
    ANSWERS_FILE,
    CONFIG_FILE,
    ENV_FILE,
    PROBLEM_FILE,
    PROMPT_FILE,
    FileKind,
    describe_size,
    read_user_bytes,
    read_user_text,
    try_read_user_text,
)

SMALL = FileKind("test file", 10, DialecticError)


@pytest.mark.parametrize(
    ("kind", "exit_code"),
    [
        (PROBLEM_FILE, EXIT_INVALID_ARGS),
        (ANSWERS_FILE, EXIT_INVALID_ARGS),
        (ENV_FILE, EXIT_INVALID_ARGS),
        (CONFIG_FILE, EXIT_CONFIG_ERROR),
        (PROMPT_FILE, EXIT_CONFIG_ERROR),
    ],
)
def test_each_kind_raises_its_own_exit_code(kind: FileKind, exit_code: int) -> None:
    with pytest.raises(DialecticError) as info:
        read_user_text(Path("/dev/zero"), kind)
    assert info.value.exit_code == exit_code
    assert str(info.value) == f"{kind.label} /dev/zero is a device, not a regular file"


def test_caps_are_the_documented_ones() -> None:
    assert [describe_size(k.max_bytes) for k in (PROBLEM_FILE, CONFIG_FILE, PROMPT_FILE, ANSWERS_FILE, ENV_FILE)] == [
        "1 MB",
        "1 MB",
        "256 KB",
        "1 MB",
        "256 KB",
    ]


def test_a_regular_utf8_file_is_read_and_a_bom_dropped(tmp_path: Path) -> None:
    path = tmp_path / "p.md"
    path.write_bytes(b"\xef\xbb\xbfcaf\xc3\xa9\n")
    assert read_user_text(path, PROBLEM_FILE) == "café\n"


def test_a_symlink_to_a_regular_file_is_followed(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("hello", encoding="utf-8")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    assert read_user_text(tmp_path / "link.txt", SMALL) == "hello"


def test_a_symlink_to_a_device_is_refused(tmp_path: Path) -> None:
    (tmp_path / "zero").symlink_to("/dev/zero")
    with pytest.raises(DialecticError, match="is a device, not a regular file"):
        read_user_bytes(tmp_path / "zero", SMALL)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(DialecticError, match="is a FIFO, not a regular file"):
        read_user_bytes(tmp_path / "pipe", SMALL)


def test_missing_and_directory(tmp_path: Path) -> None:
    with pytest.raises(DialecticError, match=r"^test file not found: .*nope\.txt$"):
        read_user_bytes(tmp_path / "nope.txt", SMALL)
    with pytest.raises(DialecticError, match="is a directory"):
        read_user_bytes(tmp_path, SMALL)


def test_proc_files_are_refused_though_they_claim_size_zero() -> None:
    assert Path("/proc/version").stat().st_size == 0
    with pytest.raises(DialecticError, match=r"/proc/version is a system file \(under /proc\)"):
        read_user_bytes(Path("/proc/version"), SMALL)


def test_the_cap_is_exact(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"x" * 10)
    assert read_user_bytes(path, SMALL) == b"x" * 10
    path.write_bytes(b"x" * 11)
    with pytest.raises(DialecticError, match="is larger than 10 bytes, the limit for test files$"):
        read_user_bytes(path, SMALL)


def test_the_cap_holds_when_the_size_lies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file whose stat claims 0 bytes (as /proc files do) is still read no further than cap + 1."""
    path = tmp_path / "f.txt"
    path.write_bytes(b"x" * 1000)
    real_fstat = os.fstat

    def lying_fstat(fd: int) -> os.stat_result:
        info = list(real_fstat(fd))
        info[6] = 0  # st_size
        return os.stat_result(info)

    monkeypatch.setattr(user_files.os, "fstat", lying_fstat)
    with pytest.raises(DialecticError, match="is larger than 10 bytes"):
        read_user_bytes(path, SMALL)


def test_a_raise_hint_is_appended_to_the_size_message(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"x" * 11)
    with pytest.raises(DialecticError, match="the limit for test files; raise it like this$"):
        read_user_bytes(path, SMALL.with_limit(10, "raise it like this"))


@pytest.mark.parametrize("data", [b"\xff\xfe\x00\x01", b"abc\x00def", "caf\xe9".encode("latin-1")])
def test_binary_nul_and_non_utf8_are_not_text(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    with pytest.raises(DialecticError, match="is not a UTF-8 text file"):
        read_user_text(path, SMALL)
    assert try_read_user_text(path, SMALL) == (None, "is not UTF-8 text")


def test_try_read_gives_the_reason_instead_of_raising(tmp_path: Path) -> None:
    assert try_read_user_text(Path("/dev/zero"), SMALL) == (None, "is a device, not a regular file")
    assert try_read_user_text(tmp_path / "nope", SMALL) == (None, "not found")
    (tmp_path / "ok.txt").write_text("fine", encoding="utf-8")
    assert try_read_user_text(tmp_path / "ok.txt", SMALL) == ("fine", None)
