"""A small structured-output model for tests of the structured-output path (parsing, repair, grammars)."""

from __future__ import annotations

from pydantic import Field

from dialectic.core.config import ConfigModel


class ConfidenceOutput(ConfigModel):
    """A confidence from 0 to 100 and the reasoning behind it."""

    confidence: int = Field(ge=0, le=100)
    reasoning: str = ""
