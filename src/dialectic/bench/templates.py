"""The bench's prompt templates (``prompts/*.md.j2``), rendered with Jinja2."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined


@lru_cache(maxsize=1)
def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("dialectic.bench", "prompts"),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(name: str, **variables: Any) -> str:
    """Render ``prompts/<name>.md.j2``; a variable the template uses but was not given is an error."""
    return _environment().get_template(f"{name}.md.j2").render(**variables).strip()
