"""The judge's assessment of a round reads its assessment of the round before, however the two race."""

from __future__ import annotations

import asyncio
from pathlib import Path

from dialectic.core.events import EventBus
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.llm.base import Completion, CompletionRequest
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import ScriptedProvider
from dialectic.store.memory import MemoryStore
from dialectic.testing.harness import FAST_RETRY, make_config, scripted_judge

PREVIOUS = "## Your assessment of the previous round"
HOLD_TURNS = 2_000
"""Turns of the event loop the first round's assessment is held for: far more than the second round
takes to reach its own assessment when nothing makes it wait (a count of turns, not a time)."""


def text_of(request: CompletionRequest) -> str:
    return "\n".join(str(m.content) for m in request.messages)


def assesses(request: CompletionRequest, number: int) -> bool:
    return f"Assess round {number} as an impartial judge" in text_of(request)


class SlowFirstAssessment(ScriptedProvider):
    """Holds the judge's assessment of round 1 until round 2's assessment is asked for (or long enough)."""

    def __init__(self) -> None:
        super().__init__(scripted_judge())
        self.second: list[CompletionRequest] = []

    async def complete(self, request: CompletionRequest) -> Completion:
        if assesses(request, 2):
            self.second.append(request)
        if assesses(request, 1):
            for _ in range(HOLD_TURNS):
                if self.second:
                    break
                await asyncio.sleep(0)
        return await super().complete(request)


def test_the_second_assessment_waits_for_the_first_when_the_rounds_are_fixed() -> None:
    provider = SlowFirstAssessment()
    engine = DebateEngine(MemoryStore(), ProviderPool(overrides={"scripted": provider}), EventBus(), retry=FAST_RETRY)
    config = make_config(agents=2, rounds=2, assessment="on")
    assert config.debate.termination().type == "fixed", "round 2 goes on without round 1's assessment"
    request = DebateRequest(problem="Design a rate limiter", config=config, config_dir=Path("."))

    state = asyncio.run(engine.start(request))

    assert state.status == "completed"
    assert [r.assessment is not None for r in state.rounds] == [True, True]
    assert len(provider.second) == 1
    assert PREVIOUS in text_of(provider.second[0])
