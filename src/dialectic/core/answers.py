"""Finding the answer in a model's reply, and deciding whether it is right.

The answer is looked for in this order, and the first that yields one wins:

0. the last ``<answer>...</answer>`` block (the form third-party tasks ask for);
1. the last ``\\boxed{...}``;
2. the last explicit statement: "final answer", "the answer is", "answer:", a JSON key
   ``"finalAnswer":`` or ``"answer":`` (the number after it on the same line; after an ``=``
   there, the number after the last ``=``);
3. the last number anywhere in the reply (numeric mode) or the last non-empty line
   (exact mode).

In exact mode a date written with its month's name (``17 April 2026``, ``April 17th, 2026``,
``Friday, 17 April 2026``) or as year-month-day (``2026-4-17``, ``2026/04/17``) reads as its
``YYYY-MM-DD`` form, so a dated answer matches however the reply wrote it; ``\\text{…}``
and similar wrappers inside ``\\boxed{}`` are dropped, so ``\\boxed{\\text{True}}`` is ``True``.

A reply cut off by the token limit only counts when it had already stated its answer
explicitly (1 or 2): the last number of a half-written calculation is not an answer.
A reply with nothing usable has no answer: it is scored wrong and counted apart. A reply that
echoes its instructions' placeholder (``\\boxed{your answer}``, ``Answer: <final answer>``) has
none either: a small model copies the template now and then.

A problem with many right answers (a ``scored`` item: a colouring, an expression, a board) has no
canonical answer to compare with: its answer is the last ``<answer>…</answer>`` block as written (spacing
made regular), and the task's own scorer decides whether it is right.
"""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Literal, cast

MatchMode = Literal["numeric", "exact", "scored"]
"""``scored``: the task's own scorer decides (a problem with many right answers); the answer is the reply's
last ``<answer>…</answer>`` block (else its last ``\\boxed{}``), kept as written but for spacing."""
Method = Literal["tagged", "boxed", "final-answer", "last-number", "last-line", "none"]
MATCH_MODES: tuple[str, ...] = ("numeric", "exact")
"""The modes a dataset may be scored by (``--match``); ``scored`` belongs to tasks that bring a scorer."""

NUMERIC_TOLERANCE = Decimal("1e-6")
"""Relative tolerance of a numeric match (absolute below 1), for answers like 0.333333 vs 0.3333333."""

_MINUS_SIGNS = {"\u2212": "-", "\u2013": "-", "\u2012": "-", "\ufe63": "-", "\uff0d": "-"}
_NUMBER = re.compile(r"(?:(?<![\w)\]])-)?(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?!\d)")
_TAGGED = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_BOXED = re.compile(r"\\boxed\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_MARKER = re.compile(
    r"final(?:\s+|_?)answer[\"']?(?:\s+(?:is|was|would\s+be))?\s*[:=]?|the\s+answer\s+(?:is|was|would\s+be)\s*[:=]?|"
    r"\banswer[\"']?\s*:",
    re.IGNORECASE,
)
_PLAIN_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+")
_TEXT_WRAPPER = re.compile(r"\\(?:text|mathrm|textbf|textit|texttt|mathbf|mathit|mathtt|operatorname)\s*\{([^{}]*)\}")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_PLACEHOLDER = re.compile(r"\b(?:your|final)\s+answer\b|^(?:boxed\s+)?answer(?:\s+here)?$")
"""An instruction's placeholder, normalised: ``your answer``, ``<final answer>``, ``<answer>``."""
_WRAPPING = "*`$.\"'{}[](),; \t"
"""What may wrap a stated value: emphasis, code, quotes, a JSON object's braces and commas."""
_PUNCTUATION = str.maketrans({ch: " " for ch in string.punctuation})
_MONTH_NAMES = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH_NUMBERS = {key: number for number, name in enumerate(_MONTH_NAMES, 1) for key in (name, name[:3])} | {"sept": 9}
_MONTH = r"(?P<month>[a-z]{3,9})\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_WEEKDAY = r"(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]{0,6}\.?,?\s+)?"
_DATES = tuple(
    re.compile(_WEEKDAY + form)
    for form in (
        rf"{_YEAR}[-/. ](?P<num>\d{{1,2}})[-/. ]{_DAY}",
        rf"{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}",
        rf"{_MONTH}\s+{_DAY},?\s+{_YEAR}",
    )
)


@dataclass(frozen=True)
class Extraction:
    answer: str | None
    """Canonical: a number as ``-12`` or ``3.5``; text normalised (see :func:`normalize_text`)."""
    method: Method


def canonical_number(text: str) -> str | None:
    """``"1,234"`` → ``"1234"``, ``"-3.50"`` → ``"-3.5"``, ``"+7"`` → ``"7"``; ``None`` if not a plain number."""
    cleaned = _unify_minus(text).strip().strip("$*` ").rstrip(".")
    if not _PLAIN_NUMBER.fullmatch(cleaned):
        return None
    try:
        value = Decimal(cleaned.replace(",", ""))
    except InvalidOperation:
        return None
    if value == value.to_integral_value():
        return str(int(value))
    return format(value.normalize(), "f")


def normalize_text(text: str) -> str:
    """Lower case, no punctuation, no articles (a/an/the), single spaces — the usual exact-match rule.

    A text that is just a date (see the module docstring) becomes its ``YYYY-MM-DD`` form, the
    form a reader expects to see in a tally.
    """
    text = unicodedata.normalize("NFKC", text).lower()
    day = _date(text)
    if day is not None:
        return day
    text = text.translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _date(text: str) -> str | None:
    """``YYYY-MM-DD`` when ``text`` (lower case) is one valid date and nothing else, else ``None``."""
    text = " ".join(text.strip().strip(_WRAPPING).split())
    for pattern in _DATES:
        found = pattern.fullmatch(text)
        if found is None:
            continue
        parts = found.groupdict()
        month = int(parts["num"]) if parts.get("num") else _MONTH_NUMBERS.get(parts["month"], 0)
        try:
            day = date(int(parts["year"]), month, int(parts["day"]))
        except ValueError:
            return None
        return day.isoformat()
    return None


def is_correct(answer: str | None, truth: str, mode: MatchMode) -> bool:
    """Whether ``answer`` is ``truth``; for ``scored`` items only the same written answer (spacing aside) is
    known right here: any other valid answer is the task scorer's to accept."""
    if answer is None:
        return False
    if mode == "scored":
        return canonical_written(answer) == canonical_written(truth)
    if mode == "exact":
        return normalize_text(answer) == normalize_text(truth)
    expected = canonical_number(truth)
    if expected is None:
        return False
    got, want = Decimal(answer), Decimal(expected)
    return abs(got - want) <= NUMERIC_TOLERANCE * max(Decimal(1), abs(want))


def extract_answer(text: str, mode: MatchMode, *, truncated: bool = False) -> Extraction:
    """The answer a reply gives (see the module docstring for the order)."""
    if mode == "scored":
        return written_answer(text)
    text = _unify_minus(text)
    for content in reversed(_TAGGED.findall(text)):
        answer = _value(content, mode, after_equals=True)
        if answer is not None:
            return Extraction(answer, "tagged")
    for content in reversed(_BOXED.findall(text)):
        answer = _value(_TEXT_WRAPPER.sub(r"\1", content), mode, after_equals=True)
        if answer is not None:
            return Extraction(answer, "boxed")
    markers = list(_MARKER.finditer(text))
    if markers:
        answer = _value(_statement_after(text, markers[-1].end()), mode, after_equals=True)
        if answer is not None:
            return Extraction(answer, "final-answer")
    if truncated:
        return Extraction(None, "none")
    if mode == "numeric":
        numbers = _NUMBER.findall(text)
        if numbers:
            return Extraction(canonical_number(numbers[-1]), "last-number")
        return Extraction(None, "none")
    lines = [line for line in text.splitlines() if normalize_text(line)]
    if lines and not _PLACEHOLDER.search(normalize_text(lines[-1])):
        return Extraction(normalize_text(lines[-1]), "last-line")
    return Extraction(None, "none")


def canonical_written(text: str) -> str:
    """A written answer with its spacing made regular: each line's words one space apart, no blank
    lines, nothing around it. Two replies giving the same answer read the same, whatever their spacing."""
    lines = (" ".join(line.split()) for line in text.strip().splitlines())
    return "\n".join(line for line in lines if line)


def written_answer(text: str) -> Extraction:
    """A ``scored`` item's answer: the last ``<answer>…</answer>`` block, else the last ``\\boxed{}``; a
    placeholder (``<answer>your answer</answer>``) or an empty block is none."""
    for pattern, method in ((_TAGGED, "tagged"), (_BOXED, "boxed")):
        for content in reversed(pattern.findall(text)):
            answer = canonical_written(_TEXT_WRAPPER.sub(r"\1", content) if method == "boxed" else content)
            if answer and not _PLACEHOLDER.search(normalize_text(answer)):
                return Extraction(answer, cast(Method, method))
    return Extraction(None, "none")


def stated_answers(text: str) -> list[str]:
    """Every answer a reply states, the deciding one last: its explicit answer lines in order, then its
    ``\\boxed{}`` contents in order. Each reads as a date when it is one (``2010-04-14`` → ``2010 04
    14``), else as its first number (after an ``=``, the part after the last), else as normalised text."""
    text = _unify_minus(text)
    segments = [_statement_after(text, found.end()) for found in _MARKER.finditer(text)]
    segments += [_TEXT_WRAPPER.sub(r"\1", content) for content in _BOXED.findall(text)]
    return [answer for answer in map(_reading, segments) if answer is not None]


def stated_answer(text: str, *, truncated: bool = False) -> str | None:
    """The answer a reply states (its last ``\\boxed{}``, else its last explicit answer line), numbers
    canonical, dates ``YYYY-MM-DD``; ``None`` when it states none. A reply cut off by the token limit
    counts here as any other: only a stated answer is read."""
    answers = stated_answers(text)
    return answers[-1] if answers else None


def _reading(segment: str) -> str | None:
    if "=" in segment:
        segment = segment.rsplit("=", 1)[1]
    words = segment.split()
    for candidate in (segment, words[0] if words else ""):
        day = _date(unicodedata.normalize("NFKC", candidate).lower())
        if day is not None:
            return day
    found = _NUMBER.search(segment)
    if found is not None:
        return canonical_number(found.group(0))
    return _text_answer(segment)


def _statement_after(text: str, start: int) -> str:
    """The rest of the marker's line, or the next non-empty line when the marker ends its line."""
    for line in text[start:].split("\n"):
        if line.strip(" \t*:_$`#-"):
            return line
    return ""


def _value(segment: str, mode: MatchMode, *, after_equals: bool) -> str | None:
    if after_equals and "=" in segment:
        segment = segment.rsplit("=", 1)[1]
    if mode == "numeric":
        found = _NUMBER.search(segment)
        return canonical_number(found.group(0)) if found else None
    return _text_answer(segment)


def _text_answer(segment: str) -> str | None:
    """The normalised text of a stated answer; ``None`` when it is empty or a placeholder."""
    normalised = normalize_text(segment)
    return normalised if normalised and not _PLACEHOLDER.search(normalised) else None


def _unify_minus(text: str) -> str:
    for sign, ascii_minus in _MINUS_SIGNS.items():
        text = text.replace(sign, ascii_minus)
    return text
