"""The structured replies participants are asked for (their JSON schemas are sent to the model)."""

from __future__ import annotations

from pydantic import Field

from dialectic.config import ConfigModel


class Question(ConfigModel):
    text: str = Field(min_length=1)


class QuestionList(ConfigModel):
    """A clarifier's reply: the questions it wants answered (possibly none)."""

    questions: list[Question] = Field(default_factory=list)


class SynthesisOutput(ConfigModel):
    """The judge's final solution."""

    description: str = Field(min_length=1, description="The solution, in Markdown.")
    tradeoffs: list[str] = Field(default_factory=list)
    recommendations: list[str] = Field(default_factory=list)
    unfulfilled_major_requirements: list[str] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)
    confidence: int = Field(ge=0, le=100)


class ConfidenceOutput(ConfigModel):
    """The judge's view, after a round, of whether the debate has converged."""

    confidence: int = Field(ge=0, le=100)
    reasoning: str = ""
