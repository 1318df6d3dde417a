"""The two prompts the LLM layer writes itself: continuing a cut-off reply and repairing invalid JSON.

They live here, not with the agents' prompts, so that ``dialectic.llm`` depends on nothing
above it. Rendered with ``StrictUndefined``: a missing variable is an error, not a blank.
"""

from __future__ import annotations

from functools import lru_cache

from jinja2 import Environment, PackageLoader, StrictUndefined

CONTINUE_PROMPT = "continue.md.j2"
REPAIR_PROMPT = "repair.md.j2"


@lru_cache(maxsize=1)
def _environment() -> Environment:
    return Environment(
        loader=PackageLoader(__name__, "."),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(template_name: str, **variables: object) -> str:
    """Render one of this package's templates, e.g. ``render(REPAIR_PROMPT, error=...)``."""
    return _environment().get_template(template_name).render(**variables)
