"""What the API takes from a request before it goes anywhere: integers parsed strictly, text that is UTF-8.

Two kinds of input reached the store or the encoder unchecked and came back as 500s:

* an integer given as text (``Last-Event-ID``, ``?after=``): ``str.isdigit`` accepts digits
  that ``int`` does not (``²``), and Python's integers have no bound while SQLite's are 64-bit
  (``OverflowError``). :func:`strict_int` takes ASCII digits only, in SQLite's range.
* text with a lone surrogate (JSON's ``"\\ud800"`` decodes to one): it cannot be encoded as
  UTF-8, so saving it or sending it back fails. :func:`check_text` refuses it, and
  :func:`encodable` finds one anywhere in a decoded JSON body (the body models use it).

Each failure is an :class:`~dialectic.web.errors.ApiError` (4xx) with one line naming the input.
"""

from __future__ import annotations

from typing import Any

from dialectic.web.errors import ApiError

SQLITE_MAX_INT = 2**63 - 1
"""The largest integer SQLite stores (a signed 64-bit integer)."""
MAX_DIGITS = len(str(SQLITE_MAX_INT))


def strict_int(text: str, name: str, *, minimum: int = 0, maximum: int = SQLITE_MAX_INT) -> int:
    """``text`` as an integer: ASCII digits only, from ``minimum`` to ``maximum``; else a 400 naming ``name``."""
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit()) or len(digits) > MAX_DIGITS:
        raise ApiError(400, "bad_request", f"{name} must be a whole number from {minimum} to {maximum}")
    value = int(digits)
    if not minimum <= value <= maximum:
        raise ApiError(400, "bad_request", f"{name} must be a whole number from {minimum} to {maximum}")
    return value


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be encoded as UTF-8 (a lone surrogate), or ``None`` when it can."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"is not valid Unicode text (a lone surrogate at character {exc.start + 1})"
    return None


def check_text(value: str, name: str) -> str:
    """``value``, when it can be encoded as UTF-8; else a 422 naming ``name``."""
    problem = text_problem(value)
    if problem is not None:
        message = f"{name} {problem}"
        raise ApiError(422, "invalid_request", message, {name: message})
    return value


def encodable(value: Any, where: str = "") -> Any:
    """``value`` (decoded JSON) unchanged when every string in it, keys included, is UTF-8 text.

    Raises ``ValueError`` otherwise, for a pydantic validator (the API then names the field), saying
    where in ``value`` the text is (``[0].role``).
    """
    if isinstance(value, str):
        problem = text_problem(value)
        if problem is not None:
            raise ValueError(f"the text at {where} {problem}" if where else f"the text {problem}")
    elif isinstance(value, dict):
        for key, item in value.items():
            encodable(key, f"a key of {where}" if where else "a key")
            encodable(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            encodable(item, f"{where}[{index}]")
    return value
