"""A debate's title: its problem's first line, without the Markdown marks of a problem read from a file.

A problem written in Markdown starts ``# Rate limiter for an API``; the debates list, the page's
heading and the report's title show ``Rate limiter for an API``. The marks taken off are those of a
line's start (a heading's ``#``, a quote's ``>``, a list item's bullet or number) and the inline ones
that only style the words (emphasis, code spans, links, which keep their text). The page's script
follows the same rules (``titleLine`` in ``web/static/app.js``; a test holds the two together).
"""

from __future__ import annotations

import re

_LINE_START = re.compile(r"^(?:>\s*)*(?:#{1,6}(?:\s+|$)|[-*+]\s+|\d{1,9}[.)]\s+)?")
_CLOSING_HASHES = re.compile(r"\s+#+\s*$")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1|(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])")
_CODE = re.compile(r"`+([^`]+)`+")


def without_marks(line: str) -> str:
    """``line`` without Markdown's block marks at its start and its inline marks (their text kept)."""
    text = _LINE_START.sub("", line.strip(), count=1)
    if line.lstrip(" >").startswith("#"):
        text = _CLOSING_HASHES.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _CODE.sub(r"\1", text)
    for _nested in range(2):  # ***both*** is emphasis inside strong emphasis
        text = _EMPHASIS.sub(lambda m: m.group(2) if m.group(2) is not None else m.group(3), text)
    return text.strip()


def title_line(text: str) -> str:
    """The first line of ``text`` that has words once its marks are off (``""`` for none)."""
    for line in text.splitlines():
        title = without_marks(line)
        if title:
            return title
    return ""
