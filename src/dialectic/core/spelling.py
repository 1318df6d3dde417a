"""The one "did you mean" of every refusal of a name: configuration keys, request fields, providers.

A name the user typed is compared with the names that would have been accepted, case-insensitively
and with ``_`` and ``-`` ignored (``max_cost_usd``, ``maxCostUSD`` and ``maxCostUsd`` are one
spelling), and the closest one, if it is close enough (difflib's ratio), is offered in one wording:
`` — did you mean `maxCostUsd`?``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.7
"""How alike (difflib's ratio, 0–1) a name must be to a known one to be offered."""


def folded(name: str) -> str:
    """``name`` as it is compared: lower case, without ``_`` and ``-``."""
    return name.replace("_", "").replace("-", "").lower()


def nearest(name: str, known: Iterable[str]) -> str | None:
    """The name of ``known`` spelled most like ``name`` (as :func:`folded` compares them), if close enough."""
    by_fold: dict[str, str] = {}
    for candidate in known:
        by_fold.setdefault(folded(candidate), candidate)
    found = difflib.get_close_matches(folded(name), list(by_fold), n=1, cutoff=CUTOFF)
    return by_fold[found[0]] if found else None


def did_you_mean(suggestion: str | None) -> str:
    """`` — did you mean `SUGGESTION`?``, or nothing when there is no suggestion."""
    return f" — did you mean `{suggestion}`?" if suggestion else ""
