"""A Griffe extension for the documentation site: the docstrings' reST inline markup as Markdown.

The package's docstrings are written for Sphinx-style readers: ``code`` in double backquotes and
cross-references as :class:`~dialectic.Debate`, :meth:`run`, :mod:`dialectic.engine`. mkdocstrings
renders docstrings as Markdown, where those show literally. Before rendering, this extension
rewrites both forms in every docstring as Markdown code spans (a reference keeps its last dotted
part after a leading ``~``, as Sphinx shows it). Loaded by ``mkdocs.yml``.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|meth|func|mod|attr|data|exc|obj|const|ref|doc):`(~?)([^`]+)`")
_LITERAL = re.compile(r"``([^`]+?)``")


def _reference(match: re.Match[str]) -> str:
    short, target = match.group(1), match.group(2).strip()
    label, _, explicit = target.partition("<")
    if explicit:  # :ref:`text <target>`
        return f"`{label.strip()}`"
    return f"`{target.rsplit('.', 1)[-1] if short else target}`"


def markdown(text: str) -> str:
    """``text`` with reST roles and double-backquote literals as Markdown code spans."""
    return _LITERAL.sub(r"`\1`", _ROLE.sub(_reference, text))


class RestRoles(griffe.Extension):
    """Rewrites each object's docstring once it is loaded."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
