"""Clarification answers: the --answers file, piped stdin, the terminal, and the pending summary."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from dialectic.cli.answers import (
    Answerer,
    FileAnswers,
    PipedAnswers,
    TerminalAnswers,
    describe_pending,
    load_answers_file,
    ran_out_warning,
    resume_answers_warnings,
    unmatched_answer_ids,
    unmatched_answers_warning,
)
from dialectic.cli.console import Terminal
from dialectic.core.domain import AgentClarifications, ClarificationItem, DebateState
from dialectic.core.errors import InvalidArgumentsError


class FakeStdin(io.StringIO):
    """A StringIO that claims (or not) to be a terminal, and counts whole reads."""

    def __init__(self, text: str, *, tty: bool) -> None:
        super().__init__(text)
        self._tty = tty
        self.whole_reads = 0

    def isatty(self) -> bool:
        return self._tty

    def read(self, size: int | None = -1) -> str:
        self.whole_reads += 1
        return super().read(size)


def suspended_state(*, answered: dict[str, str] | None = None) -> DebateState:
    answered = answered or {}

    def item(qid: str, text: str) -> ClarificationItem:
        return ClarificationItem(id=qid, question=text, answer=answered.get(qid))

    return DebateState(
        id="deb-20250101-000000-ABCD",
        problem="p",
        status="suspended",
        clarifications=[
            AgentClarifications(
                agent_id="a1",
                agent_name="System Architect",
                role="architect",
                items=[item("q1", "How many users?"), item("q2", "Which region?")],
            ),
            AgentClarifications(
                agent_id="a2",
                agent_name="Security Engineer",
                role="security",
                items=[item("q3", "Who are the attackers?")],
            ),
        ],
    )


@pytest.fixture
def term() -> Terminal:
    return Terminal(io.StringIO())


def output(term: Terminal) -> str:
    stream = term.console.file
    assert isinstance(stream, io.StringIO)
    return stream.getvalue()


def test_answers_file_is_a_json_object_of_strings(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text(json.dumps({"q1": "10k", "q2": "", "q3": 42}), encoding="utf-8")
    assert load_answers_file(path) == {"q1": "10k", "q2": "NA", "q3": "42"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('["q1"]', "must hold a JSON object"),
        ('{"q1": ', "is not valid JSON"),
        ('{"q1": {"nested": 1}}', "must be a string"),
        ('{"q1": true}', "must be a string"),
    ],
)
def test_bad_answers_files_are_invalid_arguments(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "a.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InvalidArgumentsError, match=message):
        load_answers_file(path)


def test_missing_answers_file_is_invalid_arguments(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentsError, match="not found"):
        load_answers_file(tmp_path / "nope.json")


def test_piped_lines_answer_in_order_and_blank_means_na(term: Terminal) -> None:
    stdin = FakeStdin("10k users\n\nnation states\n", tty=False)
    collected = Answerer([PipedAnswers(stdin, term)]).collect(suspended_state())
    assert collected.answers == {"q1": "10k users", "q2": "NA", "q3": "nation states"}
    assert collected.unanswered == []
    assert "[System Architect (architect)] Q (q1): How many users?" in output(term)


def test_piped_lines_running_out_answer_the_rest_na_and_say_which(term: Terminal) -> None:
    collected = Answerer([PipedAnswers(FakeStdin("only one\n", tty=False), term)]).collect(suspended_state())
    assert collected.answers == {"q1": "only one", "q2": "NA", "q3": "NA"}
    assert collected.unanswered == []
    assert [item.id for _, item in collected.defaulted] == ["q2", "q3"]
    warning = ran_out_warning(collected.defaulted)
    assert warning[0].startswith("stdin ran out of answers: 2 questions answered NA")
    assert warning[1:] == [
        "  [System Architect (architect)] Q (q2): Which region?",
        "  [Security Engineer (security)] Q (q3): Who are the attackers?",
    ]


def test_piped_stdin_without_any_line_answers_nothing(term: Terminal) -> None:
    collected = Answerer([PipedAnswers(FakeStdin("", tty=False), term)]).collect(suspended_state())
    assert collected.answers == {}
    assert [i.id for i in collected.unanswered] == ["q1", "q2", "q3"]
    assert collected.defaulted == []
    assert ran_out_warning(collected.defaulted) == []


def test_piped_lines_that_ran_out_answer_follow_ups_na(term: Terminal) -> None:
    answerer = Answerer([PipedAnswers(FakeStdin("a\nb\nc\n", tty=False), term)])
    first = answerer.collect(suspended_state())
    follow_up = answerer.collect(suspended_state(answered={"q1": "x", "q2": "y"}))
    assert first.defaulted == []
    assert follow_up.answers == {"q3": "NA"}
    assert [item.id for _, item in follow_up.defaulted] == ["q3"]


def test_piped_stdin_is_read_once_and_kept_for_follow_ups(term: Terminal) -> None:
    stdin = FakeStdin("a\nb\nc\nd\ne\n", tty=False)
    answerer = Answerer([PipedAnswers(stdin, term)])
    first = answerer.collect(suspended_state())
    second = answerer.collect(suspended_state(answered={"q1": "x", "q2": "y"}))
    assert first.answers == {"q1": "a", "q2": "b", "q3": "c"}
    assert second.answers == {"q3": "d"}
    assert stdin.whole_reads == 1


def test_file_answers_come_first_and_the_rest_from_stdin(term: Terminal) -> None:
    answerer = Answerer(
        [FileAnswers({"q2": "eu-west"}), PipedAnswers(FakeStdin("10k\nscript kiddies\n", tty=False), term)]
    )
    collected = answerer.collect(suspended_state())
    assert collected.answers == {"q1": "10k", "q2": "eu-west", "q3": "script kiddies"}


def test_answered_questions_are_not_asked_again(term: Terminal) -> None:
    collected = Answerer([PipedAnswers(FakeStdin("z\n", tty=False), term)]).collect(
        suspended_state(answered={"q1": "a", "q2": "b"})
    )
    assert collected.answers == {"q3": "z"}


def test_terminal_prompts_on_stderr_and_stops_at_end_of_input(term: Terminal) -> None:
    stdin = FakeStdin("10k\n\n", tty=True)
    collected = Answerer([TerminalAnswers(stdin, term)]).collect(suspended_state())
    assert collected.answers == {"q1": "10k", "q2": "NA"}
    assert [i.id for i in collected.unanswered] == ["q3"]
    text = output(term)
    assert "[Security Engineer (security)] Q (q3): Who are the attackers?" in text
    assert text.count("> ") == 3


def test_for_cli_picks_the_source_by_stdin_kind(term: Terminal) -> None:
    tty = Answerer.for_cli(None, FakeStdin("", tty=True), term)
    pipe = Answerer.for_cli({"q1": "x"}, FakeStdin("", tty=False), term)
    none = Answerer.for_cli(None, None, term)
    assert [type(s) for s in tty._sources] == [TerminalAnswers]
    assert [type(s) for s in pipe._sources] == [FileAnswers, PipedAnswers]
    assert none._sources == []


def test_describe_pending_lists_questions_and_the_resume_command(term: Terminal) -> None:
    state = suspended_state(answered={"q1": "done"})
    collected = Answerer([PipedAnswers(FakeStdin("eu\n", tty=False), term)]).collect(state)
    lines = describe_pending(state, collected, "dialectic resume deb-20250101-000000-ABCD")
    text = "\n".join(lines)
    assert "2 clarifying questions:" in lines[0]
    assert "Q (q1)" not in text
    assert "[System Architect (architect)] Q (q2): Which region?" in text
    assert json.dumps({"q2": "eu", "q3": "NA"}) in text
    assert lines[-1].strip() == "dialectic resume deb-20250101-000000-ABCD --answers answers.json"


def test_unmatched_answer_ids_are_those_no_question_has() -> None:
    answers = {"q9": "x", "q1": "10k", "q7": "y"}
    assert unmatched_answer_ids(answers, suspended_state()) == ["q9", "q7"]
    assert unmatched_answers_warning(["q9", "q7"]) == (
        "ignoring answers to unknown or already answered questions: q9, q7"
    )


def test_resume_answers_warnings() -> None:
    state = suspended_state(answered={"q1": "10k"})
    assert resume_answers_warnings({"q2": "eu", "q3": "bots"}, state) == []
    assert resume_answers_warnings({"q1": "again", "q2": "eu", "zz": "?"}, state) == [
        "ignoring answers to unknown or already answered questions: q1, zz"
    ]
    done = suspended_state(answered={"q1": "a", "q2": "b", "q3": "c"})
    assert resume_answers_warnings({"q1": "a"}, done) == [
        f"--answers: debate {done.id} has no pending questions; the answers file is not used"
    ]


def test_answers_file_that_is_a_device_is_refused() -> None:
    with pytest.raises(InvalidArgumentsError, match="answers file /dev/zero is a device, not a regular file"):
        load_answers_file(Path("/dev/zero"))
