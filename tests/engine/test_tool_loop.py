"""Agents reading the context directory through tools, on the scripted model."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dialectic.core import events as ev
from dialectic.core.config import SystemConfig
from dialectic.core.domain import Contribution
from dialectic.core.errors import ToolsUnsupported
from dialectic.llm.base import CompletionRequest, ToolCall
from dialectic.llm.scripted import Script, ScriptedProvider, ScriptedReply, default_reply
from dialectic.store.base import DebateStore
from dialectic.testing.harness import Harness, make_config

NOTE = "Use Redis with a token bucket per client."


@pytest.fixture
def context_dir(tmp_path: Path) -> Path:
    root = tmp_path / "ctx"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "notes.md").write_text(NOTE + "\n", encoding="utf-8")
    (root / "README.md").write_text("# Limiter\nThe service limits requests.\n", encoding="utf-8")
    (root / ".env").write_text("KEY=hidden\n", encoding="utf-8")
    return root


def with_context(config: SystemConfig, directory: Path, **settings: Any) -> SystemConfig:
    context = config.debate.context.model_copy(update={"dir": str(directory), **settings})
    return config.model_copy(update={"debate": config.debate.model_copy(update={"context": context})})


def tool_results(request: CompletionRequest) -> list[str]:
    return [m.content for m in request.messages if m.role == "tool"]


def reading(calls: list[ToolCall]) -> Callable[[CompletionRequest], Script]:
    """A model that asks for ``calls`` first, then answers quoting what the tools returned."""

    def respond(request: CompletionRequest) -> Script:
        if request.tools and not tool_results(request):
            return ScriptedReply(tool_calls=tuple(calls))
        if request.tools or tool_results(request):
            return f"[{request.tag}] read: " + " | ".join(tool_results(request))
        return default_reply(request)

    return respond


def contributions(state: Any, kind: str) -> list[Contribution]:
    return [c for c in state.all_contributions() if c.type == kind]


def test_agents_read_through_tools_and_the_calls_are_recorded(
    harness: Callable[..., Harness], context_dir: Path
) -> None:
    h = harness(reading([ToolCall("c1", "file_read", {"path": "docs/notes.md"})]))
    state = h.start(with_context(make_config(agents=2), context_dir))
    assert state.status == "completed"
    assert state.context is None  # nothing pasted
    assert state.config["debate"]["context"]["mode"] == "tools"  # the resolved mode is saved
    for contribution in contributions(state, "proposal") + contributions(state, "refinement"):
        assert NOTE in contribution.content
        assert contribution.tool_calls is not None
        (record,) = contribution.tool_calls
        assert (record.name, record.arguments, record.error) == ("file_read", {"path": "docs/notes.md"}, None)
        assert record.result_chars == len(f"docs/notes.md (lines 1-1 of 1)\n{NOTE}")
    for critique in contributions(state, "critique"):
        assert critique.tool_calls is None  # critiques get no tools
    first = next(c for c in h.provider.calls if c.tag.startswith("proposal"))
    assert [t.name for t in first.tools] == ["list_files", "file_read", "context_search"]
    assert "## The user's files" in first.last_user and "docs/notes.md (1 lines)" in first.last_user
    assert NOTE not in first.last_user and ".env" not in first.last_user
    # Each step of a loop is a request of its own in the ledger.
    proposals = [e for e in state.ledger if e.kind == "proposal"]
    assert [e.requests for e in proposals] == [2, 2]
    assert sum(e.requests for e in state.ledger) == len(h.provider.calls)


def test_the_loop_is_bounded_by_max_tool_calls_then_asks_without_tools(
    harness: Callable[..., Harness], context_dir: Path
) -> None:
    def greedy(request: CompletionRequest) -> Script:
        if request.tools:
            n = len(tool_results(request))
            return ScriptedReply(
                tool_calls=(
                    ToolCall(f"a{n}", "context_search", {"query": "redis"}),
                    ToolCall(f"b{n}", "list_files", {}),
                )
            )
        if tool_results(request):
            return "final answer after reading"
        return default_reply(request)

    h = harness(greedy)
    state = h.start(with_context(make_config(agents=2), context_dir, max_tool_calls=3))
    proposal = contributions(state, "proposal")[0]
    assert proposal.content == "final answer after reading"
    assert proposal.tool_calls is not None
    assert [r.name for r in proposal.tool_calls] == ["context_search", "list_files", "context_search"]
    steps = [c for c in h.provider.calls if c.tag == "proposal:architect"]
    assert [bool(c.tools) for c in steps] == [True, True, False]  # two steps with tools, then the final call
    final = steps[-1]
    assert final.messages[-1].role == "user" and "Write your answer now" in final.messages[-1].content
    refused = [m.content for m in final.messages if m.role == "tool"][-1]
    assert refused.startswith("error: the tool-call limit")  # the fourth call asked for is answered, not run
    assert "docs/notes.md:1-1" in [m.content for m in final.messages if m.role == "tool"][0]


def test_bad_tool_calls_are_answered_with_errors_the_model_sees(
    harness: Callable[..., Harness], context_dir: Path
) -> None:
    calls = [
        ToolCall("x1", "shell", {"cmd": "cat /etc/passwd"}),
        ToolCall("x2", "file_read", {}, arguments_text="{path: oops"),
        ToolCall("x3", "file_read", {"path": "../../etc/passwd"}),
        ToolCall("x4", "file_read", {"path": ".env"}),
    ]
    h = harness(reading(calls))
    state = h.start(with_context(make_config(agents=2), context_dir))
    proposal = contributions(state, "proposal")[0]
    assert proposal.tool_calls is not None
    errors = [r.error or "" for r in proposal.tool_calls]
    assert "unknown tool 'shell'" in errors[0]
    assert "must be a JSON object" in errors[1]
    assert "goes up with '..'" in errors[2]
    assert "is hidden" in errors[3]
    assert proposal.content.count("error: ") == 4 and "KEY=hidden" not in proposal.content


def test_paste_mode_pastes_the_files_and_offers_no_tools(harness: Callable[..., Harness], context_dir: Path) -> None:
    h = harness()
    state = h.start(with_context(make_config(agents=2), context_dir, mode="paste"))
    assert state.context is not None and NOTE in state.context
    assert all(not c.tools for c in h.provider.calls)
    assert all(c.tool_calls is None for c in state.all_contributions())
    assert state.config["debate"]["context"]["mode"] == "paste"


def test_off_mode_uses_nothing(harness: Callable[..., Harness], context_dir: Path) -> None:
    h = harness()
    state = h.start(with_context(make_config(agents=2), context_dir, mode="off"))
    assert state.context is None
    assert not any(NOTE in m.content for c in h.provider.calls for m in c.messages)
    assert all(not c.tools for c in h.provider.calls)


class NoToolsProvider(ScriptedProvider):
    supports_tools = False


def test_unset_mode_is_paste_when_a_provider_has_no_tools(store: DebateStore, context_dir: Path) -> None:
    h = Harness(store=store, provider=NoToolsProvider())
    state = h.start(with_context(make_config(agents=2), context_dir))
    assert state.config["debate"]["context"]["mode"] == "paste"
    assert state.context is not None and NOTE in state.context


def test_tools_mode_gives_a_provider_without_tools_the_pasted_text(store: DebateStore, context_dir: Path) -> None:
    h = Harness(store=store, provider=NoToolsProvider())
    state = h.start(with_context(make_config(agents=2), context_dir, mode="tools"))
    assert state.status == "completed" and state.context is None
    warnings = [w.message for w in h.of(ev.Warning)]
    assert [w for w in warnings if "does not do tool calling" in w] == [
        "the provider of Architect, Performance does not do tool calling; "
        "they get the context files pasted into their prompts instead"
    ]
    proposal = next(c for c in h.provider.calls if c.tag.startswith("proposal"))
    assert NOTE in proposal.last_user and not proposal.tools


def test_a_provider_refusing_tools_moves_the_agent_to_pasted_text(
    harness: Callable[..., Harness], context_dir: Path
) -> None:
    def refusing(request: CompletionRequest) -> Script:
        if request.tools:
            return ToolsUnsupported("this server does not support tools", endpoint="http://127.0.0.1:9/v1")
        return default_reply(request)

    h = harness(refusing)
    state = h.start(with_context(make_config(agents=2), context_dir))
    assert state.status == "completed"
    refused = [w.message for w in h.of(ev.Warning) if "refused tool calls" in w.message]
    assert len(refused) == 2  # once per agent, not once per contribution
    proposals = contributions(state, "proposal")
    assert all(p.ok and p.tool_calls is None for p in proposals)
    later = [c for c in h.provider.calls if c.tag.startswith("refinement")]
    assert later and all(not c.tools and NOTE in c.last_user for c in later)


def test_turn_formats_offer_tools_too(harness: Callable[..., Harness], context_dir: Path) -> None:
    h = harness(reading([ToolCall("t1", "context_search", {"query": "token bucket"})]))
    config = with_context(make_config(agents=2, rounds=2, format="structured"), context_dir)
    state = h.start(config)
    assert state.status == "completed"
    turns = [c for c in state.all_contributions() if c.type not in ("proposal", "critique", "refinement")]
    assert turns and all(t.tool_calls and t.tool_calls[0].name == "context_search" for t in turns)
    assert all("docs/notes.md:1-1" in t.content for t in turns)


def test_a_missing_context_directory_creates_nothing(harness: Callable[..., Harness], tmp_path: Path) -> None:
    from dialectic.core.errors import InvalidArgumentsError

    h = harness()
    with pytest.raises(InvalidArgumentsError, match="context directory not found"):
        h.start(with_context(make_config(agents=2), tmp_path / "missing", mode="tools"))
    assert h.store.list() == [] and h.provider.calls == []


def test_a_second_debate_over_the_same_tree_reuses_the_index(
    harness: Callable[..., Harness], context_dir: Path
) -> None:
    h = harness(reading([ToolCall("s", "context_search", {"query": "redis"})]))
    h.start(with_context(make_config(agents=2), context_dir))
    h.start(with_context(make_config(agents=2), context_dir))
    cache = Path(os.environ["DIALECTIC_HOME"]) / "cache" / "context-index"
    assert len(list(cache.glob("*.sqlite3"))) == 1


def test_resume_never_repeats_a_saved_tool_loop(harness: Callable[..., Harness], context_dir: Path) -> None:
    from tests.engine.test_resume import Crash, CrashingStore, start_quietly

    respond = reading([ToolCall("c1", "file_read", {"path": "docs/notes.md"})])
    config = with_context(make_config(agents=2, rounds=2), context_dir)
    clean = harness(respond)
    counting = CrashingStore(clean.store, crash_after=10_000)
    clean.store = counting
    reference = clean.start(config)
    clean_calls, total_appends = len(clean.provider.calls), counting.appends
    assert reference.status == "completed"

    store = counting.inner
    for crash_after in range(1, total_appends):
        crashing = Harness(store=CrashingStore(store, crash_after), provider=ScriptedProvider(respond))
        with pytest.raises(Crash):
            asyncio.run(start_quietly(crashing, config))
        debate_id = store.list(limit=1)[0].id
        before = store.load(debate_id)
        resumed = Harness(store=store, provider=ScriptedProvider(respond))
        after = resumed.resume(debate_id)
        assert after.status == "completed", f"crash after append {crash_after}"
        for contribution in before.all_contributions():
            assert contribution in after.all_contributions()  # saved whole, its tool calls with it
        # Only what was not saved is asked for: no step of a saved tool loop is sent again.
        saved_requests = sum(e.requests for e in before.ledger)
        assert len(resumed.provider.calls) == clean_calls - saved_requests, f"crash after append {crash_after}"
        assert sum(e.requests for e in after.ledger) == clean_calls
        own = [c for c in after.all_contributions() if c.type in ("proposal", "refinement")]
        assert all(c.tool_calls for c in own if not c.metadata.carried_over)


def test_the_judge_reads_with_tools_when_judge_tools_is_on(harness: Callable[..., Harness], context_dir: Path) -> None:
    def respond(request: CompletionRequest) -> Script:
        if request.tag.startswith("synthesis") and request.tools and not tool_results(request):
            return ScriptedReply(tool_calls=(ToolCall("j1", "file_read", {"path": "README.md"}),))
        if request.tag.startswith("synthesis") and request.tools:
            return "I have read enough."  # not JSON: a structured call follows
        return default_reply(request)

    h = harness(respond)
    state = h.start(with_context(make_config(agents=2), context_dir, judge_tools=True))
    assert state.status == "completed" and state.final_solution is not None
    assert state.final_solution.structured
    tool_calls = state.final_solution.tool_calls
    assert tool_calls is not None and [r.name for r in tool_calls] == ["file_read"]
    synthesis = [c for c in h.provider.calls if c.tag.startswith("synthesis")]
    assert [bool(c.tools) for c in synthesis] == [True, True, False]
    assert synthesis[-1].json_schema is not None
    assert "README.md (lines 1-2 of 2)" in [m.content for m in synthesis[-1].messages if m.role == "tool"][0]
    assert [e.requests for e in state.ledger if e.kind == "synthesis"] == [3]


def test_without_judge_tools_the_judge_gets_none(harness: Callable[..., Harness], context_dir: Path) -> None:
    h = harness()
    state = h.start(with_context(make_config(agents=2), context_dir))
    assert state.final_solution is not None and state.final_solution.tool_calls is None
    assert not any(c.tools for c in h.provider.calls if c.tag.startswith("synthesis"))


def test_max_read_chars_caps_what_one_contribution_reads(harness: Callable[..., Harness], context_dir: Path) -> None:
    """``debate.context.maxReadChars`` reaches the tools: past it, a read is refused with a message the model sees."""
    (context_dir / "big.txt").write_text("word " * 400 + "\n", encoding="utf-8")  # 2,001 characters
    calls = [ToolCall(f"c{i}", "file_read", {"path": "big.txt"}) for i in range(2)]
    h = harness(reading(calls))
    state = h.start(with_context(make_config(agents=2), context_dir, max_read_chars=1_000))
    assert state.status == "completed"
    (proposal, *_) = contributions(state, "proposal")
    assert proposal.tool_calls is not None
    errors = [record.error for record in proposal.tool_calls]
    assert errors[-1] is not None and "limit of 1000 characters" in errors[-1]
