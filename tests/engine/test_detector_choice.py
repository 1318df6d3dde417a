"""The engine measures convergence and repetition with the process's default similarity model."""

from __future__ import annotations

from collections.abc import Callable

from dialectic.similarity.choice import default_similarity
from dialectic.testing.harness import Harness, make_config, scripted_judge


def test_rounds_are_measured_by_the_default_similarity_model_and_say_which(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge())
    state = h.start(make_config(rounds=2, assessment="on"))  # every round assessed, none may stop the debate
    measured = [r.assessment for r in state.rounds]
    assert len(measured) == 2 and all(a is not None for a in measured)
    assert all(a.measured_by == default_similarity().name for a in measured if a is not None)
    second = measured[1]
    assert second is not None and second.similarity is not None and second.repetition is not None
