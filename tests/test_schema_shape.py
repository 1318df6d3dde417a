"""The schema a structured call sends: every field required, labels as choices, lists of a set length."""

from __future__ import annotations

from typing import Any

import pytest

from dialectic.agents.outputs import AssessmentOutput, VerdictOutput, VoteOutput
from dialectic.llm.schema_shape import SchemaShape, shaped_schema


def objects(node: Any) -> list[dict[str, Any]]:
    """Every object schema with properties, anywhere in ``node``."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            found.append(node)
        for value in node.values():
            found += objects(value)
    elif isinstance(node, list):
        for value in node:
            found += objects(value)
    return found


@pytest.mark.parametrize("output_type", [VerdictOutput, AssessmentOutput, VoteOutput])
def test_every_field_of_every_object_is_required(output_type: Any) -> None:
    schema = shaped_schema(output_type)
    assert objects(schema)
    for node in objects(schema):
        assert node["required"] == list(node["properties"])
    # the model itself stays lenient: a reply that leaves out an optional field still parses
    assert "required" not in output_type.model_json_schema(by_alias=True) or set(
        output_type.model_json_schema(by_alias=True)["required"]
    ) < set(schema["required"])


def test_choices_and_counts_reach_fields_inside_lists_and_definitions() -> None:
    labels = ["Participant A", "Participant B", "Participant C"]
    shape = SchemaShape(choices={"winner": [*labels, "none"], "keyPoints.participant": labels}, counts={"keyPoints": 3})
    schema = shaped_schema(VerdictOutput, shape)
    assert schema["properties"]["winner"]["enum"] == [*labels, "none"]
    assert "default" not in schema["properties"]["winner"]
    key_points = schema["properties"]["keyPoints"]
    assert (key_points["minItems"], key_points["maxItems"]) == (3, 3)
    definition = key_points["items"]["$ref"].rsplit("/", 1)[-1]
    assert schema["$defs"][definition]["properties"]["participant"]["enum"] == labels


def test_shaping_leaves_the_model_schema_alone_and_repeats_no_choice() -> None:
    before = AssessmentOutput.model_json_schema(by_alias=True)
    schema = shaped_schema(AssessmentOutput, SchemaShape(choices={"participants.participant": ["A", "B", "A"]}))
    assert AssessmentOutput.model_json_schema(by_alias=True) == before
    definition = schema["properties"]["participants"]["items"]["$ref"].rsplit("/", 1)[-1]
    assert schema["$defs"][definition]["properties"]["participant"]["enum"] == ["A", "B"]


def test_a_path_that_names_no_field_or_a_count_on_a_non_list_is_an_error() -> None:
    with pytest.raises(KeyError, match="keyPoints.speaker"):
        shaped_schema(VerdictOutput, SchemaShape(choices={"keyPoints.speaker": ["A"]}))
    with pytest.raises(ValueError, match="winner is not a list"):
        shaped_schema(VerdictOutput, SchemaShape(counts={"winner": 2}))
