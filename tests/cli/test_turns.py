"""Writing a human seat's turns at the command line: typed at a terminal, piped, in the editor, from files."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from dialectic.cli import turns as cli_turns
from dialectic.cli.console import Terminal
from dialectic.cli.turns import EDITOR_MARK, TurnWriter, describe_pending_turns, read_turn_files
from dialectic.core.domain import DebateState, HumanTurn, TurnMessage, utc_now
from dialectic.core.errors import InvalidArgumentsError


class Typed(io.StringIO):
    """What a person types at a terminal."""

    def isatty(self) -> bool:
        return True


def waiting(*keys: str, deadline_ms: int | None = None, asked_ago_ms: int = 0) -> DebateState:
    turns = [
        HumanTurn(
            key=key,
            agent_id="agent-alice",
            agent_name="Alice",
            activity="proposing",
            kind="proposal",
            round_number=1,
            messages=[
                TurnMessage(role="system", content="You guard security."),
                TurnMessage(role="user", content=f"Propose ({key})."),
            ],
            asked_at=utc_now() - timedelta(milliseconds=asked_ago_ms),
            deadline_ms=deadline_ms,
        )
        for key in keys
    ]
    return DebateState(id="deb-20250101-000000-0000", problem="p", status="suspended", human_turns=turns)


@pytest.fixture
def term() -> tuple[Terminal, io.StringIO]:
    shown = io.StringIO()
    return Terminal(shown), shown


def test_a_turn_typed_at_the_terminal_ends_at_a_dot(term: tuple[Terminal, io.StringIO]) -> None:
    terminal, shown = term
    writer = TurnWriter(terminal, stdin=Typed(".\nFirst line.\n\nSecond line.\n.\nnot read\n"))
    collected = writer.collect(waiting("k1"))
    assert collected.texts == {"k1": "First line.\n\nSecond line."}
    text = shown.getvalue()
    assert "Alice's turn (proposing, round 1) — key k1" in text
    assert "You guard security." in text and "Propose (k1)." in text  # the role and the turn, as the model gets them
    assert "The turn is empty" in text  # a lone "." first is not a turn


def test_end_of_input_at_the_terminal_leaves_the_turn_waiting(term: tuple[Terminal, io.StringIO]) -> None:
    terminal, _ = term
    assert not TurnWriter(terminal, stdin=Typed("")).collect(waiting("k1"))


def test_edit_opens_the_editor_on_the_prompt(term: tuple[Terminal, io.StringIO]) -> None:
    terminal, _ = term
    opened: list[str] = []

    def editor(text: str) -> str | None:
        opened.append(text)
        return f"{text}Written in the editor.\n"

    collected = TurnWriter(terminal, stdin=Typed(":edit\n"), editor=editor).collect(waiting("k1"))
    assert collected.texts == {"k1": "Written in the editor."}
    assert "Propose (k1)." in opened[0] and opened[0].rstrip().endswith(EDITOR_MARK)
    nothing = TurnWriter(terminal, use_editor=True, editor=lambda text: None).collect(waiting("k1"))
    assert not nothing  # closed without saving: the turn waits


def test_piped_turns_come_one_after_another(term: tuple[Terminal, io.StringIO]) -> None:
    terminal, shown = term
    writer = TurnWriter(terminal, stdin=io.StringIO("One.\n.\nTwo,\non two lines.\n"))
    collected = writer.collect(waiting("k1", "k2"))
    assert collected.texts == {"k1": "One.", "k2": "Two,\non two lines."}
    assert "Alice's turn (proposing, round 1): 4 characters from stdin" in shown.getvalue()
    assert not writer.collect(waiting("k3"))  # the input ran out


@pytest.fixture
def silent() -> Iterator[io.TextIOWrapper]:
    """A terminal where no one types (a pipe never written to)."""
    read, write = os.pipe()
    stream = os.fdopen(read, "r")
    stream.isatty = lambda: True  # type: ignore[method-assign]
    yield stream
    os.close(write)
    stream.close()


def test_a_deadline_ends_the_wait_and_leaves_the_turn_to_the_fallback(
    term: tuple[Terminal, io.StringIO], silent: io.TextIOWrapper, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal, shown = term
    monkeypatch.setattr(cli_turns, "_seconds_left", lambda turn: 0.0)  # the deadline is now
    collected = TurnWriter(terminal, stdin=silent).collect(waiting("k1", deadline_ms=60_000))
    assert collected.texts == {} and [t.key for t in collected.passed] == ["k1"]
    assert "the deadline passed; the fallback model plays it" in shown.getvalue()
    passed = TurnWriter(terminal, stdin=silent).collect(waiting("k1", deadline_ms=10, asked_ago_ms=1000))
    assert [t.key for t in passed.passed] == ["k1"]  # passed already: not asked at all


def test_turn_files_by_key_or_in_order(tmp_path: Path, term: tuple[Terminal, io.StringIO]) -> None:
    terminal, _ = term
    (tmp_path / "a.txt").write_text("A.\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("B.\n", encoding="utf-8")
    files = read_turn_files([str(tmp_path / "a.txt"), f"k1={tmp_path / 'b.txt'}"])
    assert files == [(None, "A.\n"), ("k1", "B.\n")]
    collected = TurnWriter(terminal, files=files).collect(waiting("k1", "k2"))
    assert collected.texts == {"k1": "B.", "k2": "A."}
    (tmp_path / "empty.txt").write_text("\n", encoding="utf-8")
    with pytest.raises(InvalidArgumentsError, match="the file is empty"):
        read_turn_files([str(tmp_path / "empty.txt")])


def test_how_to_continue_names_the_turns_and_the_command() -> None:
    one = describe_pending_turns(waiting("k1"), "dialectic resume deb-1")
    assert one[0] == "Debate deb-20250101-000000-0000 is waiting for a human turn:"
    assert one[-1] == "  dialectic resume deb-1 --turn-file turn.txt"
    two = describe_pending_turns(waiting("k1", "k2"), "dialectic resume deb-1")
    assert "  dialectic resume deb-1 --turn-file k1=turn.txt" in two
