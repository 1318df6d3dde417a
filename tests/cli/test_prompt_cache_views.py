"""The providers' prompt caches in a debate: each participant's calls carry its own key, and every view says
what share of the prompt tokens came from cache."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from dialectic.cli.browse_run import show_lines
from dialectic.cli.verbose import summary_lines
from dialectic.core.domain import DebateState
from dialectic.core.ledger import debate_totals
from dialectic.llm.base import Completion, CompletionRequest, Delta
from dialectic.llm.scripted import ScriptedProvider
from dialectic.reporting.report import render_report
from dialectic.store import MemoryStore
from dialectic.testing.harness import Harness, make_config

SHARE = re.compile(r"prompt tokens served from cache: (\d+)%")


class HalfCached(ScriptedProvider):
    """The scripted model, reporting half of every prompt as read from a prompt cache; it keeps the requests."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[CompletionRequest] = []

    async def complete(self, request: CompletionRequest) -> Completion:
        self.requests.append(request)
        completion = await super().complete(request)
        usage = completion.usage
        return replace(completion, usage=usage.model_copy(update={"cached_input_tokens": usage.input_tokens // 2}))

    async def stream(self, request: CompletionRequest) -> AsyncIterator[Delta]:
        completion = await self.complete(request)
        yield Delta(text=completion.text)
        yield Delta(finish_reason=completion.finish_reason, usage=completion.usage, model=completion.model)


@pytest.fixture(scope="module")
def debated() -> tuple[DebateState, HalfCached]:
    provider = HalfCached()
    state = Harness(store=MemoryStore(), provider=provider).start(make_config(agents=2, rounds=2))
    assert state.status == "completed"
    return state, provider


def test_each_participants_calls_carry_one_key_of_its_own(debated: tuple[DebateState, HalfCached]) -> None:
    _, provider = debated
    keys: dict[str, set[str]] = defaultdict(set)
    for request in provider.requests:
        keys[request.tag.rsplit(":", 1)[-1]].add(request.prompt_cache_key)
    assert all(len(found) == 1 and next(iter(found)) for found in keys.values())
    assert len({next(iter(found)) for found in keys.values()}) == len(keys)  # architect, performance, judge


def test_the_report_show_and_verbose_say_the_share_served_from_cache(debated: tuple[DebateState, HalfCached]) -> None:
    state, _ = debated
    totals = debate_totals(state)
    expected = round(100 * totals.cached_input_tokens / totals.input_tokens)
    assert 45 <= expected <= 50
    report = render_report(state)
    shown = "\n".join(show_lines(state))
    verbose = "\n".join(summary_lines(state))
    for text in (report, shown, verbose):
        found = SHARE.search(text.lower())
        assert found is not None and int(found.group(1)) == expected
