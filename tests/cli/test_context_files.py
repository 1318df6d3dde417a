"""--context DIR: gathering a directory's text files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dialectic.context.files import gather_context
from dialectic.core.errors import InvalidArgumentsError


def make_tree(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n", encoding="utf-8")
    (root / "README.md").write_text("# Project\n", encoding="utf-8")
    (root / ".env").write_text("SECRET=1\n", encoding="utf-8")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (root / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (root / "empty.txt").write_text("", encoding="utf-8")


def test_text_files_are_gathered_sorted_under_headers(tmp_path: Path) -> None:
    make_tree(tmp_path)
    text = gather_context(tmp_path).text
    assert text == "### README.md\n\n# Project\n\n### src/app.py\n\nprint('hi')\n"


def test_hidden_binary_and_non_utf8_files_are_skipped(tmp_path: Path) -> None:
    make_tree(tmp_path)
    gathered = gather_context(tmp_path)
    for skipped in (".env", "SECRET", ".git", "logo.png", "latin1.txt", "empty.txt"):
        assert skipped not in gathered.text
    assert gathered.skipped == ["latin1.txt (is not UTF-8 text)", "logo.png (is not UTF-8 text)"]


def test_symlinks_leading_outside_the_directory_are_skipped_and_listed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET\n", encoding="utf-8")
    root = tmp_path / "ctx"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "notes.md").write_text("notes\n", encoding="utf-8")
    (root / "secret-link.txt").symlink_to(outside / "secret.txt")
    (root / "zero").symlink_to("/dev/zero")
    (root / "inside-link.md").symlink_to(root / "docs" / "notes.md")
    (root / "outside-dir").symlink_to(outside, target_is_directory=True)
    gathered = gather_context(root)
    assert "TOP SECRET" not in gathered.text
    assert "### docs/notes.md" in gathered.text and "### inside-link.md" in gathered.text
    assert gathered.skipped == [
        "outside-dir/ (a symlinked directory)",
        "secret-link.txt (links outside the context directory)",
        "zero (links outside the context directory)",
    ]


def test_fifos_and_oversize_files_inside_are_skipped_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "huge.log").write_bytes(b"x" * (1024 * 1024 + 1))
    (tmp_path / "ok.txt").write_text("fine\n", encoding="utf-8")
    gathered = gather_context(tmp_path)
    assert gathered.text == "### ok.txt\n\nfine\n"
    assert gathered.skipped == [
        "huge.log (is larger than 1 MB, the limit for context files)",
        "pipe (is a FIFO, not a regular file)",
    ]


def test_the_limit_cuts_and_names_what_was_left_out(tmp_path: Path) -> None:
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / name).write_text(name[0] * 100, encoding="utf-8")
    text = gather_context(tmp_path, max_chars=150).text
    assert text.startswith("### a.txt\n\n" + "a" * 100)
    assert "### b.txt" in text
    assert "b" * 100 not in text
    assert text.rstrip().endswith("[context limited to 150 characters; left out: b.txt (cut), c.txt]")


def test_an_empty_directory_gives_no_context(tmp_path: Path) -> None:
    assert gather_context(tmp_path).text == ""


def test_missing_path_or_file_is_invalid_arguments(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentsError, match="not found"):
        gather_context(tmp_path / "nope")
    file = tmp_path / "f.txt"
    file.write_text("x", encoding="utf-8")
    with pytest.raises(InvalidArgumentsError, match="not a directory"):
        gather_context(file)


def test_symlink_loops_fifos_and_names_that_are_not_utf8_are_skipped_and_listed(tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_text("fine\n", encoding="utf-8")
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / os.fsdecode(b"caf\xe9.txt")).write_text("latin-1 name\n", encoding="utf-8")
    gathered = gather_context(tmp_path)
    assert gathered.text == "### ok.txt\n\nfine\n"
    assert gathered.skipped == [
        "a (is a symlink loop)",
        "b (is a symlink loop)",
        "caf\\xe9.txt (its name is not UTF-8)",
        "loop (is a symlink loop)",
        "pipe (is a FIFO, not a regular file)",
    ]
    gathered.skipped_summary().encode("utf-8")  # printable and storable
