"""The documentation site shows the docstrings' reST markup as Markdown (scripts/griffe_rest_roles.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "griffe_rest_roles.py"


@pytest.fixture(scope="module")
def extension() -> ModuleType:
    pytest.importorskip("griffe")
    spec = importlib.util.spec_from_file_location("griffe_rest_roles", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("rest", "markdown"),
    [
        ("``debate.run``", "`debate.run`"),
        (":class:`~dialectic.front.debate.Debate`", "`Debate`"),
        (":meth:`run_sync`", "`run_sync`"),
        (":mod:`dialectic.engine.adaptive`", "`dialectic.engine.adaptive`"),
        (":ref:`the guide <guide>`", "`the guide`"),
        ("a `single` span stays", "a `single` span stays"),
    ],
)
def test_rest_markup_becomes_markdown(extension: ModuleType, rest: str, markdown: str) -> None:
    assert extension.markdown(rest) == markdown


def test_the_site_loads_the_extension() -> None:
    assert "scripts/griffe_rest_roles.py" in (SCRIPT.parents[1] / "mkdocs.yml").read_text(encoding="utf-8")
