"""Ending a reply that the token limit cut mid-sentence at its last complete part. Pure functions.

A cut-off reply usually stops inside a word ("…checks the requests in the las"). Passed on as
it is, the dangling end reads as garbage to the next agent and to the user. When continuing
the reply has not finished it, :func:`trim_to_complete` keeps what was said completely: up to
the end of the last full sentence, or of the last list item followed by another item, a blank
line or a heading. The caller still marks the reply ``truncated``: content was lost.
"""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"""[.!?][)\]"'*_`]*(?=\s|$)""")
_LIST_NUMBER = re.compile(r"(?:^|\n)[ \t]*\d+[.)]$")
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|etc|vs|cf)\.$", re.IGNORECASE)
_BLOCK_START = re.compile(r"[ \t]*(?:[-*+][ \t]|\d+[.)][ \t]|#|$)")
_DANGLING = re.compile(r"[ \t]*(?:#.*|[-*+]|\d+[.)]|.*:[*_]*)[ \t]*$")
_FENCE = "```"


def trim_to_complete(text: str) -> str:
    """``text`` up to its last complete sentence or list item; ``text`` itself when none is found.

    A text already ending a sentence is returned without trailing whitespace. Headings and
    labels left dangling at the end ("### Risks", "**Trade-offs:**") are dropped, and so is an
    unclosed code fence.
    """
    body = text.rstrip()
    if not body or _ends_sentence(body):
        return body
    cut = max(_last_sentence_end(body), _last_item_end(body))
    if cut <= 0:
        return body
    kept = _drop_dangling_lines(_close_fences(body[:cut].rstrip()))
    return kept or body


def _ends_sentence(text: str) -> bool:
    match = _SENTENCE_END.search(text, max(0, len(text) - 8))
    return match is not None and match.end() == len(text) and not _is_false_end(text[: match.start() + 1])


def _is_false_end(prefix: str) -> bool:
    """A period that ends a list number ("2.") or an abbreviation ("e.g.")."""
    return bool(_LIST_NUMBER.search(prefix) or _ABBREVIATION.search(prefix))


def _last_sentence_end(text: str) -> int:
    best = 0
    for match in _SENTENCE_END.finditer(text):
        if not _is_false_end(text[: match.start() + 1]):
            best = match.end()
    return best


def _last_item_end(text: str) -> int:
    """End of the last line that is followed by a new list item, a blank line or a heading."""
    lines = text.split("\n")
    offset, best = 0, 0
    for line, following in zip(lines, lines[1:], strict=False):
        offset += len(line) + 1
        if line.strip() and _BLOCK_START.match(following):
            best = offset - 1
    return best


def _close_fences(text: str) -> str:
    """Drop an unclosed code block (an odd number of fences) with everything after its opening."""
    if text.count(_FENCE) % 2 == 0:
        return text
    return text[: text.rfind(_FENCE)].rstrip()


def _drop_dangling_lines(text: str) -> str:
    """Drop trailing headings, bare list markers and labels ending in a colon: they announce what was cut."""
    lines = text.rstrip().split("\n")
    while lines and (not lines[-1].strip() or _DANGLING.fullmatch(lines[-1])):
        lines.pop()
    return "\n".join(lines).rstrip()
