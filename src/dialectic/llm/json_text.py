"""Parsing JSON written by a model, without losing the LaTeX it contains.

A model asked for JSON often writes LaTeX inside its strings with single backslashes:
``"the answer is \\boxed{-141}"``. Read strictly, ``\\b`` is a JSON escape (backspace) and the
text arrives as a control character followed by "oxed"; so do ``\\f`` (``\\frac``), ``\\t``
(``\\text``), ``\\n`` (``\\nabla``) and ``\\r`` (``\\rho``), while ``\\s`` or ``\\(`` make the
whole reply unparseable. :func:`repair_backslashes` rewrites such backslashes as literal ones
before parsing, and keeps genuine escapes:

* ``\\"``, ``\\\\``, ``\\/`` and ``\\u`` with four hex digits (``\\u00e9``) are kept;
* ``\\b`` or ``\\f`` followed by a letter is LaTeX (nobody means a backspace or a form feed);
* ``\\n``, ``\\r`` or ``\\t`` followed by letters is LaTeX only when the letters make a LaTeX
  command (``\\nabla``, ``\\rho``, ``\\text``…, see :data:`LATEX_COMMANDS`): a newline before a
  word (``"first\\nsecond"``) stays a newline;
* any other backslash (an invalid JSON escape such as ``\\s``, ``\\(`` or ``\\alpha``) is literal.

Every parse of a model's JSON goes through :func:`loads_model_json`.
"""

from __future__ import annotations

import json
import re

from dialectic.core.json_values import JsonValue

_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n(.*?)\n?\s*```\s*$", re.DOTALL)
_HEX = frozenset("0123456789abcdefABCDEF")
_KEPT = frozenset('"\\/')

LATEX_COMMANDS = frozenset(
    {
        # \n…
        "nabla", "natural", "nearrow", "neg", "neq", "newline", "ngeq", "ngtr", "nleq", "noindent",
        "nolimits", "nonumber", "normalsize", "not", "notin", "nparallel", "nprec", "nrightarrow",
        "nleftarrow", "nsim", "nsubseteq", "nsupseteq", "nu", "nvdash", "nwarrow",
        # \r…
        "rangle", "rbrace", "rbrack", "rceil", "rfloor", "rho", "right", "rightarrow", "rightharpoonup",
        "rightleftharpoons", "rm", "rmfamily", "rVert", "rvert",
        # \t…
        "tan", "tanh", "tau", "tbinom", "text", "textbf", "textit", "textrm", "textsf", "textstyle", "texttt",
        "tfrac", "theta", "therefore", "tilde", "times", "tiny", "to", "top", "triangle", "triangledown",
        "triangleleft", "triangleq", "triangleright", "tt",
    }
)  # fmt: skip
"""LaTeX commands that begin with ``n``, ``r`` or ``t`` — the letters of JSON's newline, carriage
return and tab escapes. Only these are read as LaTeX after ``\\n``, ``\\r`` or ``\\t``. Commands
whose tail is a common word (``\\ne`` → "e.g.", ``\\nless``, ``\\nexists``, ``\\nmid``) are left
out: there a newline followed by that word is the likelier reading."""


def _letters(text: str, start: int) -> str:
    end = start
    while end < len(text) and text[end].isascii() and text[end].isalpha():
        end += 1
    return text[start:end]


def _is_latex(escape: str, text: str, after: int) -> bool:
    """Whether the backslash before ``escape`` (at ``after - 1``) starts a LaTeX command."""
    following = _letters(text, after)
    if escape in "bf":
        return bool(following)
    return bool(following) and escape + following in LATEX_COMMANDS


def repair_backslashes(text: str) -> str:
    """``text`` with every backslash inside a JSON string that is not a genuine escape doubled."""
    out: list[str] = []
    in_string = False
    i = 0
    while i < len(text):
        char = text[i]
        if char == '"':
            in_string = not in_string
        elif char == "\\" and in_string:
            escape = text[i + 1] if i + 1 < len(text) else ""
            if escape in _KEPT and escape:
                out.append(text[i : i + 2])
                i += 2
                continue
            if escape == "u" and len(text) >= i + 6 and all(c in _HEX for c in text[i + 2 : i + 6]):
                out.append(text[i : i + 6])
                i += 6
                continue
            if escape and escape in "bfnrt" and not _is_latex(escape, text, i + 2):
                out.append(text[i : i + 2])
                i += 2
                continue
            out.append("\\\\")
            i += 1
            continue
        out.append(char)
        i += 1
    return "".join(out)


def loads_model_json(text: str) -> JsonValue:
    """``text`` parsed as JSON after :func:`repair_backslashes`; raw control characters inside
    strings (a newline a model typed as is) are accepted. Raises ``ValueError`` if it does not parse."""
    return json.loads(repair_backslashes(text), strict=False)


def parse_json_text(text: str) -> JsonValue | None:
    """``text`` parsed as JSON (a surrounding ``` fence is stripped), or None if it does not parse."""
    match = _FENCE.match(text)
    try:
        return loads_model_json(match.group(1) if match else text)
    except ValueError:
        return None
