"""A BERT encoder's forward pass in numpy, for sentence embeddings (inference only, no framework).

The weights are a mapping from the Hugging Face ``BertModel`` parameter names (as stored in a
``model.safetensors`` file) to float32 arrays; the configuration comes from its ``config.json``.
:func:`sentence_embeddings` runs the encoder on a padded batch of token ids, mean-pools the
last hidden states over the real tokens and scales each vector to unit length: the pipeline
of sentence-transformers models such as all-MiniLM-L6-v2.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float32]
Weights = Mapping[str, Array]

_MASKED = np.float32(-1e9)
"""Added to the attention scores of padding positions: their softmax weight underflows to zero."""


@dataclass(frozen=True)
class BertConfig:
    """The shape of a BERT encoder, as ``config.json`` gives it."""

    hidden_size: int
    layers: int
    heads: int
    layer_norm_eps: float
    max_positions: int

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BertConfig:
        if data.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"unsupported activation {data.get('hidden_act')!r} (only gelu)")
        if data.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError("only absolute position embeddings are supported")
        config = cls(
            hidden_size=int(data["hidden_size"]),
            layers=int(data["num_hidden_layers"]),
            heads=int(data["num_attention_heads"]),
            layer_norm_eps=float(data.get("layer_norm_eps", 1e-12)),
            max_positions=int(data.get("max_position_embeddings", 512)),
        )
        if config.hidden_size % config.heads:
            raise ValueError("hidden_size must be a multiple of num_attention_heads")
        return config


def _erf(x: Array) -> Array:
    """The error function (Abramowitz and Stegun 7.1.26, absolute error below 1.5e-7; numpy has none)."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return (sign * (1.0 - poly * np.exp(-a * a))).astype(np.float32)


def gelu(x: Array) -> Array:
    """BERT's exact GELU, ``x · Φ(x)`` (not the tanh approximation)."""
    return (0.5 * x * (1.0 + _erf(x / np.float32(np.sqrt(2.0))))).astype(np.float32)


def layer_norm(x: Array, weight: Array, bias: Array, eps: float) -> Array:
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return ((x - mean) / np.sqrt(variance + eps) * weight + bias).astype(np.float32)


def _linear(x: Array, weights: Weights, name: str) -> Array:
    """``x @ Wᵀ + b`` for the ``name.weight`` / ``name.bias`` pair (PyTorch stores W as out × in).

    The product is taken on a 2-D view: numpy hands a stacked (3-D) product with a transposed
    operand to its own loops instead of BLAS, which is a hundred times slower.
    """
    weight = weights[f"{name}.weight"]
    flat = x.reshape(-1, x.shape[-1]) @ weight.T + weights[f"{name}.bias"]
    return flat.reshape(*x.shape[:-1], weight.shape[0]).astype(np.float32)


def _softmax(scores: Array) -> Array:
    shifted = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (shifted / shifted.sum(axis=-1, keepdims=True)).astype(np.float32)


def _attention(x: Array, mask: Array, weights: Weights, prefix: str, config: BertConfig) -> Array:
    batch, length, hidden = x.shape
    size = hidden // config.heads

    def heads(name: str) -> Array:
        projected = _linear(x, weights, f"{prefix}.attention.self.{name}")
        return projected.reshape(batch, length, config.heads, size).transpose(0, 2, 1, 3)

    query, key, value = heads("query"), heads("key"), heads("value")
    scores = query @ key.transpose(0, 1, 3, 2) / np.float32(np.sqrt(size))
    scores = scores + np.where(mask[:, None, None, :] > 0, np.float32(0.0), _MASKED)
    context = (_softmax(scores) @ value).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
    out = _linear(context, weights, f"{prefix}.attention.output.dense")
    return layer_norm(
        out + x,
        weights[f"{prefix}.attention.output.LayerNorm.weight"],
        weights[f"{prefix}.attention.output.LayerNorm.bias"],
        config.layer_norm_eps,
    )


def _layer(x: Array, mask: Array, weights: Weights, index: int, config: BertConfig) -> Array:
    prefix = f"encoder.layer.{index}"
    attended = _attention(x, mask, weights, prefix, config)
    inner = gelu(_linear(attended, weights, f"{prefix}.intermediate.dense"))
    out = _linear(inner, weights, f"{prefix}.output.dense")
    return layer_norm(
        out + attended,
        weights[f"{prefix}.output.LayerNorm.weight"],
        weights[f"{prefix}.output.LayerNorm.bias"],
        config.layer_norm_eps,
    )


def encode(ids: npt.NDArray[np.int64], mask: Array, weights: Weights, config: BertConfig) -> Array:
    """The last hidden states (batch × length × hidden) for token ``ids`` (batch × length, padded).

    ``mask`` is 1 for real tokens and 0 for padding; every token has segment (token type) 0.
    """
    length = ids.shape[1]
    if length > config.max_positions:
        raise ValueError(f"{length} tokens exceed the model's {config.max_positions} positions")
    x = (
        weights["embeddings.word_embeddings.weight"][ids]
        + weights["embeddings.position_embeddings.weight"][:length][None, :, :]
        + weights["embeddings.token_type_embeddings.weight"][0]
    ).astype(np.float32)
    x = layer_norm(
        x, weights["embeddings.LayerNorm.weight"], weights["embeddings.LayerNorm.bias"], config.layer_norm_eps
    )
    for index in range(config.layers):
        x = _layer(x, mask, weights, index, config)
    return x


def mean_pool(hidden: Array, mask: Array) -> Array:
    """The mean of each sequence's hidden states over its real tokens (batch × hidden)."""
    summed = (hidden * mask[:, :, None]).sum(axis=1)
    counts = np.maximum(mask.sum(axis=1, keepdims=True), 1.0)
    return (summed / counts).astype(np.float32)


def normalise(vectors: Array) -> Array:
    """Each row scaled to unit length (a zero row stays zero)."""
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


def sentence_embeddings(ids: npt.NDArray[np.int64], mask: Array, weights: Weights, config: BertConfig) -> Array:
    """Unit-length sentence vectors (batch × hidden): encoder, mean pooling, normalisation."""
    return normalise(mean_pool(encode(ids, mask, weights, config), mask))
