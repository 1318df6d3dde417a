"""Sentence vectors from the embedded GGUF chat model itself, through llama.cpp (the ``local`` extra).

No new dependency and no new file: the model the ``local`` provider runs is loaded a second
time with ``embedding=True`` and its hidden states pooled per text. A chat model was not
trained for this, so it is a candidate measured by ``benchmarks/similarity.py``, not the default.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from dialectic.llm.local_models import DEFAULT_MODEL, ModelSpec, is_local_available, prepare_model, resolve_model
from dialectic.similarity.bert import normalise
from dialectic.similarity.embedding import Vectors

if TYPE_CHECKING:
    from llama_cpp import Llama

Pooling = Literal["mean", "last"]
CONTEXT = 2048
"""Tokens per text (longer texts are cut: llama.cpp pools one sequence per text)."""


def llama_embeddings_available(model: str = DEFAULT_MODEL) -> bool:
    """Whether llama-cpp-python and ``model``'s part packages are installed (nothing is imported)."""
    if model == DEFAULT_MODEL:
        return is_local_available()
    source = resolve_model(model)
    if importlib.util.find_spec("llama_cpp") is None or not isinstance(source, ModelSpec):
        return False
    return all(importlib.util.find_spec(p.replace("-", "_")) is not None for p in source.packages)


class LlamaEncoder:
    """Texts to unit vectors with a GGUF model's pooled hidden states (loaded on first use)."""

    def __init__(self, model: str = DEFAULT_MODEL, *, pooling: Pooling = "mean", threads: int | None = None) -> None:
        self.model = model
        self.pooling = pooling
        self.threads = threads
        self._llama: Llama | None = None

    def _load(self) -> Llama:
        from dialectic.llm.local_provider import default_threads, import_llama

        llama_class = import_llama()  # first: OpenMP must be told to sleep, not spin, before llama.cpp loads
        from llama_cpp import LLAMA_POOLING_TYPE_LAST, LLAMA_POOLING_TYPE_MEAN

        source = resolve_model(self.model)
        path = prepare_model(source) if isinstance(source, ModelSpec) else source
        threads = self.threads or default_threads()
        return llama_class(
            model_path=str(path),
            embedding=True,
            pooling_type=LLAMA_POOLING_TYPE_MEAN if self.pooling == "mean" else LLAMA_POOLING_TYPE_LAST,
            n_ctx=CONTEXT,
            n_batch=CONTEXT,
            n_ubatch=CONTEXT,
            n_threads=threads,
            n_threads_batch=threads,
            verbose=False,
        )

    def encode(self, texts: Sequence[str]) -> Vectors:
        if self._llama is None:
            self._llama = self._load()
        rows = [self._llama.embed(text, truncate=True) for text in texts]
        return normalise(np.asarray(rows, dtype=np.float32).reshape(len(texts), -1))
