"""Writing a human seat's turns from the command line.

A debate with a seat played by a person (``provider: human``) suspends at each of its turns
(see :mod:`dialectic.engine.seats`); between two runs of the engine the command gets the texts
of the turns it waits for, in this order:

* ``--turn-file [KEY=]FILE`` (``resume``): a file per turn, for the turn ``KEY`` or, without
  one, for the turns waiting in the order they were asked;
* ``--editor``: ``$EDITOR`` (``$VISUAL``) opens on a file holding the turn's prompt; what is
  written below its last line is the turn;
* the terminal: the prompt is shown, and the turn is typed over several lines, ended by a line
  holding only ``.`` or by end of input (Ctrl-D); a first line ``:edit`` opens the editor. At a
  seat with a ``deadline`` the wait ends when it passes: the fallback model plays the turn;
* stdin as a pipe or a file: its text, one turn after another, each ended by a line holding only
  ``.`` or by the end of the input.

A turn that gets no text (the input ran out, the editor was closed without saving) is left
waiting: the command says how to continue (``dialectic resume ID --turn-file FILE``).
"""

from __future__ import annotations

import codecs
import os
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from dialectic.cli.console import Terminal
from dialectic.core.domain import DebateState, HumanTurn, utc_now
from dialectic.core.errors import InvalidArgumentsError
from dialectic.core.files import FileKind, read_user_text
from dialectic.engine.seats import MAX_TURN_BYTES, deadline_passed, turn_texts

TURN_FILE = FileKind("turn file", MAX_TURN_BYTES, InvalidArgumentsError)
"""A turn file's cap is a turn's (:func:`~dialectic.engine.seats.check_turn_text`, the one home of the rules)."""
END_OF_TURN = "."
"""A line holding only this ends a turn typed or piped."""
EDIT_COMMAND = ":edit"
EDITOR_MARK = "---- Write the turn below this line; everything above it is left out. ----"


def read_turn_files(values: list[str]) -> list[tuple[str | None, str]]:
    """``--turn-file [KEY=]FILE`` values as ``(key, text)`` pairs (``None``: the next turn waiting).

    A file that cannot be read, or holds no text, is an invalid argument (exit 2)."""
    texts: list[tuple[str | None, str]] = []
    for value in values:
        key, path = _split(value)
        text = read_user_text(Path(path).expanduser(), TURN_FILE)
        if not text.strip():
            raise InvalidArgumentsError(f"--turn-file {value}: the file is empty; write the seat's turn in it")
        texts.append((key, text))
    return texts


def _split(value: str) -> tuple[str | None, str]:
    """``KEY=FILE`` or ``FILE`` (a file named with ``=`` in it that exists is taken as a file)."""
    key, equals, path = value.partition("=")
    if not equals or Path(value).expanduser().exists() or not key.strip() or not path.strip():
        return None, value
    return key.strip(), path


def turn_heading(turn: HumanTurn) -> str:
    where = f", round {turn.round_number}" if turn.round_number is not None else ""
    return f"{turn.agent_name}'s turn ({turn.activity}{where})"


def turn_prompt_lines(turn: HumanTurn) -> list[str]:
    """What the person is shown: the seat's role (the system prompt) and the turn's instructions."""
    lines = [f"=== {turn_heading(turn)} — key {turn.key} ==="]
    if turn.role_prompt.strip():
        lines += ["--- The seat's role ---", turn.role_prompt.strip()]
    lines += ["--- The turn ---", turn.prompt.strip()]
    deadline = turn.deadline_at()
    if deadline is not None:
        lines.append(f"(deadline: {deadline:%Y-%m-%d %H:%M:%S} UTC; then the fallback model plays the turn)")
    return lines


class LineFeed:
    """stdin's lines, read by a daemon thread: waiting for one can end at a deadline, and the command can
    end while the thread still waits (a blocked read holds up nothing)."""

    _EOF = object()

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lines: queue.Queue[object] = queue.Queue()
        self._thread: threading.Thread | None = None
        self.ended = False

    def next_line(self, timeout: float | None) -> str | None:
        """The next line (without its newline); ``None`` at the end of input; ``TimeoutError`` after ``timeout``."""
        if self.ended:
            return None
        if self._thread is None:
            self._thread = threading.Thread(target=self._read, name="dialectic-stdin", daemon=True)
            self._thread.start()
        try:
            item = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError from None
        if item is self._EOF:
            self.ended = True
            return None
        assert isinstance(item, str)
        return item.rstrip("\r\n")

    def _read(self) -> None:
        try:
            fd = self._stream.fileno()
        except (OSError, ValueError, AttributeError):
            fd = None
        try:
            if fd is None:
                for line in self._stream:
                    self._lines.put(line)
            else:
                self._read_descriptor(fd, getattr(self._stream, "encoding", None) or "utf-8")
        except (OSError, ValueError):
            pass
        self._lines.put(self._EOF)

    def _read_descriptor(self, fd: int, encoding: str) -> None:
        """Lines read from the file descriptor itself: a thread blocked in the buffered ``sys.stdin`` would hold
        its lock, which the interpreter takes as it shuts down (a fatal error at exit)."""
        decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        pending = ""
        while chunk := os.read(fd, 65536):
            *lines, pending = (pending + decoder.decode(chunk)).split("\n")
            for line in lines:
                self._lines.put(line + "\n")
        pending += decoder.decode(b"", final=True)
        if pending:
            self._lines.put(pending)


Editor = Callable[[str], str | None]
"""Opens the editor on a text; what was saved, or ``None`` when nothing was."""


def click_editor(text: str) -> str | None:
    import click

    return click.edit(text, extension=".md", require_save=True)


@dataclass
class Collected:
    """What one pass of :meth:`TurnWriter.collect` got: texts by turn key, and the turns whose deadline passed."""

    texts: dict[str, str] = field(default_factory=dict)
    passed: list[HumanTurn] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.texts or self.passed)


class TurnWriter:
    """Gets the texts of the human turns a suspended debate waits for (see the module's docstring)."""

    def __init__(
        self,
        term: Terminal,
        *,
        files: list[tuple[str | None, str]] | None = None,
        stdin: TextIO | None = None,
        use_editor: bool = False,
        editor: Editor = click_editor,
    ) -> None:
        self._term = term
        self._files = list(files or [])
        self._stdin = stdin if stdin is not None and not stdin.closed else None
        self._interactive = self._stdin is not None and self._stdin.isatty()
        self._feed = LineFeed(self._stdin) if self._stdin is not None else None
        self._use_editor = use_editor
        self._editor = editor

    def collect(self, state: DebateState) -> Collected:
        """Texts for the turns ``state`` waits for; a turn past its deadline is left to its fallback model."""
        collected = Collected()
        if self._files:
            collected.texts.update(turn_texts(state, self._files))
            self._files = []
        for turn in state.pending_turns():
            if turn.key in collected.texts:
                continue
            if deadline_passed(turn):
                collected.passed.append(turn)
                continue
            text = self._ask(turn, collected)
            if text is not None:
                collected.texts[turn.key] = text
        return collected

    def _ask(self, turn: HumanTurn, collected: Collected) -> str | None:
        if self._use_editor:
            return self._edited(turn)
        if self._feed is None or self._feed.ended:
            return None
        if not self._interactive:
            text = self._piped()
            if text is not None:
                self._term.line(f"{turn_heading(turn)}: {len(text):,} characters from stdin")
            return text
        for line in turn_prompt_lines(turn):
            self._term.line(line)
        self._term.line(
            f"Write the turn; end it with a line holding only '{END_OF_TURN}' (or Ctrl-D). "
            f"'{EDIT_COMMAND}' as the first line opens $EDITOR.",
            style="bold",
        )
        try:
            text = self._typed(turn)
        except TimeoutError:
            self._term.line("")
            self._term.warning(f"{turn_heading(turn)}: the deadline passed; the fallback model plays it")
            collected.passed.append(turn)
            return None
        return text

    def _piped(self) -> str | None:
        assert self._feed is not None
        lines: list[str] = []
        while True:
            line = self._feed.next_line(None)
            if line is None or line.strip() == END_OF_TURN:
                break
            lines.append(line)
        text = "\n".join(lines).strip()
        return text or None

    def _typed(self, turn: HumanTurn) -> str | None:
        assert self._feed is not None
        lines: list[str] = []
        while True:
            self._term.prompt("> ")
            line = self._feed.next_line(_seconds_left(turn))
            if line is None:
                self._term.line("")
                break
            if not lines and line.strip() == EDIT_COMMAND:
                return self._edited(turn)
            if line.strip() == END_OF_TURN:
                if lines and "\n".join(lines).strip():
                    break
                self._term.line("The turn is empty; write what the seat says (Ctrl-D leaves it for later).")
                continue
            lines.append(line)
        text = "\n".join(lines).strip()
        return text or None

    def _edited(self, turn: HumanTurn) -> str | None:
        template = "\n".join(turn_prompt_lines(turn)) + f"\n\n{EDITOR_MARK}\n\n"
        saved = self._editor(template)
        if saved is None:
            self._term.warning(f"{turn_heading(turn)}: the editor saved nothing; the turn is left waiting")
            return None
        head, mark, body = saved.rpartition(EDITOR_MARK)
        text = (body if mark else head or saved).strip()
        if not text:
            self._term.warning(f"{turn_heading(turn)}: the turn is empty; it is left waiting")
            return None
        self._term.line(f"{turn_heading(turn)}: {len(text):,} characters from the editor")
        return text


def _seconds_left(turn: HumanTurn) -> float | None:
    at = turn.deadline_at()
    if at is None:
        return None
    return max(0.0, (at - utc_now()).total_seconds())


def describe_pending_turns(state: DebateState, resume_command: str) -> list[str]:
    """The turns ``state`` waits for (with the prompt each is to answer) and how to send them."""
    pending = state.pending_turns()
    count = "a human turn" if len(pending) == 1 else f"{len(pending)} human turns"
    lines = [f"Debate {state.id} is waiting for {count}:"]
    for turn in pending:
        lines += [f"  {line}" for block in turn_prompt_lines(turn) for line in block.splitlines()]
    lines.append("Write the turn to a file and continue the debate with:")
    if len(pending) == 1:
        lines.append(f"  {resume_command} --turn-file turn.txt")
    else:
        lines.append(f"  {resume_command} --turn-file {pending[0].key}=turn.txt")
        lines.append("(one --turn-file KEY=FILE per turn; a FILE without KEY answers the turns in the order above)")
    return lines
