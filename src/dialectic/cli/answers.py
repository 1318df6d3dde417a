"""Answering the agents' clarifying questions from the command line.

Answers come, in this order, from an ``--answers`` JSON file, then from the terminal (one
prompt per question) or, when stdin is a pipe or a file, from its lines (one line per
question, in order). An empty answer is recorded as ``NA``. Piped lines that run out answer
the remaining questions ``NA`` too (the user chose to answer without being asked; the
session warns which questions got no answer); stdin with no line at all (``/dev/null``, a
closed pipe) answers nothing. When some question cannot be answered, nothing is sent: the
debate stays suspended and :func:`describe_pending` tells the user how to continue it.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TextIO

from dialectic.cli.console import Terminal
from dialectic.cli.wording import plural
from dialectic.core.domain import AgentClarifications, ClarificationItem, DebateState
from dialectic.core.errors import InvalidArgumentsError
from dialectic.core.files import ANSWERS_FILE, parse_json, read_user_text

SKIPPED_ANSWER = "NA"


def load_answers_file(path: Path) -> dict[str, str]:
    """A JSON object mapping question ids to answers; anything else is an invalid argument."""
    text = read_user_text(path, ANSWERS_FILE)
    try:
        data = parse_json(text)
    except json.JSONDecodeError as exc:
        raise InvalidArgumentsError(
            f"answers file {path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    if not isinstance(data, dict):
        raise InvalidArgumentsError(f'answers file {path} must hold a JSON object such as {{"q1": "answer"}}')
    answers: dict[str, str] = {}
    for key, value in data.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise InvalidArgumentsError(f"answers file {path}: the answer to '{key}' must be a string")
        answers[key] = str(value).strip() or SKIPPED_ANSWER
    return answers


def unmatched_answer_ids(answers: dict[str, str], state: DebateState) -> list[str]:
    """The ids in an answers file that match no question of ``state``, in the file's order."""
    asked = {item.id for item in state.clarification_items()}
    return [qid for qid in answers if qid not in asked]


def unmatched_answers_warning(unmatched: list[str]) -> str:
    """Worded as the engine's warning on resume, so both paths read the same."""
    return f"ignoring answers to unknown or already answered questions: {', '.join(unmatched)}"


def resume_answers_warnings(answers: dict[str, str], state: DebateState) -> list[str]:
    """What ``resume --answers`` will not use: all of it when nothing is pending, else the unknown ids."""
    pending = {item.id for item in state.pending_questions()}
    if not pending:
        return [f"--answers: debate {state.id} has no pending questions; the answers file is not used"]
    unused = [qid for qid in answers if qid not in pending]
    return [unmatched_answers_warning(unused)] if unused else []


def question_line(group: AgentClarifications, item: ClarificationItem) -> str:
    return f"[{group.agent_name} ({group.role})] Q ({item.id}): {item.question}"


class AnswerSource(Protocol):
    def answer(self, group: AgentClarifications, item: ClarificationItem) -> str | None:
        """The answer to ``item``, or ``None`` when this source has none."""
        ...


@dataclass
class FileAnswers:
    answers: dict[str, str]

    def answer(self, group: AgentClarifications, item: ClarificationItem) -> str | None:
        return self.answers.get(item.id)


class PipedAnswers:
    """One line of ``stream`` per question. The stream is read whole on first use and the
    unused lines are kept for follow-up questions. Once the lines run out, every further
    question is answered ``NA`` and listed in ``ran_out``; a stream without any line
    answers nothing (the debate then stays suspended)."""

    def __init__(self, stream: TextIO, term: Terminal) -> None:
        self._stream = stream
        self._term = term
        self._lines: deque[str] | None = None
        self._had_lines = False
        self.ran_out: list[tuple[AgentClarifications, ClarificationItem]] = []
        """Questions answered ``NA`` because the piped lines had run out (the session warns about them)."""

    def answer(self, group: AgentClarifications, item: ClarificationItem) -> str | None:
        if self._lines is None:
            self._lines = deque(self._stream.read().splitlines())
            self._had_lines = bool(self._lines)
        if self._lines:
            reply = self._lines.popleft().strip() or SKIPPED_ANSWER
        elif self._had_lines:
            reply = SKIPPED_ANSWER
            self.ran_out.append((group, item))
        else:
            return None
        self._term.line(question_line(group, item))
        self._term.line(f"> {reply}")
        return reply

    def take_ran_out(self) -> list[tuple[AgentClarifications, ClarificationItem]]:
        taken, self.ran_out = self.ran_out, []
        return taken


class TerminalAnswers:
    """Asks on the terminal; end of input (Ctrl-D) stops asking for the rest of the run."""

    def __init__(self, stream: TextIO, term: Terminal) -> None:
        self._stream = stream
        self._term = term
        self._closed = False

    def answer(self, group: AgentClarifications, item: ClarificationItem) -> str | None:
        if self._closed:
            return None
        self._term.line(question_line(group, item), style="bold")
        self._term.prompt("> ")
        line = self._stream.readline()
        if not line:
            self._closed = True
            self._term.line("")
            return None
        return line.strip() or SKIPPED_ANSWER


@dataclass
class Collected:
    answers: dict[str, str] = field(default_factory=dict)
    unanswered: list[ClarificationItem] = field(default_factory=list)
    defaulted: list[tuple[AgentClarifications, ClarificationItem]] = field(default_factory=list)
    """Questions answered ``NA`` only because piped stdin ran out of lines."""


class Answerer:
    """Tries each source in turn for every unanswered question of a suspended debate."""

    def __init__(self, sources: list[AnswerSource]) -> None:
        self._sources = sources

    @classmethod
    def for_cli(cls, answers_file: dict[str, str] | None, stdin: TextIO | None, term: Terminal) -> Answerer:
        sources: list[AnswerSource] = []
        if answers_file:
            sources.append(FileAnswers(answers_file))
        if stdin is not None and not stdin.closed:
            sources.append(TerminalAnswers(stdin, term) if stdin.isatty() else PipedAnswers(stdin, term))
        return cls(sources)

    def collect(self, state: DebateState) -> Collected:
        collected = Collected()
        for group in state.clarifications:
            for item in group.items:
                if item.answered:
                    continue
                reply = self._first_answer(group, item)
                if reply is None:
                    collected.unanswered.append(item)
                else:
                    collected.answers[item.id] = reply
        for source in self._sources:
            if isinstance(source, PipedAnswers):
                collected.defaulted += source.take_ran_out()
        return collected

    def _first_answer(self, group: AgentClarifications, item: ClarificationItem) -> str | None:
        for source in self._sources:
            reply = source.answer(group, item)
            if reply is not None:
                return reply
        return None


def describe_pending(state: DebateState, collected: Collected, resume_command: str) -> list[str]:
    """Lines telling the user which questions wait for answers and how to continue the debate.

    The example answers file holds the answers already gathered in this run, so nothing the
    user typed or piped is lost.
    """
    pending = {item.id for item in state.pending_questions()}
    lines = [f"Debate {state.id} is waiting for answers to {plural(len(pending), 'clarifying question')}:"]
    for group in state.clarifications:
        lines += [f"  {question_line(group, item)}" for item in group.items if item.id in pending]
    example = {qid: collected.answers.get(qid, SKIPPED_ANSWER) for qid in _ordered_ids(state, pending)}
    lines.append('Write the answers to a JSON file (an answer of "NA" skips a question), for example:')
    lines.append(f"  {json.dumps(example, ensure_ascii=False)}")
    lines.append("and continue the debate with:")
    lines.append(f"  {resume_command} --answers answers.json")
    return lines


def _ordered_ids(state: DebateState, wanted: set[str]) -> list[str]:
    return [item.id for item in state.clarification_items() if item.id in wanted]


def ran_out_warning(defaulted: list[tuple[AgentClarifications, ClarificationItem]]) -> list[str]:
    """The warning, then one line per question, for questions answered ``NA`` because stdin ran out."""
    if not defaulted:
        return []
    head = (
        f"stdin ran out of answers: {plural(len(defaulted), 'question')} answered NA "
        "(pipe one line per question, or use --answers, to answer them)"
    )
    return [head, *(f"  {question_line(group, item)}" for group, item in defaulted)]
