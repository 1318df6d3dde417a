"""A structured reply's JSON schema, narrowed for one call: every field asked for, labels as choices.

An output model keeps defaults for its optional fields so that a reply which leaves one out still
parses. Sent as is, its schema says those fields may be left out, and a model constrained by it
(the embedded model turns the schema into a grammar) takes that way out: on Qwen2.5-Coder-1.5B the
judge's verdicts came back with a summary and a quality score only, and its round assessments with
no participant scored. A shaped schema therefore requires every field; validation stays lenient.
The calls whose optional fields are the point (assessments, verdicts, votes, personas) send one;
the others (a synthesis, whose lists are extras) send the model's schema as it is.

For one call the schema can also say which strings a field may hold (the participants' labels, so
that a winner is one of them and not a role name the judge made up) and how many items a list has
(one scored participant per participant). Fields are named by a dotted path of their JSON names
(``keyPoints.participant``: the ``participant`` of each item of ``keyPoints``).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel

from dialectic.core.json_values import JsonObject, JsonValue


@dataclass(frozen=True)
class SchemaShape:
    """What one call narrows in its output model's schema."""

    choices: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """Dotted path of a string field → the only values it may take."""
    counts: Mapping[str, int] = field(default_factory=dict)
    """Dotted path of a list field → the exact number of items it must hold."""


@functools.lru_cache(maxsize=64)
def _generated(output_type: type[BaseModel]) -> JsonObject:
    return output_type.model_json_schema(by_alias=True)


def model_schema(output_type: type[BaseModel]) -> JsonObject:
    """``output_type``'s JSON schema (by alias), a copy of the one generated once per model: pydantic's
    generator is a reference cycle of its own, left for the garbage collector's rare full passes."""
    return copy.deepcopy(_generated(output_type))


def shaped_schema(output_type: type[BaseModel], shape: SchemaShape | None = None) -> JsonObject:
    """``output_type``'s JSON schema (by alias) with every field required and ``shape`` applied."""
    schema = model_schema(output_type)
    _require_every_field(schema)
    if shape is not None:
        for path, values in shape.choices.items():
            node = _field(schema, path)
            node["enum"] = list(dict.fromkeys(values))
            node.pop("default", None)
        for path, count in shape.counts.items():
            node = _field(schema, path)
            if node.get("type") != "array":
                raise ValueError(f"{path} is not a list in {output_type.__name__}")
            node["minItems"] = node["maxItems"] = count
    return schema


def _require_every_field(node: JsonValue) -> None:
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            node["required"] = list(node["properties"])
        for value in node.values():
            _require_every_field(value)
    elif isinstance(node, list):
        for value in node:
            _require_every_field(value)


def _field(root: JsonObject, path: str) -> JsonObject:
    """The schema node of the field at ``path``; a list field's items are stepped into on the way."""
    node: JsonObject = root
    names = path.split(".")
    for depth, name in enumerate(names):
        node = _resolved(root, node)
        if node.get("type") == "array" and depth > 0:
            node = _resolved(root, node["items"])
        properties = node.get("properties", {})
        if name not in properties:
            raise KeyError(f"no field {'.'.join(names[: depth + 1])} in the schema")
        node = properties[name]
    return _resolved(root, node)


def _resolved(root: JsonObject, node: JsonObject) -> JsonObject:
    """Follow ``$ref`` (and a one-element ``allOf`` around one) to the definition it names."""
    while True:
        if "$ref" in node:
            node = root["$defs"][node["$ref"].rsplit("/", 1)[-1]]
        elif len(node.get("allOf", ())) == 1 and "properties" not in node:
            node = node["allOf"][0]
        else:
            return node
