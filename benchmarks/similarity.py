"""Which similarity model should measure convergence and repetition? Measured on labelled pairs.

Candidates (each skipped, with the reason, when it is not installed):

- ``lexical``: TF-IDF cosine (:class:`dialectic.similarity.detectors.LexicalSimilarity`), the fallback;
- ``minilm``: all-MiniLM-L6-v2 from the pinned data package, run in numpy (``[embeddings]``);
- ``MODEL:POOLING``: the embedded GGUF chat model's own embeddings through llama.cpp, pooled
  by ``mean`` or ``last`` token (``[local]`` for ``qwen2.5-0.5b``, ``[local-large]`` for ``qwen2.5-1.5b``).

For each it prints how well it separates paraphrases from disagreements on
``benchmarks/data/similarity_pairs.json`` (ROC AUC, accuracy at the best threshold, share of
disagreements scoring below their topic's paraphrase, mean similarity per kind) and its speed
(load time, milliseconds per short statement, seconds for one ~1,000-word position). Each AUC
comes with its 95% bootstrap interval: with 20 pairs a side, differences inside it are noise.
Then each candidate's AUCs are compared with the first candidate's on the same resampled pairs
(a paired bootstrap), which tells real differences from noise more sharply.

Run: ``.venv/bin/python benchmarks/similarity.py [--candidates lexical,minilm,qwen2.5-0.5b:mean]``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dialectic.similarity.detectors import LexicalSimilarity, SimilarityModel
from dialectic.similarity.embedding import EmbeddingSimilarity
from dialectic.similarity.separation import (
    LabelledPair,
    Separation,
    auc_difference,
    load_pairs,
    pair_scores,
    separation,
)

PAIRS = Path(__file__).parent / "data" / "similarity_pairs.json"
DEFAULT_CANDIDATES = "minilm,lexical,qwen2.5-0.5b:mean,qwen2.5-0.5b:last"
LONG_WORDS = 1000


@dataclass(frozen=True)
class Measured:
    name: str
    scores: dict[str, float]
    separation: Separation
    load_s: float
    short_ms: float
    long_s: float


class Unavailable(Exception):
    """The candidate is not installed here."""


def build(candidate: str) -> SimilarityModel:
    """The similarity model for a candidate name (loaded, so its load time is measured here)."""
    if candidate == "lexical":
        return LexicalSimilarity()
    if candidate == "minilm":
        from dialectic.similarity.minilm import load_encoder
        from dialectic.similarity.packaged_model import MINILM, ModelNotInstalled, libraries_installed

        if not libraries_installed():
            raise Unavailable("install .[embeddings]")
        try:
            return EmbeddingSimilarity(load_encoder(), f"{MINILM.name} embeddings (numpy)")
        except ModelNotInstalled as missing:
            raise Unavailable(f"{missing} is not installed") from missing
    model, _, pooling = candidate.partition(":")
    if pooling not in ("mean", "last"):
        raise SystemExit(f"unknown candidate {candidate!r} (lexical, minilm or MODEL:mean|last)")
    from dialectic.similarity.llama_embeddings import LlamaEncoder, llama_embeddings_available

    if not llama_embeddings_available(model):
        raise Unavailable(f"{model} or llama-cpp-python is not installed")
    encoder = LlamaEncoder(model, pooling="mean" if pooling == "mean" else "last")
    encoder.encode(["warm-up: load the model"])
    return EmbeddingSimilarity(encoder, f"{model} embeddings ({pooling} pooling)")


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def long_position(pairs: list[LabelledPair]) -> str:
    """A debate-sized position (about ``LONG_WORDS`` words) made of the set's statements."""
    words: list[str] = []
    for pair in pairs:
        words += f"{pair.a} {pair.b}".split()
    return " ".join(words[:LONG_WORDS])


def measure(candidate: str, pairs: list[LabelledPair]) -> Measured:
    built: list[SimilarityModel] = []
    load_s = timed(lambda: built.append(build(candidate)))
    model = built[0]
    scores = pair_scores(model, pairs)
    statements = list(dict.fromkeys(t for p in pairs for t in (p.a, p.b)))
    fresh = build(candidate) if candidate == "lexical" else model
    if isinstance(fresh, EmbeddingSimilarity):
        short_s = timed(lambda: fresh.encoder.encode(statements))
        long_s = timed(lambda: fresh.encoder.encode([long_position(pairs)]))
    else:
        short_s = timed(lambda: [fresh.similarities([t, t]) for t in statements])
        long_s = timed(lambda: fresh.similarities([long_position(pairs), long_position(pairs)]))
    return Measured(model.name, scores, separation(pairs, scores), load_s, 1000 * short_s / len(statements), long_s)


GROUPS = ("disagreement/negation", "disagreement/alternative", "unrelated")


HEADER = (
    "| candidate | AUC para vs disagree | vs negation | vs alternative | vs unrelated "
    "| best balanced accuracy (threshold) | paired wins | mean para / neg / alt / unrel "
    "| load s | ms per statement | s per 1,000 words |\n"
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
)


def auc(s: Separation, group: str) -> str:
    """An AUC with its 95% bootstrap interval, e.g. ``0.79 (0.64–0.92)``."""
    value = s.auc if group == "disagreement" else s.auc_by_group.get(group)
    if value is None:
        return "—"
    low, high = s.intervals[group]
    return f"{value:.2f} ({low:.2f}–{high:.2f})"


def row(r: Measured) -> str:
    """One Markdown table row: separation (AUC overall and per group), accuracy, mean similarities, speed."""
    s = r.separation
    aucs = " | ".join(auc(s, g) for g in GROUPS)
    means = " / ".join(f"{s.means[g]:.2f}" if g in s.means else "—" for g in ("paraphrase", *GROUPS))
    return (
        f"| {r.name} | {auc(s, 'disagreement')} | {aucs} | {s.accuracy:.0%} ({s.threshold:.2f}) | {s.paired:.0%} "
        f"| {means} | {r.load_s:.2f} | {r.short_ms:.1f} | {r.long_s:.2f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--candidates", default=DEFAULT_CANDIDATES, help=f"comma-separated (default {DEFAULT_CANDIDATES})"
    )
    parser.add_argument("--pairs", type=Path, default=PAIRS, help="labelled pairs (JSON)")
    parser.add_argument("--scores", type=Path, help="also write every pair's score per candidate here (JSON)")
    args = parser.parse_args()
    pairs = load_pairs(args.pairs)
    counts = {g: sum(p.group == g for p in pairs) for g in ("paraphrase", *GROUPS)}
    print(f"{len(pairs)} labelled pairs: " + ", ".join(f"{n} {g}" for g, n in counts.items()), flush=True)
    print(HEADER, flush=True)
    scores: dict[str, dict[str, float]] = {}
    for candidate in args.candidates.split(","):
        try:
            measured = measure(candidate.strip(), pairs)
        except Unavailable as reason:
            print(f"(skipped {candidate}: {reason})", flush=True)
            continue
        print(row(measured), flush=True)
        scores[measured.name] = measured.scores
        if args.scores:
            args.scores.write_text(json.dumps(scores, indent=1) + "\n", encoding="utf-8")
    print_differences(pairs, scores)


def print_differences(pairs: list[LabelledPair], scores: dict[str, dict[str, float]]) -> None:
    """Each candidate's AUC minus the first's, per kind of pair, with paired-bootstrap intervals."""
    if len(scores) < 2:
        return
    (base, base_scores), *others = scores.items()
    print(f"\nAUC difference to {base} (95% paired-bootstrap interval):")
    for name, other in others:
        cells = []
        for group in ("disagreement", *GROUPS):
            gain, low, high = auc_difference(pairs, base_scores, other, group)
            cells.append(f"{group} {gain:+.2f} ({low:+.2f} to {high:+.2f})")
        print(f"- {name}: " + "; ".join(cells))


if __name__ == "__main__":
    main()
