"""A format that needs more rounds than it was given is refused before anything is created or sent."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dialectic.core.errors import ConfigError, InvalidArgumentsError
from dialectic.loading.config import apply_overrides, size_local_debate
from dialectic.testing.harness import Harness, make_config


def test_rounds_below_the_structured_minimum_are_refused_as_a_flag_or_as_config() -> None:
    with pytest.raises(InvalidArgumentsError, match=r"--rounds 1: the structured format needs at least 2 rounds"):
        apply_overrides(make_config(agents=2, rounds=3), rounds=1, debate_format="structured")
    with pytest.raises(ConfigError, match=r"debate.rounds: the structured format needs at least 2 rounds"):
        apply_overrides(make_config(agents=2, rounds=1), debate_format="structured")
    resolved, _ = apply_overrides(make_config(agents=2, rounds=1), debate_format="free-form")
    assert resolved.debate.rounds == 1  # one round is enough for every other format


def test_sizing_for_the_local_model_keeps_the_formats_minimum() -> None:
    config = make_config(agents=2, rounds=3, format="structured")
    local = config.model_copy(
        update={
            "agents": [a.model_copy(update={"provider": "local"}) for a in config.agents],
            "judge": config.judge.model_copy(update={"provider": "local"}),
        }
    )
    sized, note = size_local_debate(local, rounds_given=False, agents_given=False)
    assert sized.debate.rounds == 2 and note is not None and "2 rounds" in note


def test_the_engine_refuses_it_too_and_creates_nothing(harness: Callable[..., Harness]) -> None:
    h = harness()
    with pytest.raises(ConfigError, match="structured format needs at least 2 rounds"):
        h.start(make_config(agents=2, rounds=1, format="structured"), problem="Design a cache")
    assert h.store.list() == [] and h.provider.calls == []
