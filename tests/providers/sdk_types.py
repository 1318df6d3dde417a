"""A strict check of a JSON value against an SDK's request ``TypedDict`` (the tests' oracle of the wire).

pydantic's ``TypeAdapter`` over the SDKs' TypedDicts ignores unknown keys and validates iterables lazily,
so a misspelt field or a wrong item would pass. :func:`conforms` walks the type itself: every key of a
TypedDict must be one it declares, every required key present, every union matched by one of its arms,
every literal one of its values, every list item checked.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from typing_extensions import is_typeddict

_SEQUENCES = (list, tuple, collections.abc.Iterable, collections.abc.Sequence)


class Mismatch(AssertionError):
    """The value does not have the type's shape; the message names where."""


def conforms(value: Any, kind: Any, path: str = "body") -> None:
    """Raise :class:`Mismatch` naming the first place where ``value`` does not have the shape ``kind`` declares."""
    origin, args = get_origin(kind), get_args(kind)
    if kind in (Any, object):
        return
    if origin is typing.Annotated:
        conforms(value, args[0], path)
    elif is_typeddict(kind):
        _typed_dict(value, kind, path)
    elif origin in (Union, types.UnionType):
        _union(value, args, path)
    elif origin is Literal:
        if value not in args:
            raise Mismatch(f"{path}: {value!r} is not one of {args}")
    elif kind is type(None):
        if value is not None:
            raise Mismatch(f"{path}: {value!r} is not null")
    elif kind is bool or kind is str:
        if not isinstance(value, kind):
            raise Mismatch(f"{path}: {value!r} is not a {kind.__name__}")
    elif kind is int or kind is float:
        if isinstance(value, bool) or not isinstance(value, int if kind is int else (int, float)):
            raise Mismatch(f"{path}: {value!r} is not a {kind.__name__}")
    elif origin in (dict, collections.abc.Mapping) or kind is dict:
        if not isinstance(value, dict):
            raise Mismatch(f"{path}: {value!r} is not an object")
        if len(args) == 2:
            for key, item in value.items():
                conforms(item, args[1], f"{path}.{key}")
    elif origin in _SEQUENCES or (origin is not None and getattr(origin, "__name__", "") == "SequenceNotStr"):
        if not isinstance(value, list):
            raise Mismatch(f"{path}: {value!r} is not a list")
        for index, item in enumerate(value):
            conforms(item, args[0] if args else Any, f"{path}[{index}]")
    else:
        raise Mismatch(f"{path}: no rule for the type {kind!r}")


def _typed_dict(value: Any, kind: Any, path: str) -> None:
    if not isinstance(value, dict):
        raise Mismatch(f"{path}: {value!r} is not an object ({kind.__name__})")
    hints = get_type_hints(kind)
    unknown = sorted(set(value) - set(hints))
    if unknown:
        raise Mismatch(f"{path}: {kind.__name__} has no field {unknown}")
    missing = sorted(_required(kind) - set(value))
    if missing:
        raise Mismatch(f"{path}: {kind.__name__} requires {missing}")
    for key, item in value.items():
        conforms(item, hints[key], f"{path}.{key}")


def _required(kind: Any) -> set[str]:
    """The keys a TypedDict requires, read from its ``Required``/``NotRequired`` marks (the SDKs' modules use
    postponed annotations, under which ``__required_keys__`` misses the marks on Python 3.11)."""
    marked = get_type_hints(kind, include_extras=True)
    names = {"Required", "NotRequired"}

    def mark(hint: Any) -> str | None:
        origin = get_origin(hint)
        if origin is typing.Annotated:
            return mark(get_args(hint)[0])
        name = getattr(origin, "_name", None) or getattr(origin, "__name__", None)
        return name if name in names else None

    marks = {key: mark(hint) for key, hint in marked.items()}
    if any(found == "Required" for found in marks.values()):  # the SDKs mark every required key
        return {key for key, found in marks.items() if found == "Required"}
    return set(kind.__required_keys__)


def _union(value: Any, arms: tuple[Any, ...], path: str) -> None:
    failures: list[str] = []
    for arm in arms:
        try:
            conforms(value, arm, path)
            return
        except Mismatch as error:
            failures.append(str(error))
    raise Mismatch(f"{path}: matches no arm of the union:\n  " + "\n  ".join(failures))
