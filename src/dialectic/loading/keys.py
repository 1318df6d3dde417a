"""Unknown keys in a configuration, each with the nearest known key.

The models ignore keys they do not know, which means a typo such as ``round`` for ``rounds``, or
``maxCostUSD`` for ``maxCostUsd``, would silently do nothing: a debate meant to be capped would
run without its cap. This walks the data beside the model and names every such key, with a
suggestion (:mod:`dialectic.core.spelling`): a close spelling at the same level, or the same key
in a nested section (``rounds`` at the top level belongs in ``debate``). Keys are camelCase; the
snake_case field names are accepted too.

What becomes of an unknown key is the loader's to decide (:mod:`dialectic.loading.config`): an
error by default, a warning when the user asks for leniency, and always an error under the
sections that hold a ceiling (:data:`GUARDED_SECTIONS`), where an ignored key removes a limit.
"""

from __future__ import annotations

import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError, ValidatorFunctionWrapHandler, model_validator
from pydantic.fields import FieldInfo
from pydantic_core import InitErrorDetails, PydanticCustomError

from dialectic.core.spelling import did_you_mean, nearest

GUARDED_SECTIONS = frozenset({"budget", "limits"})
"""Sections whose keys are ceilings: a misspelt key there (or a misspelling of the section) is always an error."""


@dataclass(frozen=True)
class UnknownKey:
    """A key the configuration's model does not know, where it is, and the known key it is most like."""

    path: str
    """As the file spells it, e.g. ``debate.budget.maxCostUSD`` or ``agents[1].temprature``."""
    suggestion: str | None
    """The known key's path, e.g. ``debate.budget.maxCostUsd``; ``None`` when none is close."""

    @property
    def guarded(self) -> bool:
        """Whether the key is in (or looks like) a section that holds a ceiling: never merely ignored."""
        return any(_sections(path) & GUARDED_SECTIONS for path in (self.path, self.suggestion or ""))

    def describe(self) -> str:
        """The one wording of this refusal: ``\\`debate.round\\`: unknown key — did you mean \\`debate.rounds\\`?``."""
        return f"`{self.path}`: unknown key{did_you_mean(self.suggestion)}"


def unknown_keys(model: type[BaseModel], data: Mapping[str, Any], where: str = "") -> list[UnknownKey]:
    """Every key of ``data`` (recursively) that ``model`` does not know, in the data's order."""
    fields = _spellings(model)
    found: list[UnknownKey] = []
    for key, value in data.items():
        info = fields.get(str(key))
        if info is None:
            found.append(UnknownKey(f"{where}{key}", _suggestion(model, str(key), where)))
            continue
        nested = _nested_model(info.annotation)
        if nested is None:
            continue
        if isinstance(value, Mapping) and get_origin(info.annotation) is dict:
            for name, item in value.items():
                if isinstance(item, Mapping):
                    found += unknown_keys(nested, item, f"{where}{key}.{name}.")
        elif isinstance(value, Mapping):
            found += unknown_keys(nested, value, f"{where}{key}.")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, Mapping):
                    found += unknown_keys(nested, item, f"{where}{key}[{index}].")
    return found


UNKNOWN_KEY_ERROR = "unknown_key"
"""The type of a validation error :class:`KnownKeysModel` gives for a key it does not know (``ctx``: the key it
is most like, as ``suggestion``, or ``None``)."""


class KnownKeysModel(BaseModel):
    """A request's shape (an API body, a tool's argument): a key it does not know is refused (``extra="forbid"``),
    in the words a configuration file's unknown key gets, with the nearest known key, instead of pydantic's
    "Extra inputs are not permitted"; :func:`unknown_key_message` says it."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="wrap")
    @classmethod
    def _unknown_keys_named(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(data)
        except ValidationError as exc:
            errors = exc.errors()
            if not any(error["type"] == "extra_forbidden" and len(error["loc"]) == 1 for error in errors):
                raise
            raise ValidationError.from_exception_data(exc.title, [_renamed(cls, error) for error in errors]) from None


def _renamed(model: type[BaseModel], error: Any) -> InitErrorDetails:
    """``error`` as :func:`ValidationError.from_exception_data` takes it back; an extra key of ``model`` itself
    (not of a model inside it, whose own validator named it) becomes an :data:`UNKNOWN_KEY_ERROR`."""
    if error["type"] == "extra_forbidden" and len(error["loc"]) == 1:
        suggestion = nearest(str(error["loc"][0]), camel_names(model))
        return _unknown_error(error, suggestion)
    if error["type"] == UNKNOWN_KEY_ERROR:
        return _unknown_error(error, (error.get("ctx") or {}).get("suggestion"))
    details: InitErrorDetails = error
    return details


def _unknown_error(error: Any, suggestion: str | None) -> InitErrorDetails:
    message = f"unknown key{did_you_mean(suggestion)}"
    kind = PydanticCustomError(UNKNOWN_KEY_ERROR, "{message}", {"message": message, "suggestion": suggestion})
    return InitErrorDetails(type=kind, loc=error["loc"], input=error["input"])


def unknown_key_message(path: str, loc: Sequence[int | str], ctx: Mapping[str, Any] | None) -> str:
    """An :data:`UNKNOWN_KEY_ERROR` at ``path`` (its ``loc`` spelled as a path) in the one wording of that refusal."""
    suggestion = (ctx or {}).get("suggestion")
    parent = path[: len(path) - len(str(loc[-1]))] if loc else ""
    return UnknownKey(path, f"{parent}{suggestion}" if suggestion else None).describe()


def camel_names(model: type[BaseModel]) -> list[str]:
    """The keys of ``model`` as a file spells them."""
    return [info.alias or name for name, info in model.model_fields.items()]


def _sections(path: str) -> set[str]:
    return {part.split("[")[0] for part in path.split(".")}


def _spellings(model: type[BaseModel]) -> dict[str, FieldInfo]:
    accepted: dict[str, FieldInfo] = {}
    for name, info in model.model_fields.items():
        accepted[name] = info
        accepted[info.alias or name] = info
    return accepted


def _suggestion(model: type[BaseModel], key: str, where: str) -> str | None:
    close = nearest(key, camel_names(model))
    if close is not None:
        return f"{where}{close}"
    elsewhere = _in_section(model, key)
    return f"{where}{elsewhere}" if elsewhere is not None else None


def _in_section(model: type[BaseModel], key: str) -> str | None:
    """``section.key`` when a nested section (not a list) of ``model`` knows ``key`` exactly."""
    for name, info in model.model_fields.items():
        if get_origin(info.annotation) in (list, dict):
            continue
        nested = _nested_model(info.annotation)
        if nested is not None and key in _spellings(nested):
            section = info.alias or name
            nested_key = nested.model_fields[key].alias if key in nested.model_fields else key
            return f"{section}.{nested_key or key}"
    return None


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    """The model inside ``Model``, ``Model | None``, ``list[Model]`` or ``dict[str, Model]``, if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = get_origin(annotation)
    if origin in (list, dict, Union, types.UnionType):
        for arg in get_args(annotation):
            found = _nested_model(arg)
            if found is not None:
                return found
    return None
