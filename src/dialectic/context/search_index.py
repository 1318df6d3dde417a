"""A full-text index of a context directory: SQLite FTS5, ranked by BM25.

Each text file is cut into chunks of :data:`CHUNK_LINES` lines, so a hit names where it is
(``path:start-end``). The index is built once and kept in a cache directory under a name made
from a hash of every indexed file's path and content (and of how chunks are cut): a second
debate over the same tree opens the same file instead of building it again, and a tree that
changed in any way gets a new one. The file is written under a temporary name and renamed,
so a reader never sees half an index.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_cache_dir

from dialectic.core import environment
from dialectic.core.errors import ConfigError
from dialectic.store import APP_NAME

CHUNK_LINES = 40
INDEX_VERSION = "1"
"""Part of the content hash: a change to the schema or the chunking makes a new index."""
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class IndexedFile:
    path: str
    """POSIX path relative to the context directory."""
    text: str


@dataclass(frozen=True)
class SearchHit:
    path: str
    start_line: int
    end_line: int
    score: float
    """BM25 as SQLite computes it: lower (more negative) is a better match."""
    snippet: str

    @property
    def location(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"


def default_cache_dir(env: Mapping[str, str]) -> Path:
    """Where indexes are kept: ``$DIALECTIC_HOME/cache/context-index``, else the user's cache directory."""
    home = environment.home(env)
    base = Path(home).expanduser() / "cache" if home else Path(user_cache_dir(APP_NAME, appauthor=False))
    return base / "context-index"


def fts5_available() -> bool:
    """Whether this Python's SQLite was built with FTS5."""
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("CREATE VIRTUAL TABLE probe USING fts5(body)")
    except sqlite3.OperationalError:
        return False
    finally:
        connection.close()
    return True


def require_fts5() -> None:
    """``ConfigError`` (exit 4) when SQLite lacks FTS5, said before a debate is created."""
    if not fts5_available():
        raise ConfigError(
            f"context_search needs SQLite with FTS5, which this Python's sqlite3 (SQLite {sqlite3.sqlite_version}) "
            "lacks; set debate.context.mode to paste, or use a Python built with FTS5"
        )


def content_hash(files: Iterable[IndexedFile]) -> str:
    digest = hashlib.sha256(f"dialectic-context-index:{INDEX_VERSION}:{CHUNK_LINES}\n".encode())
    for item in sorted(files, key=lambda f: f.path):
        body = item.text.encode("utf-8")
        digest.update(f"{item.path}\0{len(body)}\0".encode())
        digest.update(body)
    return digest.hexdigest()


def chunks_of(text: str, size: int = CHUNK_LINES) -> list[tuple[int, int, str]]:
    """``(first line, last line, text)`` for each run of ``size`` lines (1-based, inclusive)."""
    lines = text.splitlines()
    return [
        (start + 1, min(start + size, len(lines)), "\n".join(lines[start : start + size]))
        for start in range(0, len(lines), size)
    ]


class SearchIndex:
    """An open index; :meth:`search` answers a query with the best-ranked chunks."""

    def __init__(self, path: Path, *, built: bool) -> None:
        self.path = path
        self.built = built
        """True when this run built the index; False when it came from the cache."""
        self._connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)

    @classmethod
    def open_or_build(cls, files: list[IndexedFile], cache_dir: Path) -> SearchIndex:
        """The cached index of exactly these files, built first when there is none."""
        require_fts5()
        path = cache_dir / f"{content_hash(files)[:40]}.sqlite3"
        if path.is_file():
            return cls(path, built=False)
        cache_dir.mkdir(parents=True, exist_ok=True)
        _build(files, path)
        return cls(path, built=True)

    def search(self, query: str, limit: int) -> list[SearchHit]:
        """Chunks matching any word of ``query``, best first (BM25); ``[]`` for a query without words."""
        words = _WORD.findall(query)
        if not words:
            return []
        expression = " OR ".join('"' + word.replace('"', '""') + '"' for word in words)
        rows = self._connection.execute(
            "SELECT path, start_line, end_line, bm25(chunks) AS rank, "
            "snippet(chunks, 0, '', '', ' … ', 24) FROM chunks WHERE chunks MATCH ? ORDER BY rank LIMIT ?",
            (expression, limit),
        ).fetchall()
        return [SearchHit(path, int(start), int(end), float(rank), snip) for path, start, end, rank, snip in rows]

    def close(self) -> None:
        self._connection.close()


def _build(files: list[IndexedFile], path: Path) -> None:
    handle, temporary = tempfile.mkstemp(prefix=".building-", suffix=".sqlite3", dir=path.parent)
    os.close(handle)
    try:
        connection = sqlite3.connect(temporary)
        try:
            connection.execute(
                "CREATE VIRTUAL TABLE chunks USING fts5("
                "body, path, start_line UNINDEXED, end_line UNINDEXED, tokenize='porter unicode61')"
            )
            connection.executemany(
                "INSERT INTO chunks (body, path, start_line, end_line) VALUES (?, ?, ?, ?)",
                (
                    (body, item.path, start, end)
                    for item in files
                    for start, end, body in chunks_of(item.text)
                    if body.strip()
                ),
            )
            connection.commit()
        finally:
            connection.close()
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
