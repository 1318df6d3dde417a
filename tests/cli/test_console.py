"""The console's plain lines: written directly when no terminal is there, byte for byte what Rich would print."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.text import Text

from dialectic.cli.console import Terminal

LINES = [
    "Started debate deb-20261126-044402-7D23: 3 agents, 1 round",
    "critique: Architect → Performance (1,234 chars)",
    "",
    " ",
    "  leading and trailing  ",
    "x" * 500,
    "宽字符 and emoji 😀 :smile: [bold]not markup[/]",
    "tab\there",
    "two\nlines",
    "carriage\rreturn and bell\x07",
    "\x1b[31mescape",
    "no\u00a0break",
]


def rich_prints(text: str, style: str | None) -> str:
    stream = io.StringIO()
    Console(file=stream, highlight=False, soft_wrap=True, emoji=False).print(Text(text, style=style or ""))
    return stream.getvalue()


@pytest.mark.parametrize("style", [None, "yellow"])
@pytest.mark.parametrize("text", LINES)
def test_a_line_without_a_terminal_is_what_rich_prints(text: str, style: str | None) -> None:
    stream = io.StringIO()
    Terminal(stream).line(text, style=style)
    assert stream.getvalue() == rich_prints(text, style)


def test_forced_colours_still_go_through_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    stream = io.StringIO()
    Terminal(stream).warning("careful")
    assert "\x1b[" in stream.getvalue() and "warning: careful" in stream.getvalue()
