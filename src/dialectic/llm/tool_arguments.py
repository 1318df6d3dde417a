"""A tool call's arguments as the model sent them (JSON text) turned into the object a tool receives."""

from __future__ import annotations

import json

from dialectic.core.json_values import JsonObject
from dialectic.llm.json_text import loads_model_json


def parse_arguments(text: str) -> JsonObject:
    """The JSON object in ``text``; ``{}`` when it does not parse or is not an object.

    An empty text means no arguments. The tool, seeing ``{}`` where it needed arguments, answers
    with an error the model reads (the raw text stays in ``ToolCall.arguments_text``).
    """
    if not text.strip():
        return {}
    try:
        value = loads_model_json(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def arguments_json(arguments: JsonObject, text: str = "") -> str:
    """The JSON text to send back for a call's arguments: the model's own text when it had one."""
    return text if text.strip() else json.dumps(arguments, ensure_ascii=False)
