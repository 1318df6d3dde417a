"""Lexical similarity between two texts: a tokenizer, content words, cosine and novelty share.

Pure functions on strings, no model and no I/O. They answer cheap questions such as "is this
reply mostly the problem restated?" — which a small model's judge does (its solution
copies the problem word for word) — without calling anything.

* :func:`tokenize` lower-cases and splits on anything that is not a letter or a digit, so
  ``"API-key"`` is ``["api", "key"]`` and ``"2 ms"`` is ``["2", "ms"]``;
* :func:`content_words` drops English function words (``the``, ``with``, ``should``…), which
  any two texts share and which say nothing about what a text is about;
* :func:`cosine_similarity` compares term-frequency vectors of content words (1.0: the same
  words in the same proportions; 0.0: no word in common);
* :func:`novelty_share` is the share of a text's content words that its reference never uses
  (0.0: every word comes from the reference; 1.0: none does).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

_WORD = re.compile(r"[^\W_]+")

STOP_WORDS: frozenset[str] = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each either else
    etc even ever every few for from further had has have having he her here hers herself him
    himself his how i if in into is it its itself just least less let like may me might more
    most much must my myself no nor not now of off on once one only or other our ours ourselves
    out over own per same shall she should so some such than that the their theirs them
    themselves then there these they this those though through thus to too under until up upon
    us use used uses using very via was we well were what when where whether which while who
    whom whose why will with within without would yet you your yours yourself yourselves
    """.split()
)
"""English function words and a few near-universal verbs; what is left says what a text is about."""


def tokenize(text: str) -> list[str]:
    """Lower-cased words and numbers of ``text`` (letters and digits of any script; the rest splits)."""
    return _WORD.findall(text.lower())


def content_words(text: str, stop_words: Iterable[str] = STOP_WORDS) -> list[str]:
    """The words of ``text`` that are not function words, in order, repeats kept."""
    stop = stop_words if isinstance(stop_words, frozenset | set) else frozenset(stop_words)
    return [word for word in tokenize(text) if word not in stop]


def cosine_similarity(a: str, b: str) -> float:
    """Cosine of the content-word frequency vectors of ``a`` and ``b``, in [0, 1] (0.0 if either has none)."""
    left, right = Counter(content_words(a)), Counter(content_words(b))
    if not left or not right:
        return 0.0
    dot = sum(count * right[word] for word, count in left.items())
    norm = math.sqrt(sum(c * c for c in left.values())) * math.sqrt(sum(c * c for c in right.values()))
    return min(1.0, dot / norm)


def novelty_share(text: str, reference: str) -> float:
    """Share of ``text``'s content words (occurrences) that never occur in ``reference``, in [0, 1].

    A text with no content word has nothing new: 0.0.
    """
    words = content_words(text)
    if not words:
        return 0.0
    known = set(content_words(reference))
    return sum(1 for word in words if word not in known) / len(words)


@dataclass(frozen=True)
class Restatement:
    """How much of a text is its source said again (see :func:`restatement`)."""

    novelty: float
    """Share of the text's content words that the source does not use."""
    similarity: float
    """Cosine similarity of the two texts' content words."""
    restates: bool
    """True when the text brings too little of its own: ``novelty`` under the threshold."""


MIN_NOVELTY = 0.25
"""Below this share of new content words, a text is taken to restate its source.

Measured on the rate-limiter demo: the problem restated word for word scores 0.0, the problem
reworded as "the solution" 0.05–0.15, a real design of the same problem 0.35–0.6 (it shares
the problem's vocabulary: rate, limiter, requests, key, latency…)."""


def restatement(text: str, source: str, *, min_novelty: float = MIN_NOVELTY) -> Restatement:
    """Whether ``text`` mostly restates ``source``, with the figures behind the answer."""
    novelty = novelty_share(text, source)
    return Restatement(novelty=novelty, similarity=cosine_similarity(text, source), restates=novelty < min_novelty)
