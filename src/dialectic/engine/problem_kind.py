"""What kind of problem a debate is about: a design to write, or a question with one right answer.

The kind picks the prompts (``debate.problemKind``): a design problem gets the design-document
structure (approach, components, decisions, risks), a reasoning problem a reasoning-first one
(work it out step by step, check the others' steps, keep a result unless an error is shown,
the judge recomputes disputed steps). Forcing the design structure on an arithmetic question
makes small models spend their words on headings and slip the arithmetic.

``auto`` detects the kind from the problem's text with a small, explainable rule; the choice
and its reason are shown to the user, and saved with the debate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["design", "reasoning"]

MAX_QUESTION_CHARS = 600
"""A reasoning question is short; a design brief usually is not."""

_ASKING = re.compile(
    r"\?|\b(what is|what's|compute|calculate|evaluate|solve|how many|how much|find the value|simplify|prove)\b",
    re.IGNORECASE,
)
_NUMBERS = re.compile(r"\d+\s*[-+*/×÷^=]\s*\d+|\b\d+(?:\.\d+)?\b")
_CLOSED = re.compile(
    r"\b(true or false|yes or no|boolean|truth value|which (?:day|date|weekday|month|year)|what (?:day|date))\b",
    re.IGNORECASE,
)
"""A question whose answer is one of a few words, or a day, though it states no number."""
_DESIGNING = re.compile(
    r"\b(design|architect\w*|system|service|api|build|implement|deploy|scal\w+|database|schema|infrastructure|"
    r"pipeline|platform|migrat\w+|refactor\w*)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class KindChoice:
    kind: Kind
    reason: str


def detect_kind(problem: str) -> KindChoice:
    """``reasoning`` for a short question with numbers or a calculation, or one asking for true or false
    (yes or no, a day), and no design vocabulary; else ``design``."""
    text = problem.strip()
    if len(text) > MAX_QUESTION_CHARS:
        return KindChoice("design", f"longer than {MAX_QUESTION_CHARS} characters")
    designing = _DESIGNING.search(text)
    if designing:
        return KindChoice("design", f"it speaks of design ('{designing.group(0)}')")
    if _ASKING.search(text) and _NUMBERS.search(text):
        return KindChoice("reasoning", "a short question with numbers and one right answer")
    closed = _CLOSED.search(text) if _ASKING.search(text) else None
    if closed:
        return KindChoice("reasoning", f"a short question with one right answer ('{closed.group(0)}')")
    return KindChoice("design", "no calculation or one-answer question found")


def choose_kind(setting: str, problem: str) -> KindChoice:
    """The kind in force: the configured one, or the detected one for ``auto``."""
    if setting in ("design", "reasoning"):
        return KindChoice(setting, "set in the configuration")  # type: ignore[arg-type]
    return detect_kind(problem)
