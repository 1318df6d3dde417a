"""Similarity from sentence vectors: any encoder of texts into unit vectors, as a ``SimilarityModel``.

The detectors compare the same texts more than once (a round's positions for convergence,
then each against the previous round's for repetition, then again as next round's
"previous"), so vectors are kept in a small least-recently-used cache keyed by the text.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]

CACHED_TEXTS = 256


class TextEncoder(Protocol):
    def encode(self, texts: Sequence[str]) -> Vectors:
        """One unit-length vector per text (rows of a ``len(texts) × dimensions`` array)."""
        ...


class EmbeddingSimilarity:
    """Cosine similarity of an encoder's vectors, clipped to 0–1 (a negative cosine counts as unrelated)."""

    def __init__(self, encoder: TextEncoder, name: str, *, cached_texts: int = CACHED_TEXTS) -> None:
        self.encoder = encoder
        self.name = name
        self._cached_texts = cached_texts
        self._cache: OrderedDict[str, Vectors] = OrderedDict()

    def vectors(self, texts: Sequence[str]) -> Vectors:
        """The unit vectors of ``texts`` (each distinct text not in the cache is encoded once)."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            for text, vector in zip(missing, self.encoder.encode(missing), strict=True):
                self._cache[text] = vector
        rows = []
        for text in texts:
            self._cache.move_to_end(text)
            rows.append(self._cache[text])
        while len(self._cache) > self._cached_texts:
            self._cache.popitem(last=False)
        return np.stack(rows).astype(np.float32) if rows else np.zeros((0, 0), dtype=np.float32)

    def similarities(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self.vectors(texts)
        matrix = np.clip(vectors @ vectors.T, 0.0, 1.0)
        np.fill_diagonal(matrix, 1.0)
        return [[float(value) for value in row] for row in matrix]
