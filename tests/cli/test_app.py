"""The error boundary of the CLI, run in-process (no debate is started by these)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialectic.cli import app as cli_app
from dialectic.cli.output import report_path, write_atomic


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli_app.run(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DIALECTIC_HOME", str(tmp_path / "home"))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["debate", "x", "--rouds", "2"], "unknown option --rouds — did you mean `--rounds`?"),
        (["debat", "x"], "unknown command 'debat' — did you mean `debate`?"),
        (["memory", "lst"], "unknown command 'lst' — did you mean `list`?"),
    ],
)
def test_a_misspelt_flag_or_command_gets_the_one_did_you_mean(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The wording of a misspelt configuration key, API field or provider (core/spelling.py), not click's."""
    code, _, err = run(argv, capsys)
    assert code == 2 and err.startswith(f"error: {message} (see '")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["debate"], "no problem given"),
        (["debate", "x", "--rounds", "abc"], "--rounds"),
        (["debate", "x", "--no-such-flag"], "unknown option --no-such-flag"),
        (["frobnicate"], "unknown command 'frobnicate'"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and needle in err


def test_no_arguments_show_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([], capsys)
    assert code == 0
    for command in ("debate", "resume", "list", "show", "export", "report"):
        assert command in out


def test_unexpected_exceptions_are_one_line_without_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom(*args: object, **kwargs: object) -> str:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("dialectic.cli.debate_run.require_one_problem", boom)
    code, _, err = run(["debate", "x"], capsys)
    assert code == 1
    assert err == "error: unexpected RuntimeError: disk on fire\n"
    code, _, err = run(["debate", "x", "--verbose"], capsys)
    assert code == 1
    assert "Traceback" in err


def test_unknown_debate_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["show", "deb-20250101-000000-ABCD"], capsys)
    assert code == 2
    assert "no debate with id" in err


def test_report_path_appends_md(tmp_path: Path) -> None:
    assert report_path(Path("out/report")) == Path("out/report.md")
    assert report_path(Path("r.MD")) == Path("r.MD")
    assert report_path(Path("r.txt")) == Path("r.txt.md")


def test_write_atomic_creates_parents_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "out.txt"
    write_atomic(target, "one")
    write_atomic(target, "two")
    assert target.read_text(encoding="utf-8") == "two"
    assert [p.name for p in target.parent.iterdir()] == ["out.txt"]


def test_version_is_the_package_metadatas_and_pyprojects(capsys: pytest.CaptureFixture[str]) -> None:
    import tomllib
    from importlib import metadata
    from pathlib import Path

    code, out, err = run(["--version"], capsys)
    assert code == 0 and err == ""
    assert out == f"dialectic {metadata.version('dialectic-debate')}\n"
    with (Path(__file__).resolve().parents[2] / "pyproject.toml").open("rb") as file:
        assert out == f"dialectic {tomllib.load(file)['project']['version']}\n"


def test_help_shows_flags_without_a_value_type(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["debate", "--help"], capsys)
    assert code == 0
    flag_lines = [line for line in out.splitlines() if line.strip().startswith(("--clarify", "-v, --verbose"))]
    assert len(flag_lines) == 2, out
    for line in flag_lines:
        assert "<bool>" not in line and "BOOLEAN" not in line and "<" not in line.split("  ")[0]
    assert "--rounds <int>" in out or "--rounds INTEGER" in out  # options that take a value still say so


def test_verbose_error_detail_is_redacted(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from dialectic.core.errors import BadRequest

    key = "sk-live-0123456789abcdefXYZ"
    monkeypatch.setenv("OPENAI_API_KEY", key)

    def rejected(*args: object, **kwargs: object) -> str:
        raise BadRequest(f"openai: bad request (400): key {key} invalid", detail=f"Authorization: Bearer {key}")

    monkeypatch.setattr("dialectic.cli.debate_run.resolve_problem", rejected)
    code, out, err = run(["debate", "x", "--verbose"], capsys)
    assert code == 3
    assert key not in err
    shown = [line for line in err.splitlines() if not line.startswith("warning: ")]
    assert shown == ["error: openai: bad request (400): key [redacted] invalid", "Authorization: [redacted]"]


def test_no_help_lists_a_camel_case_alias(capsys: pytest.CaptureFixture[str]) -> None:
    """The seed's ``--problemDescription`` is still taken, but no command's help shows such a spelling."""
    import re

    import typer.main

    group = typer.main.get_command(cli_app.app)
    assert isinstance(group, typer.main.TyperGroup)
    for name in group.commands:
        code, out, _ = run([name, "--help"], capsys)
        assert code == 0, name
        assert not re.findall(r"--[a-z]+[A-Z]\w*", out), (name, out)


def test_each_commands_two_files_are_named_alike() -> None:
    """``X_command.py`` (flags and help, loaded with the app) and ``X_run.py`` (the work, loaded when it runs)."""
    folder = Path(cli_app.__file__).parent
    commands = sorted(p.name.removesuffix("_command.py") for p in folder.glob("*_command.py"))
    assert commands and [name for name in commands if not (folder / f"{name}_run.py").exists()] == []
