"""Unknown keys in a configuration file, each with the nearest known key.

The models ignore keys they do not know (so a file written for a newer version still loads),
which means a typo such as ``round`` for ``rounds`` would silently do nothing. This walks the
file's data beside the model and names every such key, with a suggestion: a close spelling
at the same level (difflib), or the same key in a nested section (``rounds`` at the top level
belongs in ``debate``). Keys are camelCase; the snake_case field names are accepted too.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Mapping
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo


def unknown_key_warnings(model: type[BaseModel], data: Mapping[str, Any], where: str = "") -> list[str]:
    """One warning per key of ``data`` (recursively) that ``model`` does not know."""
    fields = _spellings(model)
    warnings: list[str] = []
    for key, value in data.items():
        info = fields.get(str(key))
        if info is None:
            warnings.append(_unknown(model, str(key), where))
            continue
        nested = _nested_model(info.annotation)
        if nested is None:
            continue
        if isinstance(value, Mapping):
            warnings += unknown_key_warnings(nested, value, f"{where}{key}.")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, Mapping):
                    warnings += unknown_key_warnings(nested, item, f"{where}{key}[{index}].")
    return warnings


def camel_names(model: type[BaseModel]) -> list[str]:
    """The keys of ``model`` as a file spells them."""
    return [info.alias or name for name, info in model.model_fields.items()]


def _spellings(model: type[BaseModel]) -> dict[str, FieldInfo]:
    accepted: dict[str, FieldInfo] = {}
    for name, info in model.model_fields.items():
        accepted[name] = info
        accepted[info.alias or name] = info
    return accepted


def _unknown(model: type[BaseModel], key: str, where: str) -> str:
    text = f"`{where}{key}`: unknown key"
    suggestion = _nearest(model, key)
    if suggestion is None:
        suggestion = _in_section(model, key)
        return f"{text} — did you mean `{where}{suggestion}`?" if suggestion else f"{text} (ignored)"
    return f"{text} — did you mean `{where}{suggestion}`?"


def _nearest(model: type[BaseModel], key: str) -> str | None:
    """The known key spelled most like ``key`` (case-insensitively, snake or camel), if close enough."""
    candidates: dict[str, str] = {}
    for name, info in model.model_fields.items():
        camel = info.alias or name
        candidates[camel.lower()] = camel
        candidates[name.lower()] = camel
    found = difflib.get_close_matches(key.lower(), list(candidates), n=1, cutoff=0.6)
    return candidates[found[0]] if found else None


def _in_section(model: type[BaseModel], key: str) -> str | None:
    """``section.key`` when a nested section (not a list) of ``model`` knows ``key`` exactly."""
    for name, info in model.model_fields.items():
        if get_origin(info.annotation) is list:
            continue
        nested = _nested_model(info.annotation)
        if nested is not None and key in _spellings(nested):
            section = info.alias or name
            nested_key = nested.model_fields[key].alias if key in nested.model_fields else key
            return f"{section}.{nested_key or key}"
    return None


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    """The model inside ``Model``, ``Model | None`` or ``list[Model]``, if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = get_origin(annotation)
    if origin in (list, Union, types.UnionType):
        for arg in get_args(annotation):
            found = _nested_model(arg)
            if found is not None:
                return found
    return None
