"""The agents' tools over a context directory: every escape refused with an error the model sees."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from dialectic.context.tools import MAX_ARGUMENT_CHARS, ContextDirectory, ToolLimits

SECRET = "TOP SECRET do not leak"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n", encoding="utf-8")
    root = tmp_path / "ctx"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "cache.py").write_text("".join(f"line {i}\n" for i in range(1, 101)), encoding="utf-8")
    (root / "README.md").write_text("# Project\nA cache service.\n", encoding="utf-8")
    (root / ".env").write_text(f"KEY={SECRET}\n", encoding="utf-8")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text(SECRET, encoding="utf-8")
    (root / ".gitignore").write_text("build/\n*.log\n", encoding="utf-8")
    (root / "build").mkdir()
    (root / "build" / "out.txt").write_text(SECRET, encoding="utf-8")
    (root / "debug.log").write_text(SECRET, encoding="utf-8")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (root / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (root / "secret-link.txt").symlink_to(outside / "secret.txt")
    (root / "zero").symlink_to("/dev/zero")
    (root / "outside-dir").symlink_to(outside, target_is_directory=True)
    (root / "inside-link.md").symlink_to(root / "README.md")
    os.mkfifo(root / "pipe")
    return root


@pytest.fixture
def directory(tree: Path, tmp_path: Path) -> Iterator[ContextDirectory]:
    opened = ContextDirectory.open(tree, cache_dir=tmp_path / "cache")
    yield opened
    opened.close()


def test_only_visible_readable_text_files_are_offered(directory: ContextDirectory) -> None:
    assert list(directory.texts) == ["README.md", "inside-link.md", "src/pkg/cache.py"]
    assert directory.skipped["zero"] == "links outside the context directory"
    assert directory.skipped["secret-link.txt"] == "links outside the context directory"
    assert directory.skipped["pipe"] == "is a FIFO, not a regular file"
    assert directory.skipped["logo.png"] == "is not UTF-8 text"
    assert directory.skipped["outside-dir"] == "a symlinked directory"


@pytest.mark.parametrize(
    ("path", "needle"),
    [
        ("../outside/secret.txt", "goes up with '..'"),
        ("src/../../outside/secret.txt", "goes up with '..'"),
        ("/etc/passwd", "absolute path"),
        ("~/notes.txt", "absolute path"),
        ("C:\\Windows\\win.ini", "absolute path"),
        ("secret-link.txt", "leads outside the context directory"),
        ("outside-dir/secret.txt", "leads outside the context directory"),
        ("zero", "leads outside the context directory"),
        ("pipe", "is a FIFO, not a regular file"),
        (".env", "is hidden"),
        (".git/config", "is hidden"),
        ("build/out.txt", ".gitignored"),
        ("debug.log", ".gitignored"),
        ("logo.png", "is not UTF-8 text"),
        ("latin1.txt", "is not UTF-8 text"),
        ("src", "is a directory"),
        ("missing.md", "no readable file"),
    ],
)
def test_every_escape_is_an_error_result(directory: ContextDirectory, path: str, needle: str) -> None:
    outcome = directory.file_read(path)
    assert outcome.error is not None and needle in outcome.error
    assert outcome.text.startswith("error: ")
    assert SECRET not in outcome.text


def test_an_oversize_file_is_refused(tree: Path, tmp_path: Path) -> None:
    (tree / "huge.txt").write_text("x" * (1024 * 1024 + 1), encoding="utf-8")
    opened = ContextDirectory.open(tree, cache_dir=tmp_path / "cache2")
    try:
        outcome = opened.file_read("huge.txt")
        assert outcome.error is not None and "larger than 1 MB" in outcome.error
    finally:
        opened.close()


def test_file_read_returns_a_line_range_with_a_header(directory: ContextDirectory) -> None:
    outcome = directory.file_read("src/pkg/cache.py", start_line=10, end_line=12)
    assert outcome.error is None
    assert outcome.text.splitlines() == [
        "src/pkg/cache.py (lines 10-12 of 100)",
        "line 10",
        "line 11",
        "line 12",
        "[more: read on with start_line=13]",
    ]


def test_file_read_is_capped_in_lines_and_characters(tree: Path, tmp_path: Path) -> None:
    opened = ContextDirectory.open(tree, cache_dir=tmp_path / "c", limits=ToolLimits(read_lines=5, read_chars=30))
    try:
        by_lines = opened.file_read("src/pkg/cache.py")
        assert by_lines.text.splitlines()[0] == "src/pkg/cache.py (lines 1-4 of 100)"  # 30 characters: four lines
        assert by_lines.text.endswith("[more: read on with start_line=5]")
        wide = opened.file_read("src/pkg/cache.py", start_line=1, end_line=100)
        assert "lines 1-4 of 100" in wide.text
    finally:
        opened.close()


def test_bad_line_ranges_are_errors(directory: ContextDirectory) -> None:
    assert "past its end" in (directory.file_read("README.md", start_line=9).error or "")
    assert "before start_line" in (directory.file_read("README.md", start_line=2, end_line=1).error or "")


def test_list_files_lists_folders_and_patterns(directory: ContextDirectory) -> None:
    assert directory.list_files().text == "README.md (2 lines)\ninside-link.md (2 lines)\nsrc/pkg/cache.py (100 lines)"
    assert directory.list_files("src", "*.py").text == "src/pkg/cache.py (100 lines)"
    assert directory.list_files(pattern="*.rs").text == "no files match"
    assert "is a file" in (directory.list_files("README.md").error or "")
    assert "goes up" in (directory.list_files("..").error or "")
    assert "no folder" in (directory.list_files("build").error or "")


def test_a_session_caps_the_characters_of_one_contribution(tree: Path, tmp_path: Path) -> None:
    opened = ContextDirectory.open(tree, cache_dir=tmp_path / "c", limits=ToolLimits(contribution_chars=100))
    try:
        session = opened.session()
        first = session.call("file_read", {"path": "src/pkg/cache.py"})
        assert first.error is None and first.text.endswith("[cut: this contribution's tool output reached its limit]")
        spent = session.call("file_read", {"path": "README.md"})
        assert spent.error is not None and "limit of 100 characters" in spent.error
    finally:
        opened.close()


@pytest.mark.parametrize(
    ("name", "arguments", "raw", "needle"),
    [
        ("rm_rf", {}, "", "unknown tool 'rm_rf'"),
        ("file_read", {}, "{}", "needs the argument path"),
        ("file_read", {"path": 3}, "", "path must be a string"),
        ("file_read", {"path": "README.md", "start_line": "two"}, "", "start_line must be an integer"),
        ("file_read", {"path": "README.md", "mode": "w"}, "", "has no argument mode"),
        ("context_search", {}, "not json at all", "must be a JSON object"),
        ("context_search", {"query": "  "}, "", "query must not be empty"),
    ],
)
def test_bad_calls_are_errors_the_model_sees(
    directory: ContextDirectory, name: str, arguments: dict[str, object], raw: str, needle: str
) -> None:
    outcome = directory.session().call(name, arguments, raw)
    assert outcome.error is not None and needle in outcome.error
    assert outcome.text == f"error: {outcome.error}"


def test_overview_names_the_files_for_the_prompt(directory: ContextDirectory) -> None:
    assert directory.overview(max_entries=2) == (
        "3 text files.\n- README.md (2 lines)\n- inside-link.md (2 lines)\n- … and 1 more (use list_files)"
    )


@pytest.mark.parametrize("bad", ["README\x00.md", "src/\x00", "\x00", "caf\udce9.md", "\ud800"])
def test_a_path_no_file_system_takes_is_an_error_result(directory: ContextDirectory, bad: str) -> None:
    """A NUL byte or a lone surrogate (from JSON's ``\\u`` escapes) is answered, never raised."""
    for outcome in (directory.file_read(bad), directory.list_files(bad), directory.list_files(".", bad)):
        assert outcome.error is not None and outcome.text.startswith("error: ")
        assert "NUL" in outcome.error or "lone surrogate" in outcome.error
    searched = directory.context_search(bad)
    assert searched.error is not None and ("NUL" in searched.error or "lone surrogate" in searched.error)


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("file_read", {"path": "README.md\x00"}),
        ("list_files", {"path": "src", "pattern": "*\x00"}),
        ("context_search", {"query": "cache\ud800"}),
    ],
)
def test_a_call_with_a_nul_or_a_lone_surrogate_is_an_error_the_model_sees(
    directory: ContextDirectory, name: str, arguments: dict[str, object]
) -> None:
    outcome = directory.session().call(name, arguments)
    assert outcome.error is not None and outcome.text == f"error: {outcome.error}"
    assert outcome.error.startswith(f"{name}: ")


@pytest.fixture
def loops(tmp_path: Path) -> Path:
    """A directory with a self loop, a two-link loop, a loop through a folder, a FIFO and a name that is not UTF-8."""
    root = tmp_path / "loops"
    root.mkdir()
    (root / "notes.md").write_text("token bucket\n", encoding="utf-8")
    (root / "loop").symlink_to("loop")
    (root / "a").symlink_to("b")
    (root / "b").symlink_to("a")
    (root / "sub").mkdir()
    (root / "sub" / "up").symlink_to("../sub/up")
    os.mkfifo(root / "pipe")
    (root / os.fsdecode(b"caf\xe9.md")).write_text("latin-1 name\n", encoding="utf-8")
    return root


def test_symlink_loops_are_skipped_and_read_as_errors(loops: Path, tmp_path: Path) -> None:
    opened = ContextDirectory.open(loops, cache_dir=tmp_path / "cache")
    try:
        assert list(opened.texts) == ["notes.md"]
        assert opened.skipped == {
            "a": "is a symlink loop",
            "b": "is a symlink loop",
            "caf\\xe9.md": "its name is not UTF-8",
            "loop": "is a symlink loop",
            "pipe": "is a FIFO, not a regular file",
            "sub/up": "is a symlink loop",
        }
        for path in ("loop", "a", "sub/up", "sub/up/deeper"):
            outcome = opened.file_read(path)
            assert outcome.error is not None and "symlink loop" in outcome.error, path
        assert opened.list_files().text == "notes.md (1 lines)"
        assert opened.context_search("bucket").text.startswith("1. notes.md:1-1")
    finally:
        opened.close()


@pytest.mark.parametrize(
    ("name", "argument"), [("file_read", "path"), ("list_files", "pattern"), ("context_search", "query")]
)
def test_an_overlong_text_argument_is_refused_before_any_work(
    directory: ContextDirectory, monkeypatch: pytest.MonkeyPatch, name: str, argument: str
) -> None:
    touched: list[str] = []
    for method in ("file_read", "list_files", "context_search"):
        monkeypatch.setattr(directory, method, lambda *a, _m=method, **k: touched.append(_m))
    outcome = directory.session().call(name, {argument: "*" * (MAX_ARGUMENT_CHARS + 1)})
    assert outcome.error is not None and f"more than the {MAX_ARGUMENT_CHARS:,} allowed" in outcome.error
    assert touched == []
