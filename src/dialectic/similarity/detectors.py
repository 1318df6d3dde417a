"""Detectors that read a debate without a model call: convergence, repetition, diminishing returns,
and a solution that only restates its problem.

Pure functions over texts and assessments. Similarity comes from a :class:`SimilarityModel`:
an embedding model when one is installed (:func:`dialectic.similarity.choice.default_similarity`),
else :class:`LexicalSimilarity` (TF-IDF cosine over the texts compared), which says so in its
``name`` so every figure shows what measured it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Protocol

from dialectic.core.domain import RoundAssessment

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were will with we you "
    "they their our your not but if then than so such can could should would may might must do does did".split()
)


class SimilarityModel(Protocol):
    name: str
    """What measures similarity (shown beside the figures), e.g. ``all-MiniLM-L6-v2 embeddings, cosine``."""

    def similarities(self, texts: Sequence[str]) -> list[list[float]]:
        """The cosine similarity (0–1) of every pair of ``texts``, as a square matrix."""
        ...


def words(text: str) -> list[str]:
    """Lower-cased content words (stopwords and one-letter tokens left out)."""
    return [w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in _STOPWORDS]


class LexicalSimilarity:
    """TF-IDF cosine, the IDF taken over the texts being compared (no model, no download).

    ``note`` says why this measure was used when a semantic one was wanted (e.g. how to install
    it); it becomes part of the ``name`` shown beside every figure.
    """

    def __init__(self, note: str = "") -> None:
        self.note = note
        self.name = f"lexical TF-IDF cosine: {note}" if note else "lexical TF-IDF cosine"

    def similarities(self, texts: Sequence[str]) -> list[list[float]]:
        counts = [Counter(words(t)) for t in texts]
        documents = len(texts)
        frequency = Counter(term for c in counts for term in c)
        idf = {term: math.log((1 + documents) / (1 + df)) + 1 for term, df in frequency.items()}
        vectors = [{term: tf * idf[term] for term, tf in c.items()} for c in counts]
        norms = [math.sqrt(sum(v * v for v in vec.values())) for vec in vectors]
        matrix = [[1.0 if i == j else 0.0 for j in range(documents)] for i in range(documents)]
        for i, j in combinations(range(documents), 2):
            if norms[i] and norms[j]:
                dot = sum(weight * vectors[j].get(term, 0.0) for term, weight in vectors[i].items())
                matrix[i][j] = matrix[j][i] = dot / (norms[i] * norms[j])
        return matrix


def convergence(positions: Sequence[str], model: SimilarityModel) -> float | None:
    """How alike the participants' latest positions are: the mean pairwise similarity (None under two)."""
    if len(positions) < 2:
        return None
    matrix = model.similarities(positions)
    pairs = list(combinations(range(len(positions)), 2))
    return sum(matrix[i][j] for i, j in pairs) / len(pairs)


def repetition(previous: Mapping[str, str], current: Mapping[str, str], model: SimilarityModel) -> float | None:
    """The highest similarity between a participant's turn and its own previous one (None without pairs)."""
    shared = [agent for agent in current if agent in previous]
    if not shared:
        return None
    texts = [t for agent in shared for t in (previous[agent], current[agent])]
    matrix = model.similarities(texts)
    return max(matrix[2 * k][2 * k + 1] for k in range(len(shared)))


def _falling(values: Sequence[float]) -> bool:
    return len(values) >= 2 and all(later < earlier for earlier, later in zip(values, values[1:], strict=False))


def diminishing_returns(history: Sequence[RoundAssessment], reply_words: Sequence[int] = ()) -> bool:
    """Seed ``004_…`` §4.3: over the last three rounds, quality and novelty both falling — or replies
    shrinking while quality falls — or the last two rounds both flagged repetitive."""
    if len(history) >= 2 and all(a.flags.repetitive for a in history[-2:]):
        return True
    if len(history) < 3:
        return False
    recent = history[-3:]
    quality = [a.quality for a in recent]
    novelty = [
        sum(p.scores.novelty for p in a.participants) / len(a.participants) if a.participants else 0.0 for a in recent
    ]
    shrinking = len(reply_words) >= 3 and _falling(list(reply_words[-3:]))
    return _falling(quality) and (_falling(novelty) or shrinking)


MIN_NOVELTY = 0.4
"""Below this share of new content words, a solution is taken to restate its problem.

Measured on the rate-limiter demo (``scripts/demo.sh``): the problem restated word for word
scores 0.07, the problem reworded with one agent's sentence appended 0.28; the 0.5B agents'
proposals, critiques and refinements of the same problem 0.6–0.78 (they share the problem's
vocabulary: rate, limiter, requests, key, latency…)."""


@dataclass(frozen=True)
class Restatement:
    """How much of a solution is its problem said again (see :func:`restatement`)."""

    novelty: float
    """Share of the solution's content words (occurrences) that the problem never uses."""
    similarity: float
    """The lexical similarity of the two texts (:class:`LexicalSimilarity`)."""
    restates: bool
    """True when the solution brings too little of its own: ``novelty`` under the threshold."""


def novelty_share(text: str, reference: str) -> float:
    """Share of ``text``'s content words (occurrences) that never occur in ``reference``, in [0, 1].

    A text with no content word has nothing new: 0.0.
    """
    own = words(text)
    if not own:
        return 0.0
    known = set(words(reference))
    return sum(1 for word in own if word not in known) / len(own)


def restatement(
    solution: str, problem: str, *, instructions: str = "", min_novelty: float = MIN_NOVELTY
) -> Restatement:
    """Whether ``solution`` mostly restates ``problem`` or the judge's own ``instructions`` — what a
    small model's judge does when it copies the problem, or a line of its prompt, into its answer —
    with the figures behind the answer.

    Novelty decides, not similarity: a real design shares much of its problem's vocabulary, so
    a similarity threshold that catches a reworded problem also flags good answers.
    """
    novelty = novelty_share(solution, f"{problem}\n{instructions}")
    similarity = LexicalSimilarity().similarities([solution, problem])[0][1]
    return Restatement(novelty=novelty, similarity=similarity, restates=novelty < min_novelty)
