"""all-MiniLM-L6-v2 sentence embeddings in numpy: WordPiece tokens, the BERT forward pass, pooling.

The model files come from :mod:`dialectic.similarity.packaged_model` (a pinned data package,
verified by SHA-256). Texts longer than the model's 256-token window are cut into consecutive
windows; a text's vector is the token-weighted mean of its windows' vectors, so a long proposal
is compared as a whole rather than by its first paragraph.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from threadpoolctl import threadpool_limits

from dialectic.core.errors import ConfigError
from dialectic.similarity.bert import Array, BertConfig, Weights, normalise, sentence_embeddings
from dialectic.similarity.embedding import Vectors
from dialectic.similarity.packaged_model import MINILM, EmbeddingModelSpec, Finder, find_archive, read_members

if TYPE_CHECKING:
    from tokenizers import Tokenizer

BATCH = 16
"""Windows encoded together (sorted by length, so little padding)."""
BLAS_THREADS = 1
"""Threads numpy's BLAS may use for the forward pass. One, on purpose: the products are small, and
when the cores are busy (a local model generating, other processes) a multi-threaded BLAS waits
on its own descheduled threads; measured on 2 busy cores, 1,000 words took 7 s on one thread
and 17–39 s on two."""


def token_windows(ids: Sequence[int], size: int) -> list[list[int]]:
    """``ids`` cut into consecutive windows of at most ``size`` tokens (one empty window for no tokens)."""
    if not ids:
        return [[]]
    return [list(ids[start : start + size]) for start in range(0, len(ids), size)]


class MiniLMEncoder:
    """Texts to unit vectors with a BERT sentence encoder: tokenizer, numpy forward pass, pooling."""

    def __init__(self, tokenizer: Tokenizer, weights: Weights, config: BertConfig, *, window: int) -> None:
        self.tokenizer = tokenizer
        self.weights = weights
        self.config = config
        self.window = window
        self._cls = self._special("[CLS]")
        self._sep = self._special("[SEP]")

    def _special(self, token: str) -> int:
        found = self.tokenizer.token_to_id(token)
        if found is None:
            raise ConfigError(f"the embedding model's tokenizer has no {token} token")
        return int(found)

    def encode(self, texts: Sequence[str]) -> Vectors:
        """One unit vector per text; long texts are the token-weighted mean of their windows."""
        windows: list[tuple[int, list[int]]] = []
        for index, text in enumerate(texts):
            # encode, not encode_batch: no tokenizer thread pool (it warns when the process later forks)
            for window in token_windows(self.tokenizer.encode(text, add_special_tokens=False).ids, self.window - 2):
                windows.append((index, [self._cls, *window, self._sep]))
        totals = np.zeros((len(texts), self.config.hidden_size), dtype=np.float32)
        order = sorted(range(len(windows)), key=lambda k: len(windows[k][1]))
        with threadpool_limits(limits=BLAS_THREADS, user_api="blas"):
            for start in range(0, len(order), BATCH):
                batch = [windows[k] for k in order[start : start + BATCH]]
                vectors = self._embed([ids for _, ids in batch])
                for (owner, ids), vector in zip(batch, vectors, strict=True):
                    totals[owner] += vector * len(ids)
        return normalise(totals)

    def _embed(self, sequences: list[list[int]]) -> Array:
        length = max(len(s) for s in sequences)
        ids = np.zeros((len(sequences), length), dtype=np.int64)
        mask = np.zeros((len(sequences), length), dtype=np.float32)
        for row, sequence in enumerate(sequences):
            ids[row, : len(sequence)] = sequence
            mask[row, : len(sequence)] = 1.0
        return sentence_embeddings(ids, mask, self.weights, self.config)


def load_encoder(spec: EmbeddingModelSpec = MINILM, find: Finder = importlib.util.find_spec) -> MiniLMEncoder:
    """The verified model, ready to encode (about a second: unzip, hash and load ~90 MB).

    Raises :class:`ModelNotInstalled` without the data package, ``ConfigError`` when it is altered.
    """
    from safetensors.numpy import load as load_safetensors
    from tokenizers import Tokenizer

    contents = read_members(find_archive(spec, find), spec)
    tokenizer = Tokenizer.from_str(contents["tokenizer.json"].decode("utf-8"))
    tokenizer.no_padding()  # the shipped tokenizer.json pads every text to 128 tokens
    tokenizer.no_truncation()  # windows are cut here instead, so no text is silently shortened
    config = BertConfig.from_json(json.loads(contents["config.json"]))
    weights = {
        name: array.astype(np.float32) for name, array in load_safetensors(contents["model.safetensors"]).items()
    }
    return MiniLMEncoder(tokenizer, weights, config, window=min(spec.window, config.max_positions))
