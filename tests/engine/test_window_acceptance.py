"""Acceptance: a debate whose history outgrows a 1,500-token window completes, against a llama-server-like fake.

Three agents argue for four rounds through the OpenAI adapter against :class:`FakeLLMServer`
with a 1,500-token context (``n_ctx``): each with its window configured (``contextWindow``),
with the window told by the server (strict mode answers ``/props`` as llama-server does), and
with a server that says nothing about its window until it refuses a prompt. Every time, the
debate completes, every agent got its warning and had its prompts shrunk by the strategy, and
the server refused at most one prompt (so at most one per participant).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from dialectic.core import events as ev
from dialectic.core.config import SystemConfig
from dialectic.core.domain import DebateState
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.llm.base import CompletionRequest
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import ScriptedReply, default_reply
from dialectic.store.base import DebateStore
from dialectic.testing.fake_server import FakeLLMServer, completion_request
from dialectic.testing.harness import FAST_RETRY
from dialectic.testing.wire import prompt_tokens

WINDOW = 1500
PADDING = " ".join(["The design keeps a bounded queue per tenant and sheds load early."] * 4)
ROLES = ("architect", "performance", "kiss")


def wordy(request: CompletionRequest) -> ScriptedReply:
    """The scripted model's replies, each with some 45 words more: the history outgrows the window by round 3."""
    reply = default_reply(request)
    return reply if request.json_schema is not None else ScriptedReply(text=f"{reply.text}\n{PADDING}")


def config(base_url: str, strategy: str, window: int | None) -> SystemConfig:
    endpoint: dict[str, Any] = {"provider": "openai", "baseUrl": base_url, "model": "qwen"}
    if window is not None:
        endpoint["contextWindow"] = window
    return SystemConfig.model_validate(
        {
            "agents": [{"id": f"agent-{r}", "name": r.title(), "role": r, **endpoint} for r in ROLES],
            "judge": {"id": "judge", "name": "Judge", "role": "generalist", **endpoint},
            "debate": {"rounds": 4, "contextStrategy": strategy},
        }
    )


def debate(store: DebateStore, fake: FakeLLMServer, setup: SystemConfig) -> tuple[DebateState, list[str]]:
    bus = ev.EventBus()
    seen: list[ev.Event] = []
    bus.subscribe(seen.append)
    engine = DebateEngine(store, ProviderPool(env={"OPENAI_API_KEY": "test-key"}), bus, retry=FAST_RETRY)
    request = DebateRequest(problem="Design a rate limiter", config=setup, config_dir=Path("."))
    state = asyncio.run(engine.start(request))
    return state, [e.message for e in seen if isinstance(e, ev.Warning)]


def refused(fake: FakeLLMServer) -> int:
    """Completions the server refused: asked for, but never produced (no other fault is injected)."""
    asked = sum(1 for path in fake.paths() if path.endswith("/chat/completions"))
    return asked - fake.call_count


@pytest.mark.parametrize(
    ("told", "configured", "source"),
    [(False, True, "config"), (True, False, "server"), (False, False, "refusal")],
    ids=["configured", "told-by-the-server", "learned-from-a-refusal"],
)
@pytest.mark.parametrize("strategy", ["summarize", "slide"])
def test_a_debate_that_outgrows_its_window_completes(
    store: DebateStore, strategy: str, told: bool, configured: bool, source: str
) -> None:
    with FakeLLMServer(wordy, strict=told, n_ctx=WINDOW) as fake:
        state, warnings = debate(store, fake, config(fake.openai_base_url, strategy, WINDOW if configured else None))
        refusals = refused(fake)
    assert state.status == "completed" and not state.dropped and state.final_solution is not None
    assert len(state.rounds) == 4 and all(c.ok for c in state.all_contributions())
    for role in ROLES:
        use = state.windows[f"agent-{role}"]
        assert use.window == WINDOW and use.source == source
        assert use.warned and use.fired.get(strategy, 0) >= 1  # the warning, and the strategy, recorded
        assert use.refusals <= 1
        warned = [w for w in warnings if w.startswith(f"{role.title()}'s prompt reached")]
        assert len(warned) <= 1  # once per participant, not once per call
    assert refusals == sum(use.refusals for use in state.windows.values())
    assert refusals == (1 if source == "refusal" else 0)  # at most one refusal to learn the window
    assert store.load(state.id).windows == state.windows  # saved with the debate


# -- a step that overfills its window by itself (issue 52, item 1) ------------------------------------

LONG = " ".join(["Each tenant gets a token bucket in Redis, refilled by a Lua script on every request."] * 23)
"""About 2,000 characters: some 500 tokens as the fake server counts them (four characters a token)."""
REPLY_TOKENS = 500


def long_replies(request: CompletionRequest) -> ScriptedReply:
    """Replies of about 500 tokens: in round 1 a refinement quotes a proposal and two critiques, past 1,500."""
    reply = default_reply(request)
    return reply if request.json_schema is not None else ScriptedReply(text=f"1. **Buckets**: {LONG}")


def sent_prompts(fake: FakeLLMServer) -> list[int]:
    """The size of every completion prompt the server received, as it counts them."""
    return [
        prompt_tokens(completion_request("chat", r.body)) for r in fake.requests if r.path.endswith("/chat/completions")
    ]


@pytest.mark.parametrize(
    ("told", "configured", "source"),
    [(False, True, "config"), (True, False, "server"), (False, False, "refusal")],
    ids=["configured", "read-from-props", "learned-from-one-refusal"],
)
def test_a_step_that_overfills_its_window_by_itself_is_fitted_and_no_agent_is_dropped(
    store: DebateStore, told: bool, configured: bool, source: str
) -> None:
    with FakeLLMServer(long_replies, strict=told, n_ctx=WINDOW) as fake:
        setup = config(fake.openai_base_url, "summarize", WINDOW if configured else None)
        agents = [a.model_copy(update={"max_tokens": REPLY_TOKENS}) for a in setup.agents]
        state, warnings = debate(store, fake, setup.model_copy(update={"agents": agents}))
        prompts, refusals = sent_prompts(fake), refused(fake)
    assert state.status == "completed" and not state.dropped, state.error
    assert len(state.rounds) == 4 and all(c.ok for c in state.all_contributions())
    assert refusals == (1 if source == "refusal" else 0)  # the one refusal that taught the window
    assert sum(1 for tokens in prompts if tokens >= WINDOW) == refusals  # none past it once it is known
    for role in ROLES:
        use = state.windows[f"agent-{role}"]
        assert use.window == WINDOW and use.source == source
        assert use.fired.get("cut", 0) >= 1  # the critiques its refinement quotes were cut, and it said so
    assert any("contributions it quotes are cut" in w for w in warnings)
    said = [r for r in fake.requests if "cut to fit your context window" in json.dumps(r.body)]
    assert said  # the prompts whose quotes were cut say so
