"""The CLI's stderr channel: every progress line, warning and notice goes through one console.

Going through a single Rich console matters when the live display is on: lines printed
through it appear above the display instead of tearing it. When stderr is not a terminal
the same calls produce plain, uncoloured lines. Every line is redacted
(:func:`~dialectic.cli.redaction.redact`): a provider's error text may quote a key.
"""

from __future__ import annotations

import sys
from typing import TextIO

from rich.console import Console
from rich.text import Text

from dialectic.core.redaction import redact


class Terminal:
    def __init__(self, stream: TextIO | None = None) -> None:
        target = stream if stream is not None else sys.stderr
        self.interactive = target.isatty()
        """True when stderr is a terminal: the live display is used instead of plain lines."""
        self.console = Console(file=target, highlight=False, soft_wrap=True, emoji=False)
        self._plain = not (self.interactive or self.console.is_terminal or self.console.is_jupyter) and (
            self.console.color_system is None
        )
        """True when Rich would print a line as it is: no terminal, no colours (``FORCE_COLOR`` unset)."""

    def line(self, text: str, style: str | None = None) -> None:
        """Print ``text`` with any key or token redacted (no markup is interpreted)."""
        shown = redact(text)
        if self._plain and shown.isprintable():
            # Exactly what Rich writes for one printable line without a terminal (no wrapping, no
            # style), without its rendering: progress prints a line or two per call.
            self.console.file.write(shown + "\n")
            self.console.file.flush()
            return
        self.console.print(Text(shown, style=style or ""))

    def warning(self, text: str) -> None:
        self.line(f"warning: {text}", style="yellow")

    def prompt(self, text: str) -> None:
        """Write ``text`` without a newline (for ``> `` before reading an answer)."""
        self.console.print(Text(text), end="")
        self.console.file.flush()
