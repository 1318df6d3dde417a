"""The package's layout is its architecture: packages by job, layers import downwards only, no cycles.

Every import counts, at any depth of a file and also behind ``if TYPE_CHECKING:``: a cycle hidden
from the interpreter is still a cycle in the design.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import dialectic

ROOT = Path(dialectic.__file__).parent

LAYERS: dict[str, int] = {
    "core": 0,  # the debate's data, changes, events, errors, configuration models, usage, prices
    "llm": 1,  # providers and the client around them
    "store": 1,  # where debates are kept
    "reporting": 1,  # what a stored debate becomes for people
    "context": 2,  # the context directory the agents may read
    "similarity": 2,  # how alike two texts are
    "agents": 3,  # participants and their prompts
    "engine": 4,  # the debate's flow
    "tracing": 5,
    "loading": 5,  # configuration files in, a checked configuration out
    "testing": 5,  # the scripted model and fake servers that ship for tests
    "front": 6,  # the public Python API (``import dialectic``)
    "cluster": 6,  # Ray: joining a cluster, the per-endpoint limiter actors, the worker pool (batch and bench)
    "batch": 7,  # many debates from a JSONL file, through the public API
    "bench": 7,
    "eval": 7,
    "web": 7,
    "mcp_server": 7,
    "cli": 8,  # the command line: may start any of the entry points below it
}
"""Each package's layer: it may import only from lower layers (and itself)."""
ROOT_MODULES = {"__init__", "__main__", "_version"}  # _version: the version string alone (no imports)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> Iterator[tuple[int, str]]:
    """Every ``dialectic`` module ``path`` imports (absolute and relative, at any depth), with its line."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = f"{base}.{node.module}" if base and node.module else (node.module or base)
            names = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        else:
            continue
        for name in names:
            if name == "dialectic" or name.startswith("dialectic."):
                yield node.lineno, name


def modules() -> list[Path]:
    found = sorted(ROOT.rglob("*.py"))
    assert len(found) > 100, "the walk found too few modules to mean anything"
    return found


def top_package(name: str) -> str:
    return name.split(".")[1] if "." in name else ""


def test_the_root_holds_only_packages_and_the_entry_point() -> None:
    loose = sorted(p.stem for p in ROOT.glob("*.py") if p.stem not in ROOT_MODULES)
    assert loose == []
    packages = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
    assert packages == set(LAYERS), "every package has a layer"


def test_layers_import_downwards_only() -> None:
    offending = []
    for path in modules():
        here = top_package(module_name(path))
        if here not in LAYERS:
            continue
        for line, name in imported_modules(path):
            there = top_package(name)
            if there and there != here and there in LAYERS and LAYERS[there] >= LAYERS[here]:
                offending.append(f"{path.relative_to(ROOT.parent)}:{line} ({here}) imports {name} ({there})")
    assert offending == []


def test_no_module_imports_itself_back() -> None:
    """No import cycle between modules, whatever the imports are behind."""
    existing = {module_name(p) for p in modules()}
    graph: dict[str, set[str]] = {}
    for path in modules():
        targets = set()
        for _, name in imported_modules(path):
            while name and name not in existing:
                name = name.rpartition(".")[0]
            if name and name != module_name(path) and name != "dialectic":
                targets.add(name)
        graph[module_name(path)] = targets
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, set())):
            if state.get(nxt) == 1:
                cycles.append([*trail[trail.index(nxt) :], nxt] if nxt in trail else [node, nxt])
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert cycles == []


def test_the_walk_finds_a_modules_imports() -> None:
    names = [name for _, name in imported_modules(ROOT / "llm" / "client.py")]
    assert "dialectic.llm.retry" in names
