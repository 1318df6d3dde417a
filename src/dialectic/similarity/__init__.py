"""Similarity models for the detectors: sentence embeddings when installed, chosen by measurement.

:mod:`~dialectic.similarity.choice` picks the model the engine uses; :mod:`~dialectic.similarity.minilm`
runs all-MiniLM-L6-v2 (:mod:`~dialectic.similarity.bert`, a numpy forward pass) from the pinned data
package of :mod:`~dialectic.similarity.packaged_model`; :mod:`~dialectic.similarity.llama_embeddings`
is the measured alternative (the local GGUF model's own embeddings); :mod:`~dialectic.similarity.separation`
scores any of them on labelled pairs.
"""
