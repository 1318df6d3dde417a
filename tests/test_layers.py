"""Layers import downwards only: the LLM layer knows nothing of agents, the engine or the CLI."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import dialectic.llm

LLM_DIR = Path(dialectic.llm.__file__).parent
FORBIDDEN_IN_LLM = ("dialectic.agents", "dialectic.engine", "dialectic.cli", "dialectic.eval", "dialectic.bench")


def imported_modules(path: Path) -> Iterator[tuple[int, str]]:
    """Every module ``path`` imports (absolute and relative, at any depth in the file), with its line."""
    package = "dialectic." + ".".join(path.relative_to(LLM_DIR.parent).with_suffix("").parts)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level)[0]
                yield node.lineno, f"{base}.{node.module}" if node.module else base
            elif node.module:
                yield node.lineno, node.module


def test_llm_modules_import_nothing_from_the_layers_above() -> None:
    modules = sorted(LLM_DIR.rglob("*.py"))
    assert len(modules) > 5, "the walk found too few modules to mean anything"
    offending = [
        f"{path.relative_to(LLM_DIR.parent)}:{line} imports {name}"
        for path in modules
        for line, name in imported_modules(path)
        if name.startswith(FORBIDDEN_IN_LLM)
    ]
    assert offending == []


def test_the_walk_finds_a_modules_imports() -> None:
    names = [name for _, name in imported_modules(LLM_DIR / "client.py")]
    assert "dialectic.llm.retry" in names and "pydantic" in names
