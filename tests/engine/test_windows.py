"""Context windows in a debate: warnings at 80%, ``debate.contextStrategy`` past 90%, refusals learned from.

On the scripted model a token is a word: its usage, its ``count_tokens`` and its ``window`` all
count words, so every figure here is a count of words, exact.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from types import SimpleNamespace
from typing import cast

import pytest

from dialectic.agents.participants import Speaker
from dialectic.core import events as ev
from dialectic.core.changes import WindowsSized
from dialectic.core.config import SummarizationOverride, SystemConfig
from dialectic.core.domain import WindowUse
from dialectic.core.errors import ContextWindowExceeded, WindowFull
from dialectic.engine.windows import ServerWindow, WindowGate, WindowKeeper, act_line
from dialectic.llm.base import CompletionRequest, Message
from dialectic.llm.scripted import Script, ScriptedProvider, ScriptedReply, count_words, default_reply
from dialectic.testing.harness import Harness, make_config, run, scripted_judge

PROBLEM = "Design a rate limiter"
PADDING = " ".join(["The design bounds every queue and sheds load before it saturates."] * 6)
"""About sixty words more in every free-text reply, so that histories grow by hundreds of words a round."""


def wordy(request: CompletionRequest) -> ScriptedReply:
    reply = default_reply(request)
    if request.json_schema is not None:
        return reply
    return ScriptedReply(text=f"{reply.text}\n{PADDING}")


def scripted_judge_wordy(request: CompletionRequest) -> Script:
    """:func:`wordy`, with a judge whose verdict parses."""
    return scripted_judge()(request) if request.tag.startswith("verdict") else wordy(request)


def sized(config: SystemConfig, agents: int | None = None, judge: int | None = None) -> SystemConfig:
    """``config`` with the agents' and the judge's ``contextWindow`` set."""
    return config.model_copy(
        update={
            "agents": [a.model_copy(update={"context_window": agents}) for a in config.agents],
            "judge": config.judge.model_copy(update={"context_window": judge}),
        }
    )


def warnings(h: Harness, text: str) -> list[str]:
    return [w.message for w in h.of(ev.Warning) if text in w.message]


def prompt_words(request: CompletionRequest) -> int:
    return sum(count_words(m.content) for m in request.messages)


AGENTS = ("agent-architect", "agent-performance", "agent-kiss")
LATE = {"summarization": {"threshold": 1_000_000}}
"""Summaries only for the window: histories never pass the character threshold."""


def test_summarize_replaces_the_older_rounds_by_the_agents_summary_under_its_threshold(
    harness: Callable[..., Harness],
) -> None:
    h = harness(wordy, window=900)
    state = h.start(make_config(agents=3, rounds=3))
    assert state.status == "completed"
    assert h.provider.refused == []  # nothing too long was ever sent
    line = act_line(900)
    firsts = [c for c in h.provider.calls if not any(m.role == "assistant" for m in c.messages)]
    assert max(prompt_words(c) for c in firsts) <= line
    for agent_id in AGENTS:
        use = state.windows[agent_id]
        assert (use.window, use.source, use.counted_by) == (900, "server", "tokenizer")
        assert use.warned and use.fired.get("summarize", 0) >= 1
        assert 0 < use.largest_prompt <= line
    forced = [s for r in state.rounds for s in r.summaries.values() if s.metadata.before_chars < 5000]
    assert {s.agent_id for s in forced} == set(AGENTS)  # made under the character threshold, for the window
    for name in ("Architect", "Performance", "Kiss"):
        assert len(warnings(h, f"{name}'s prompt reached")) == 1  # once per participant, not per call
    assert warnings(h, "its older rounds are replaced by its summary")


def test_slide_keeps_the_problem_and_the_last_rounds_that_fit(harness: Callable[..., Harness]) -> None:
    h = harness(wordy, window=1300)
    state = h.start(make_config(agents=3, rounds=3, contextStrategy="slide", **LATE))
    assert state.status == "completed" and h.provider.refused == []
    assert not [t for t in h.tags() if t.startswith("summary")]  # sliding asks for no summary
    for agent_id in AGENTS:
        assert state.windows[agent_id].fired.get("slide", 0) >= 1
        assert "summarize" not in state.windows[agent_id].fired
    last_refinement = [c for c in h.provider.calls if c.tag == "refinement:architect"][-1].last_user
    assert PROBLEM in last_refinement
    assert "### Round 2 —" in last_refinement and "### Round 1 —" not in last_refinement
    assert warnings(h, "only the last rounds that fit are kept")


def test_fail_stops_the_debate_cleanly_and_a_larger_window_resumes_it(harness: Callable[..., Harness]) -> None:
    h = harness(wordy)
    with pytest.raises(WindowFull) as stopped:
        h.start(sized(make_config(agents=3, rounds=3, contextStrategy="fail"), agents=900))
    error = stopped.value
    assert error.exit_code == 3 and "\n" not in error.message
    assert "contextStrategy is fail" in error.message and "--context-window agent-" in error.message
    debate_id = error.debate_id
    assert debate_id is not None
    saved = h.store.load(debate_id)
    assert saved.status == "failed" and saved.failure_reason == "window" and saved.error == error.message
    assert any(use.fired.get("fail") for use in saved.windows.values())
    assert max(prompt_words(c) for c in h.provider.calls) <= act_line(900)  # the prompt that failed was not sent

    done = run(h.engine(ScriptedProvider(wordy)).resume(debate_id, windows={"*": 5000}))
    assert done.status == "completed"
    assert [a["contextWindow"] for a in done.config["agents"]] == [5000, 5000, 5000]
    assert any(isinstance(c, WindowsSized) for c in h.store.changes(debate_id))
    assert all(use.window == 5000 and use.source == "config" for use in done.windows.values())


def test_a_refusal_teaches_the_window_once_and_the_shrunk_prompt_goes_again(harness: Callable[..., Harness]) -> None:
    h = harness(wordy, window=1400, tells_window=False)
    state = h.start(make_config(agents=3, rounds=4, **LATE))
    assert state.status == "completed" and not state.dropped
    assert len(h.provider.refused) == 1  # one refusal taught every participant on the endpoint
    refused = h.provider.refused[0]
    assert prompt_words(refused) >= 1400
    agent_id = next(a for a in AGENTS if refused.tag.endswith(a.removeprefix("agent-")))
    assert state.windows[agent_id].refusals == 1
    assert all(use.window == 1400 for use in state.windows.values())
    assert h.of(ev.Warning) and warnings(h, "the server refused")
    assert h.store.remembered_window("scripted", "m") == 1400  # type: ignore[attr-defined]

    again = h.start(make_config(agents=3, rounds=4, **LATE))  # the next debate knows it: no refusal at all
    assert again.status == "completed" and len(h.provider.refused) == 1
    assert {use.source for use in again.windows.values()} == {"remembered"}


def test_what_the_server_says_now_comes_before_what_a_refusal_taught_an_earlier_debate(
    harness: Callable[..., Harness],
) -> None:
    """A local server restarted on the same address with a larger ``-c`` must not keep the old
    server's window for every later debate in the store."""
    h = harness(wordy, window=100_000)
    h.store.remember_window("scripted", "m", 900)  # type: ignore[attr-defined]  # the old server's refusal
    state = h.start(make_config(agents=3, rounds=4, **LATE))
    assert state.status == "completed" and h.provider.refused == []
    assert {(use.window, use.source) for use in state.windows.values()} == {(100_000, "server")}
    assert not any(use.fired for use in state.windows.values())  # no prompt was shrunk to the old window


def test_a_refusal_naming_no_window_teaches_a_ceiling_under_the_refused_prompt(
    harness: Callable[..., Harness],
) -> None:
    h = harness(wordy, window=1400, tells_window=False, names_sizes=False)
    state = h.start(make_config(agents=3, rounds=4, **LATE))
    assert state.status == "completed" and len(h.provider.refused) == 1
    ceiling = math.floor(prompt_words(h.provider.refused[0]) * 0.9)
    assert {(use.window, use.source) for use in state.windows.values()} == {(ceiling, "refusal")}


def test_the_judge_slides_the_debate_it_synthesizes_and_gives_its_verdict_on(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge_wordy)
    config = sized(make_config(agents=2, rounds=3, contextStrategy="slide", verdict="on"), judge=1200)
    unsummarized = config.judge.model_copy(update={"summarization": SummarizationOverride(enabled=False)})
    state = h.start(config.model_copy(update={"judge": unsummarized}))
    assert state.status == "completed" and state.judge_summary is None
    judge = state.windows["judge"]
    assert judge.fired.get("slide") == 2 and judge.largest_prompt <= act_line(1200)
    assert state.verdict is not None
    for tag in ("synthesis", "verdict"):
        prompt = next(c for c in h.provider.calls if c.tag.startswith(tag)).last_user
        assert "### Round 3 —" in prompt and "### Round 1 —" not in prompt
    assert "agent-architect" not in state.windows or not state.windows["agent-architect"].fired


def test_a_turn_format_summarizes_its_discussion_to_fit(harness: Callable[..., Harness]) -> None:
    h = harness(wordy, window=1100)
    state = h.start(make_config(agents=3, rounds=4, format="round-limited", **LATE))
    assert state.status == "completed" and h.provider.refused == []
    assert any(use.fired.get("summarize") for use in state.windows.values())
    assert [r.round_number for r in state.rounds if r.summaries]  # the summaries the turns carried


def test_prompts_well_inside_the_window_are_counted_and_nothing_else(harness: Callable[..., Harness]) -> None:
    h = harness(window=100_000)
    state = h.start(make_config(agents=2, rounds=2))
    assert state.status == "completed"
    assert not warnings(h, "context window")
    for use in state.windows.values():
        assert use.largest_prompt > 0 and use.prompts > 0 and not use.warned and not use.fired


def test_a_prompt_with_nothing_left_to_shrink_is_sent_as_it_is_while_it_fits_the_window(
    harness: Callable[..., Harness],
) -> None:
    window = 440
    h = harness(wordy)
    state = h.start(sized(make_config(agents=2, rounds=1, contextStrategy="slide"), agents=window))
    assert state.status == "completed" and not state.dropped
    assert any(state.windows[a].over_sent >= 1 for a in ("agent-architect", "agent-performance"))
    assert all(state.windows[a].fired.get("cut") for a in ("agent-architect", "agent-performance"))
    assert warnings(h, "nothing left to shrink") and warnings(h, "contributions it quotes are cut")
    refinement = next(c for c in h.provider.calls if c.tag.startswith("refinement")).last_user
    assert "cut to fit your context window" in refinement and "[… cut to fit the context window]" in refinement
    assert max(prompt_words(c) for c in h.provider.calls if not c.tag.startswith("synthesis")) < window


def test_a_step_that_cannot_fit_its_window_is_refused_before_any_call_with_the_numbers(
    harness: Callable[..., Harness],
) -> None:
    h = harness(wordy)
    with pytest.raises(WindowFull) as stopped:
        h.start(sized(make_config(agents=2, rounds=1, contextStrategy="slide"), agents=300))
    message = stopped.value.message
    assert "300-token context window: nothing was sent" in message and "needs " in message
    assert "--context-window agent-" in message and "maxTokens" in message
    assert stopped.value.debate_id is not None
    saved = h.store.load(stopped.value.debate_id)
    assert saved.status == "failed" and saved.failure_reason == "window" and not saved.dropped
    assert max(prompt_words(c) for c in h.provider.calls) < 300  # no prompt past the window went out


def test_a_window_too_small_for_the_reply_is_a_config_error() -> None:
    with pytest.raises(ValueError, match="maxTokens"):
        SystemConfig.model_validate(
            {"agents": [{"id": "a", "name": "A", "role": "architect", "contextWindow": 1000, "maxTokens": 1000}]}
        )


def test_a_judge_reply_too_long_to_be_shown_back_for_repair_is_the_solution(harness: Callable[..., Harness]) -> None:
    rambling = " ".join(["The limiter keeps a token bucket per key and sheds load early."] * 45)

    def judge_rambles(request: CompletionRequest) -> Script:
        return ScriptedReply(text=rambling) if request.tag.startswith("synthesis") else wordy(request)

    h = harness(judge_rambles)
    config = sized(make_config(agents=2, rounds=3, contextStrategy="slide"), judge=1200)
    unsummarized = config.judge.model_copy(update={"summarization": SummarizationOverride(enabled=False)})
    state = h.start(config.model_copy(update={"judge": unsummarized}))
    assert state.status == "completed"
    assert state.final_solution is not None and state.final_solution.description == rambling
    assert not state.final_solution.structured
    assert warnings(h, "no room in the context window to repair it")
    assert len([c for c in h.provider.calls if c.tag.startswith("synthesis")]) == 1  # the repair was not sent


def _gate(name: str, shared: ServerWindow) -> WindowGate:
    """A gate on one participant of the scripted model, whose window is unknown (counted in words)."""
    speaker = SimpleNamespace(
        name=name,
        client=SimpleNamespace(provider=ScriptedProvider()),
        config=SimpleNamespace(model="m", context_window=None),
    )
    keeper = WindowKeeper(
        cast(Speaker, speaker), endpoint="scripted", memory=None, use=WindowUse(agent_id=name), shared=shared
    )
    return WindowGate(keeper, None, may_refuse=True, on_warn=lambda _: None, on_refused=lambda _: None)


def _words(n: int) -> CompletionRequest:
    return CompletionRequest(model="m", messages=(Message(role="user", content=" ".join(["word"] * n)),))


def test_a_continuation_larger_than_any_prompt_taken_waits_for_the_probe_out_and_is_not_sent_past_its_window() -> None:
    async def scenario() -> None:
        shared = ServerWindow()
        probe, other = _gate("Probe", shared), _gate("Other", shared)
        probed = _words(2000)
        await probe.before("scripted", probed)  # the first prompt past the floor: the probe
        await other.before("scripted", _words(500))  # under the floor: it goes at once
        continuation = asyncio.create_task(other.before("scripted", _words(2100)))
        for _ in range(5):
            await asyncio.sleep(0)
        assert not continuation.done()  # it waits its turn: it would be a second probe
        probe.failed(probed, ContextWindowExceeded("too long", window=1500, prompt_tokens=2000))
        await probe.close(ok=False)
        with pytest.raises(ContextWindowExceeded, match="cannot fit"):
            await continuation  # the window is known now: refused here, no request made
        assert probe.keeper.use.refusals == 1 and other.keeper.use.refusals == 0

    asyncio.run(scenario())
