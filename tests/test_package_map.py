"""docs/development.md's package map lists every package with the rank tests/test_layers.py gives it."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_layers import LAYERS

DOC = Path(__file__).parents[1] / "docs" / "development.md"


def map_table() -> dict[str, int]:
    """The rows of the table under "## The package map": package → rank."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## The package map", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| (\d+) \|", section, re.MULTILINE)
    assert rows, "no package table under '## The package map'"
    names = [name for name, _ in rows]
    assert len(names) == len(set(names)), "a package is listed twice"
    return {name: int(rank) for name, rank in rows}


def test_the_package_map_is_the_layer_table() -> None:
    assert map_table() == LAYERS
