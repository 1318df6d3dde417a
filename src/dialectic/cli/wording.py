"""Small helpers for the words of progress lines and notices."""

from __future__ import annotations


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 agent``, ``3 agents``, ``0 agents``; ``nouns`` for irregular plurals."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"
