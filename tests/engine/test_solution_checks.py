"""A restated problem is never recorded as a design debate's solution, and a judge's stated confidence is shown
only for a model whose stated confidences were measured and calibrated."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from dialectic.core import events as ev
from dialectic.core import stated_confidence
from dialectic.core.domain import Solution
from dialectic.core.stated_confidence import Measured, withheld_reason
from dialectic.engine.solution_checks import NO_SOLUTION, description_only
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script, ScriptedReply, default_reply, example_for_schema
from dialectic.testing.harness import Harness, make_config

PROBLEM = "Design a cache"
REAL = (
    "Use a write-through LRU cache in front of the database, keyed by request path, with a 5 minute TTL, "
    "invalidated on writes through a message bus, sized to 2 GB per node and sharded by consistent hashing."
)


def responder(judge_says: str, agents_say: dict[str, str]) -> Callable[[CompletionRequest], Script]:
    def respond(request: CompletionRequest) -> Script:
        if request.tag.startswith("synthesis"):
            assert request.json_schema is not None
            value = {**example_for_schema(request.json_schema.schema, name=request.json_schema.name)}
            value["description"], value["confidence"] = judge_says, 95
            return ScriptedReply(text=json.dumps(value), structured=value)
        if request.tag.startswith(("proposal", "refinement")):
            return ScriptedReply(text=agents_say.get(request.tag.split(":")[-1], PROBLEM))
        return default_reply(request)

    return respond


def run(harness: Callable[..., Harness], judge_says: str, agents_say: dict[str, str]) -> tuple[Solution, list[str]]:
    h = harness(responder(judge_says, agents_say))
    state = h.start(make_config(agents=2, rounds=1, format="critique-refine"), problem=PROBLEM)
    assert state.final_solution is not None
    return state.final_solution, [e.message for e in h.of(ev.Warning)]


def test_a_restated_problem_gives_way_to_the_position_that_says_most(harness: Callable[..., Harness]) -> None:
    solution, warnings = run(harness, "Design a cache.", {"architect": REAL})
    assert REAL in solution.description and "restated the problem" in solution.description
    assert solution.description.strip() != PROBLEM and solution.confidence_withheld is not None
    assert any("recorded as the solution instead" in w for w in warnings)


def test_when_everyone_restates_the_problem_no_solution_is_presented(harness: Callable[..., Harness]) -> None:
    solution, warnings = run(harness, "Design a cache", {})
    assert solution.description == NO_SOLUTION and not solution.structured
    assert "not shown" in solution.confidence_text()


def test_a_real_solution_stands_with_its_confidence_withheld_when_unmeasured(harness: Callable[..., Harness]) -> None:
    solution, _ = run(harness, REAL, {})
    assert solution.description == REAL
    assert solution.confidence == 95 and solution.confidence_withheld == "the judge's model has no measured calibration"
    assert solution.confidence_text().startswith("not shown")


def test_a_calibrated_model_has_its_confidence_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    table = {
        "good": Measured("good", brier=0.12, base_rate=0.21, forecasts=200, measured="test"),
        "loud": Measured("loud", brier=0.41, base_rate=0.21, forecasts=200, measured="test"),
        "few": Measured("few", brier=0.05, base_rate=0.21, forecasts=10, measured="test"),
    }
    monkeypatch.setattr(stated_confidence, "measurements", lambda: table)
    assert withheld_reason("good") is None
    assert "Brier 0.41 against 0.21" in (withheld_reason("loud") or "")
    assert "only 10" in (withheld_reason("few") or "")
    assert "no measured calibration" in (withheld_reason("unknown") or "")
    assert Solution(description="x", confidence=80).confidence_text() == "80/100"


def test_the_shipped_table_reads() -> None:
    stated_confidence.measurements.cache_clear()
    assert all(isinstance(m, Measured) for m in stated_confidence.measurements().values())


def test_a_replaced_fallback_synthesis_still_says_the_judge_failed() -> None:
    """The page and the report name a failed judge from ``judge_failure``: replacing the text keeps it."""
    from types import SimpleNamespace

    from dialectic.core.domain import DebateState
    from dialectic.engine.solution_checks import unrestated

    state = DebateState.model_validate({"id": "d", "problem": PROBLEM, "status": "running", "config": {}})
    failed = Solution(description="Design a cache.", synthesized_by="agent-a", judge_failure="model-broken: 500")
    solution = unrestated(SimpleNamespace(state=state), failed, "", lambda _: None)  # type: ignore[arg-type]
    assert solution.description == NO_SOLUTION and solution.judge_failure == "model-broken: 500"


PACKED = """### Final Solution

#### Description
1. **Token bucket per API key**: refilled lazily on each request.
2. **Redis**: holds the buckets, one key per client.

#### Tradeoffs
1. **Memory**: one key per client.

#### Open Questions
1. How large may a burst be?

#### Confidence
85"""


def test_sections_a_judge_packed_into_its_description_are_not_shown_as_the_solution(
    harness: Callable[..., Harness],
) -> None:
    """The embedded 1.5B judge wrote its whole answer into ``description``, "Confidence 85" included: the
    description keeps the solution only, so no confidence is shown inside it while the field is withheld."""
    solution, _ = run(harness, PACKED, {})
    assert solution.description.startswith("1. **Token bucket per API key**")
    assert solution.description.endswith("one key per client.")
    assert "Tradeoffs" not in solution.description and "85" not in solution.description
    assert solution.confidence_text().startswith("not shown")


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Use a token bucket.\n\nConfidence: 80", "Use a token bucket."),
        ("Use a token bucket.\n**Confidence:** 80%", "Use a token bucket."),
        ("1. **Cache**: Redis.\n2. **Confidence interval** of the p99 is logged.", None),
        ("Tradeoffs", None),  # nothing but a heading: the text stays as it was
    ],
)
def test_description_only_cuts_at_another_fields_section(text: str, kept: str | None) -> None:
    assert description_only(text) == (kept if kept is not None else text)
