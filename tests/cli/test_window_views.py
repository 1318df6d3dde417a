"""Context-window use in every view: --verbose, show, the report, the exported JSON, the web page's data."""

from __future__ import annotations

import json

import pytest

from dialectic.cli.browse_run import show_lines
from dialectic.cli.verbose import setup_lines, summary_lines
from dialectic.cli.window_flags import parse_windows
from dialectic.core.changes import WindowNoted
from dialectic.core.domain import DebateState, WindowUse
from dialectic.core.errors import InvalidArgumentsError
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import ScriptedProvider, ScriptedReply, default_reply
from dialectic.reporting.export import export_json
from dialectic.reporting.report import render_report
from dialectic.reporting.windows import done_text, largest_text, window_line
from dialectic.store import MemoryStore
from dialectic.testing.harness import Harness, make_config
from dialectic.web.presenter import change_payload, render_state

PADDING = " ".join(["The design bounds every queue and sheds load before it saturates."] * 6)


def wordy(request: CompletionRequest) -> ScriptedReply:
    reply = default_reply(request)
    return reply if request.json_schema is not None else ScriptedReply(text=f"{reply.text}\n{PADDING}")


@pytest.fixture(scope="module")
def state() -> DebateState:
    h = Harness(store=MemoryStore(), provider=ScriptedProvider(wordy, window=900))
    done = h.start(make_config(agents=2, rounds=3, contextStrategy="slide"))
    assert done.status == "completed" and done.windows["agent-architect"].fired
    return done


def test_one_line_says_the_largest_prompt_the_window_and_what_was_done() -> None:
    use = WindowUse(agent_id="a", window=1500, source="config", largest_prompt=1185, fired={"summarize": 2, "slide": 1})
    assert window_line("Architect", use) == (
        "Architect: largest prompt 1,185 of 1,500 tokens (79%, estimated); window configured; summarized 2×, slid 1×"
    )
    unknown = WindowUse(agent_id="b", largest_prompt=420, counted_by="tokenizer")
    assert largest_text(unknown) == "420 tokens (counted; window unknown)"
    assert done_text(unknown) == "nothing needed"
    assert done_text(use.model_copy(update={"fired": {}, "refusals": 1, "warned": True})) == "1 refusal"


def test_verbose_says_the_strategy_at_the_start_and_each_participants_use_at_the_end(state: DebateState) -> None:
    assert "Context windows: past 90% slide; each as its server says" in setup_lines(state)
    lines = summary_lines(state)
    start = lines.index("Context windows (past 90%: slide):")
    assert lines[start + 1].startswith("  Architect: largest prompt ")
    assert "of 900 tokens" in lines[start + 1] and "window said by its server" in lines[start + 1]
    assert "slid " in lines[start + 1]
    assert lines[start + 3].startswith("  Judge: largest prompt ")


def test_show_lists_each_participants_window_use(state: DebateState) -> None:
    lines = show_lines(state)
    start = lines.index("Context windows (past 90%: slide):")
    assert [line.split(":")[0].strip() for line in lines[start + 1 : start + 4]] == [
        "Architect",
        "Performance",
        "Judge",
    ]


def test_the_report_has_a_context_windows_section(state: DebateState) -> None:
    report = render_report(state)
    section = report[report.index("## Context windows") : report.index("## Totals")]
    assert "| Participant | Window | Largest prompt | Past 90% |" in section
    assert "| Architect | 900 (said by its server) |" in section and "slid " in section
    assert "## Context windows" not in render_report(state.model_copy(update={"windows": {}}))


def test_the_exported_json_carries_each_participants_use(state: DebateState) -> None:
    exported = json.loads(export_json(state))
    architect = exported["windows"]["agent-architect"]
    assert architect["window"] == 900 and architect["source"] == "server" and architect["countedBy"] == "tokenizer"
    assert architect["largestPrompt"] > 0 and architect["fired"]["slide"] >= 1
    assert {"ledger", "totals", "rounds", "agents"} <= exported.keys()  # what was there before is still there


def test_the_web_page_gets_the_window_notes(state: DebateState) -> None:
    assert render_state(state.to_json_dict())["windows"]["judge"]["largestPrompt"] > 0
    payload = change_payload(7, WindowNoted(use=state.windows["judge"]))
    assert payload["kind"] == "window_noted" and payload["seq"] == 7 and payload["use"]["largestPrompt"] > 0


def test_context_window_flags_name_a_participant_or_everyone() -> None:
    assert parse_windows(None) == {}
    assert parse_windows(["8192", "agent-kiss=16384"]) == {"*": 8192, "agent-kiss": 16384}
    for bad in ("lots", "=8192", "agent-kiss=", "agent-kiss=8k", "-1"):
        with pytest.raises(InvalidArgumentsError, match="--context-window"):
            parse_windows([bad])
