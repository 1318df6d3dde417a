"""Problem resolution and .env loading."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialectic.cli.inputs import load_env_file, resolve_problem
from dialectic.core.errors import EXIT_INVALID_ARGS, InvalidArgumentsError


def test_problem_argument_is_trimmed() -> None:
    assert resolve_problem("  Design a cache \n", None) == "Design a cache"


def test_problem_file_keeps_raw_content(tmp_path: Path) -> None:
    path = tmp_path / "p.md"
    path.write_text("# Title\n\n  indented line\n", encoding="utf-8")
    assert resolve_problem(None, path) == "# Title\n\n  indented line\n"


@pytest.mark.parametrize(
    ("problem", "make_file", "message"),
    [
        (None, None, "no problem given"),
        ("x", "text", "not both"),
        ("   ", None, "empty"),
        (None, "missing", "not found"),
        (None, "dir", "is a directory"),
        (None, "blank", "is empty"),
        (None, "binary", "is not a UTF-8 text file"),
        (None, "nul", "is not a UTF-8 text file"),
    ],
)
def test_bad_problem_input_is_invalid_arguments(
    tmp_path: Path, problem: str | None, make_file: str | None, message: str
) -> None:
    path: Path | None = None
    if make_file is not None:
        path = tmp_path / "problem.md"
        if make_file == "text":
            path.write_text("a problem", encoding="utf-8")
        elif make_file == "dir":
            path.mkdir()
        elif make_file == "blank":
            path.write_text(" \n\t\n", encoding="utf-8")
        elif make_file == "binary":
            path.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00\x01")
        elif make_file == "nul":
            path.write_bytes(b"abc\x00def")
    with pytest.raises(InvalidArgumentsError, match=message) as info:
        resolve_problem(problem, path)
    assert info.value.exit_code == EXIT_INVALID_ARGS


def test_env_file_is_parsed_as_dotenv(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text(
        """
# a comment
OPENAI_API_KEY=sk-123
export BASE='http://localhost:11434/v1'
QUOTED="with spaces" # trailing comment
PLAIN=value # comment
ESCAPED="tab\\there \\"quoted\\""
MULTI="line one
line two"
EMPTY=
 SPACED = padded
""",
        encoding="utf-8",
    )
    environ: dict[str, str] = {}
    result = load_env_file(path, explicit=True, environ=environ)
    assert environ == {
        "OPENAI_API_KEY": "sk-123",
        "BASE": "http://localhost:11434/v1",
        "QUOTED": "with spaces",
        "PLAIN": "value",
        "ESCAPED": 'tab\there "quoted"',
        "MULTI": "line one\nline two",
        "EMPTY": "",
        "SPACED": "padded",
    }
    assert result.loaded == list(environ)
    assert result.warnings == []


def test_unparsable_env_line_is_a_warning_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text('GOOD=1\nnot an assignment = = "\nLATER=2\n', encoding="utf-8")
    environ: dict[str, str] = {}
    result = load_env_file(path, explicit=True, environ=environ)
    assert environ["GOOD"] == "1"
    assert len(result.warnings) == 1
    assert "line 2" in result.warnings[0] and str(path) in result.warnings[0]


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_env_file_that_is_a_device_is_refused(device: str) -> None:
    with pytest.raises(InvalidArgumentsError, match="is a device, not a regular file"):
        load_env_file(Path(device), explicit=True, environ={})


def test_env_file_does_not_override_existing_variables(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("A=from-file\nB=from-file\n", encoding="utf-8")
    environ = {"A": "already-set"}
    loaded = load_env_file(path, explicit=True, environ=environ)
    assert loaded.loaded == ["B"]
    assert environ == {"A": "already-set", "B": "from-file"}


def test_missing_default_env_file_is_fine(tmp_path: Path) -> None:
    environ: dict[str, str] = {}
    assert load_env_file(tmp_path / ".env", explicit=False, environ=environ).loaded == []
    assert environ == {}


def test_missing_explicit_env_file_is_invalid_arguments(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentsError, match="env file not found"):
        load_env_file(tmp_path / "prod.env", explicit=True, environ={})
