"""The context directory's full-text index: BM25 order, the content-hash cache, rebuilt on change."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialectic.context.search_index import (
    IndexedFile,
    SearchIndex,
    chunks_of,
    default_cache_dir,
    fts5_available,
    require_fts5,
)
from dialectic.context.tools import ContextDirectory
from dialectic.core.errors import ConfigError

CORPUS = [
    IndexedFile("cache.md", "The cache evicts entries. Cache misses go to the database. The cache is an LRU cache."),
    IndexedFile("db.md", "The database stores rows. A cache in front of it is optional."),
    IndexedFile("queue.md", "The queue buffers writes for the workers."),
]


def test_bm25_puts_the_densest_match_first(tmp_path: Path) -> None:
    index = SearchIndex.open_or_build(CORPUS, tmp_path)
    try:
        hits = index.search("cache", 10)
        assert [h.path for h in hits] == ["cache.md", "db.md"]
        assert hits[0].score < hits[1].score  # SQLite's bm25(): lower is better
        assert index.search("workers queue", 10)[0].path == "queue.md"
        assert index.search("!!! ???", 10) == []
        assert index.search('"quoted" OR NEAR(', 10) == []  # FTS5 syntax in a query is taken as plain words
    finally:
        index.close()


def test_a_hit_names_its_line_range(tmp_path: Path) -> None:
    text = "".join(f"filler line {i}\n" for i in range(1, 81)) + "the needle sits here\n"
    index = SearchIndex.open_or_build([IndexedFile("big.txt", text)], tmp_path)
    try:
        (hit,) = index.search("needle", 5)
        assert hit.location == "big.txt:81-81"
        assert "needle" in hit.snippet
    finally:
        index.close()


def test_the_second_build_of_the_same_files_is_a_cache_hit(tmp_path: Path) -> None:
    first = SearchIndex.open_or_build(CORPUS, tmp_path)
    second = SearchIndex.open_or_build(list(reversed(CORPUS)), tmp_path)
    try:
        assert first.built and not second.built
        assert first.path == second.path
        assert [p.name for p in tmp_path.iterdir()] == [first.path.name]  # no temporary file left behind
    finally:
        first.close()
        second.close()


def test_a_changed_file_gets_a_new_index(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    root.mkdir()
    (root / "a.md").write_text("alpha beta\n", encoding="utf-8")
    cache = tmp_path / "cache"
    before = ContextDirectory.open(root, cache_dir=cache)
    again = ContextDirectory.open(root, cache_dir=cache)
    (root / "a.md").write_text("alpha gamma\n", encoding="utf-8")
    after = ContextDirectory.open(root, cache_dir=cache)
    try:
        assert before.index is not None and again.index is not None and after.index is not None
        assert before.index.built and not again.index.built and after.index.built
        assert before.index.path != after.index.path
        assert after.context_search("gamma").text.startswith("1. a.md:1-1")
        assert before.context_search("gamma").text == "no matches"
    finally:
        for opened in (before, again, after):
            opened.close()


def test_chunks_cover_every_line() -> None:
    text = "\n".join(str(i) for i in range(1, 91))
    assert [(a, b) for a, b, _ in chunks_of(text, 40)] == [(1, 40), (41, 80), (81, 90)]


def test_the_cache_lives_under_dialectic_home_when_set(tmp_path: Path) -> None:
    assert default_cache_dir({"DIALECTIC_HOME": str(tmp_path)}) == tmp_path / "cache" / "context-index"
    assert default_cache_dir({}).name == "context-index"


def test_fts5_is_checked_with_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    assert fts5_available()
    monkeypatch.setattr("dialectic.context.search_index.fts5_available", lambda: False)
    with pytest.raises(ConfigError, match="needs SQLite with FTS5"):
        require_fts5()
