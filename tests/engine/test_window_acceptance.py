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
from dialectic.testing.fake_server import FakeLLMServer
from dialectic.testing.harness import FAST_RETRY

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
