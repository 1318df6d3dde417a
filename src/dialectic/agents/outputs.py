"""The structured replies participants are asked for (their JSON schemas are sent to the model)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from dialectic.core.config import ConfigModel


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


class RubricOutput(ConfigModel):
    logical_consistency: int = Field(ge=0, le=10)
    evidence: int = Field(ge=0, le=10)
    engagement: int = Field(ge=0, le=10)
    novelty: int = Field(ge=0, le=10)
    persuasiveness: int = Field(ge=0, le=10)
    relevance: int = Field(ge=0, le=10)


class ParticipantScoreOutput(ConfigModel):
    participant: str = Field(description="The participant's label, e.g. 'Participant A'.")
    scores: RubricOutput
    strengths: list[str] = Field(default_factory=list)
    weaknesses: list[str] = Field(default_factory=list)


class FlagsOutput(ConfigModel):
    repetitive: bool = False
    drifting: bool = False
    diminishing_returns: bool = False
    convergence_reached: bool = False


class AssessmentOutput(ConfigModel):
    """The judge's assessment of one round (seed ``004_…`` §2.2, §4.1)."""

    participants: list[ParticipantScoreOutput] = Field(default_factory=list)
    flags: FlagsOutput = Field(default_factory=FlagsOutput)
    quality_trend: Literal["improving", "stable", "declining"] = "stable"
    should_continue: bool = True
    reason: str = ""


class KeyPointsOutput(ConfigModel):
    participant: str
    main_arguments: list[str] = Field(default_factory=list)


class VerdictOutput(ConfigModel):
    """The judge's final verdict (seed ``004_…`` §4.4)."""

    summary: str = Field(min_length=1)
    key_points: list[KeyPointsOutput] = Field(default_factory=list)
    areas_of_agreement: list[str] = Field(default_factory=list)
    areas_of_disagreement: list[str] = Field(default_factory=list)
    winner: str = Field(default="none", description="The winning participant's label, or 'none'.")
    winner_reasoning: str = ""
    quality_score: int = Field(ge=0, le=100)
    insights: list[str] = Field(default_factory=list)


class PersonaOutput(ConfigModel):
    participant: str = Field(description="The participant's label, e.g. 'Agent 1'.")
    position: str = Field(min_length=1)
    persona: str = Field(min_length=1)


class PersonaAssignmentOutput(ConfigModel):
    """The judge's choice of positions and personas for the participants, before round 1."""

    assignments: list[PersonaOutput] = Field(default_factory=list)


class VoteOutput(ConfigModel):
    """A participant's vote on the final proposals."""

    choice: str = Field(description="The label of the chosen proposal, e.g. 'Proposal B'.")
    confidence: int = Field(ge=0, le=100)
    reason: str = ""
