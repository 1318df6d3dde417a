"""Which similarity model the detectors use: all-MiniLM-L6-v2 when installed, else the lexical fallback.

The choice was made by measurement (``benchmarks/similarity.py``; figures in the README's
Detectors section). The model is loaded once per process, on the first round that is assessed,
and verified as it loads. Without it the lexical measure is used and its name says why and
how to install the model, so every stored figure shows what measured it.
"""

from __future__ import annotations

import functools
import importlib.util

from dialectic.core.errors import ConfigError
from dialectic.similarity.detectors import LexicalSimilarity, SimilarityModel
from dialectic.similarity.packaged_model import MINILM, Finder, ModelNotInstalled, install_command, libraries_installed


def choose_similarity(find: Finder = importlib.util.find_spec) -> SimilarityModel:
    """The embedding model if its libraries and data are installed and intact, else the named fallback.

    numpy and the model are imported only here, when a round is first assessed.
    """
    if not libraries_installed(find):
        return LexicalSimilarity("install dialectic-debate[embeddings] for semantic similarity")
    from dialectic.similarity.minilm import load_encoder

    try:
        encoder = load_encoder(MINILM, find)
    except ModelNotInstalled:
        return LexicalSimilarity(f"{install_command(MINILM)} for semantic similarity")
    except ConfigError as error:
        return LexicalSimilarity(f"the embedding model is unusable: {error}")
    from dialectic.similarity.embedding import EmbeddingSimilarity

    return EmbeddingSimilarity(encoder, f"{MINILM.name} embeddings, cosine")


@functools.cache
def default_similarity() -> SimilarityModel:
    """The process's similarity model, chosen (and loaded) on first use."""
    return choose_similarity()
