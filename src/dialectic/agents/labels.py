"""Neutral labels: how the judge and the voters see participants without their names.

A judge that reads names, roles or a fixed order can favour one of them; shown as
``Participant A``, ``Participant B``… in an order shuffled from a seed (the debate's id and
the step), the same labels come back on resume. Replies name labels; :func:`resolve` maps
what a model wrote back to an id, forgiving case, the word in front and stray punctuation.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Mapping, Sequence

_LETTERS = string.ascii_uppercase


def neutral_labels(ids: Sequence[str], *, word: str, seed: str, shuffle: bool = True) -> dict[str, str]:
    """Id → ``f"{word} {letter}"``, the letters dealt in a seeded shuffled order (or the given one)."""
    order = list(ids)
    if shuffle:
        random.Random(seed).shuffle(order)
    if len(order) > len(_LETTERS):
        raise ValueError(f"at most {len(_LETTERS)} participants can be labelled")
    return {agent_id: f"{word} {_LETTERS[i]}" for i, agent_id in enumerate(order)}


def numbered_labels(ids: Sequence[str], *, word: str) -> dict[str, str]:
    """Id → ``f"{word} 1"``, ``f"{word} 2"``… in the given order."""
    return {agent_id: f"{word} {i}" for i, agent_id in enumerate(ids, start=1)}


def resolve(written: str, labels: Mapping[str, str]) -> str | None:
    """The id whose label ``written`` names (``"Participant B"``, ``"b"``, ``"B."``), or None."""
    wanted = _key(written)
    if not wanted:
        return None
    for agent_id, label in labels.items():
        if wanted in (_key(label), _key(label.split()[-1])):
            return agent_id
    return None


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9 ]", "", text.lower()).strip()
