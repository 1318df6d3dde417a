"""A debate as exported JSON: what ``dialectic export``, ``-o FILE.json`` and the web app's download write."""

from __future__ import annotations

import json

from dialectic.core.domain import DebateState
from dialectic.core.ledger import entries_of, ledger_totals


def export_json(state: DebateState) -> str:
    """The debate in the seed's JSON shape (camelCase keys), pretty-printed, with its ``ledger`` and ``totals``."""
    data = state.to_json_dict()
    entries = entries_of(state)
    data["ledger"] = [entry.to_json_dict() for entry in entries]
    data["totals"] = ledger_totals(entries).to_json_dict()
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
