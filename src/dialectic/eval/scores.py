"""The evaluation criteria, the structured reply an evaluator must give, and the spread statistics.

Every criterion is scored from 1 to 10 with a short reason. The reply model is what
:meth:`~dialectic.llm.client.LLMClient.complete_structured` validates (and repairs once), so
a score outside 1–10 or a missing criterion is a validation error, not a number we average.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

MIN_SCORE = 1
MAX_SCORE = 10


@dataclass(frozen=True)
class Criterion:
    key: str
    """The criterion's name in the evaluator's JSON reply and in every output format."""
    title: str
    description: str


CRITERIA: tuple[Criterion, ...] = (
    Criterion(
        "functionalCompleteness",
        "Functional completeness",
        "Does the solution cover every capability the problem asks for, end to end?",
    ),
    Criterion(
        "performanceScalability",
        "Performance & scalability",
        "Will it meet the load, latency and growth the problem implies; are bottlenecks addressed?",
    ),
    Criterion(
        "security",
        "Security",
        "Authentication, authorization, data protection, threat handling and secure defaults.",
    ),
    Criterion(
        "maintainabilityEvolvability",
        "Maintainability & evolvability",
        "Clear structure, modest complexity, and room to change without rewrites.",
    ),
    Criterion(
        "regulatoryCompliance",
        "Regulatory compliance",
        "Privacy, audit, retention and any regulation the domain implies.",
    ),
    Criterion(
        "testability",
        "Testability",
        "Can the parts be tested in isolation and the whole verified; is a test strategy given?",
    ),
    Criterion(
        "requirementsFulfillment",
        "Requirements fulfilment",
        "How well the stated requirements and the clarified answers are met, unfulfilled ones counted against it.",
    ),
    Criterion(
        "overall",
        "Overall",
        "Your overall judgement of the solution as a response to this problem.",
    ),
)
CRITERION_KEYS: tuple[str, ...] = tuple(c.key for c in CRITERIA)


class _Reply(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


REASON_MAX_CHARS = 300
"""The longest reason the schema asks an evaluator for (two sentences fit)."""


class CriterionScore(_Reply):
    score: float = Field(
        ge=MIN_SCORE,
        le=MAX_SCORE,
        description="1 (very poor) to 10 (excellent).",
        # An enum, unlike minimum/maximum, is enforced by grammar-constrained decoders
        # (llama.cpp), so small local models cannot answer on a 0-100 scale by mistake.
        json_schema_extra={"enum": list(range(int(MIN_SCORE), int(MAX_SCORE) + 1))},
    )
    reason: str = Field(
        description="One or two sentences justifying the score.",
        # Only in the schema sent (not enforced on reading): a grammar-constrained decoder (llama.cpp)
        # ends the string there. A 0.5B evaluator otherwise repeated one sentence inside a reason until
        # its reply hit the token limit, and its JSON never closed.
        json_schema_extra={"maxLength": REASON_MAX_CHARS},
    )


class EvaluationOutput(_Reply):
    """A score and a short reason for every evaluation criterion."""

    functional_completeness: CriterionScore
    performance_scalability: CriterionScore
    security: CriterionScore
    maintainability_evolvability: CriterionScore
    regulatory_compliance: CriterionScore
    testability: CriterionScore
    requirements_fulfillment: CriterionScore
    overall: CriterionScore

    def scores(self) -> dict[str, CriterionScore]:
        """The scores keyed by criterion key, in the order of :data:`CRITERIA`."""
        dumped = {to_camel(name): getattr(self, name) for name in type(self).model_fields}
        return {key: dumped[key] for key in CRITERION_KEYS}


@dataclass(frozen=True)
class Spread:
    """The mean of some scores and how far they spread; ``sd`` is the sample standard deviation."""

    mean: float
    sd: float
    min: float
    max: float
    n: int

    def to_json_dict(self, digits: int = 2) -> dict[str, float | int]:
        return {
            "mean": round(self.mean, digits),
            "sd": round(self.sd, digits),
            "min": self.min,
            "max": self.max,
            "n": self.n,
        }


def spread(values: Sequence[float]) -> Spread:
    """Mean, sample standard deviation (``n - 1``; 0 for a single value), min, max and count."""
    if not values:
        raise ValueError("no scores to summarise")
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return Spread(statistics.fmean(values), sd, min(values), max(values), len(values))
