"""How far a prompt is squeezed to fit its participant's context window, for the call being made.

When a call's leanest shape (:mod:`dialectic.engine.fitting`) still does not fit, the engine asks
for the same call again inside :func:`squeezing`; the prompts made inside it read the
:class:`Squeeze` in force:

* :func:`quote` cuts what the prompt quotes of *other* participants (the proposal a critique is
  about, the critiques a refinement answers) to a share of its length, at a sentence's end where
  it can, marked :data:`CUT_MARK`; the templates then say the quotes were cut
  (``quotes_cut``);
* :func:`reply_tokens` is the call's ``maxTokens``, lowered (never under the floor the engine
  chose), and the words the reply is asked for follow it.

The squeeze is held in a :mod:`contextvars` variable, as the request observer is
(:mod:`dialectic.llm.observe`), so the call lambdas of every protocol get it without passing it along.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from dialectic.llm.cut_text import trim_to_complete

CUT_MARK = "[… cut to fit the context window]"
"""Where a quoted contribution was cut."""
QUOTE_FLOOR_CHARS = 200
"""A quote is never cut shorter than this many characters (a quote shorter than that is kept whole)."""


@dataclass(frozen=True)
class Squeeze:
    """``quote_share``: the share of each quoted contribution kept; ``max_tokens``: the reply's lowered limit."""

    quote_share: float = 1.0
    max_tokens: int | None = None

    @property
    def cuts_quotes(self) -> bool:
        return self.quote_share < 1.0


NONE = Squeeze()

_current: ContextVar[Squeeze] = ContextVar("dialectic_squeeze", default=NONE)


def current() -> Squeeze:
    return _current.get()


@contextmanager
def squeezing(squeeze: Squeeze) -> Iterator[None]:
    """Prompts made inside this block are squeezed by ``squeeze``."""
    token = _current.set(squeeze)
    try:
        yield
    finally:
        _current.reset(token)


def cut_quote(text: str, share: float) -> str:
    """``text`` cut to ``share`` of its length (never under :data:`QUOTE_FLOOR_CHARS`), marked; pure."""
    body = text.strip()
    keep = max(QUOTE_FLOOR_CHARS, int(len(body) * share))
    if share >= 1.0 or len(body) <= keep:
        return body
    head = body[:keep]
    trimmed = trim_to_complete(head)
    kept = trimmed if len(trimmed) >= keep // 2 else head.rstrip()
    return f"{kept} {CUT_MARK}"


def quote(text: str) -> str:
    """Another participant's contribution as the prompt being made quotes it (see the module's docstring)."""
    return cut_quote(text, current().quote_share)


def quotes_cut() -> bool:
    """Whether the prompt being made cuts what it quotes (its template then says so)."""
    return current().cuts_quotes


def reply_tokens(configured: int | None) -> int | None:
    """The reply's ``maxTokens`` for the prompt being made: the configured one, or lower when squeezed."""
    lowered = current().max_tokens
    if lowered is None or configured is None:
        return configured
    return min(configured, lowered)
