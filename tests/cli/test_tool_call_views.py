"""The tool calls of a contribution in every view: --verbose, show, the report, the web page's data."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialectic.cli.browse_run import show_lines
from dialectic.cli.verbose import setup_lines, summary_lines
from dialectic.core.domain import DebateState, ToolCallRecord
from dialectic.llm.base import CompletionRequest, ToolCall
from dialectic.llm.scripted import Script, ScriptedProvider, ScriptedReply, default_reply
from dialectic.reporting.report import render_report
from dialectic.store import MemoryStore
from dialectic.testing.harness import Harness, make_config
from dialectic.web.presenter import render_state

READ = 'file_read(path="notes.md") → 36 chars'
FAILED = (
    "file_read(path=\"../x\") → error: '../x' goes up with '..'; only paths inside the context directory can be read"
)


@pytest.fixture
def state(tmp_path: Path) -> DebateState:
    (tmp_path / "notes.md").write_text("Use Redis.\n", encoding="utf-8")

    def respond(request: CompletionRequest) -> Script:
        if request.tools and not any(m.role == "tool" for m in request.messages):
            calls = (ToolCall("a", "file_read", {"path": "notes.md"}), ToolCall("b", "file_read", {"path": "../x"}))
            return ScriptedReply(tool_calls=calls)
        return default_reply(request)

    config = make_config(agents=2)
    context = config.debate.context.model_copy(update={"dir": str(tmp_path), "judge_tools": True})
    config = config.model_copy(update={"debate": config.debate.model_copy(update={"context": context})})
    h = Harness(store=MemoryStore(), provider=ScriptedProvider(respond))
    done = h.start(config)
    assert done.status == "completed"
    return done


def test_a_record_describes_itself_on_one_line() -> None:
    record = ToolCallRecord(
        name="context_search", arguments={"query": "rate limit", "max_results": 3}, result_chars=1234
    )
    assert record.describe() == 'context_search(query="rate limit", max_results=3) → 1,234 chars, 0 ms'


def test_verbose_lists_each_tool_call_under_its_contribution(state: DebateState) -> None:
    lines = summary_lines(state)
    proposal = next(i for i, line in enumerate(lines) if line.strip().startswith("proposal"))
    assert "2 tool calls" in lines[proposal]
    assert lines[proposal + 1].startswith(f"      tool {READ}")
    assert lines[proposal + 2].startswith(f"      tool {FAILED}")
    assert "Judge's tool calls for the solution:" in lines
    assert any(
        "through tools (at most 6 tool calls per contribution, the judge too)" in line for line in setup_lines(state)
    )


def test_show_lists_the_tool_calls_of_each_round(state: DebateState) -> None:
    lines = show_lines(state)
    assert any(line.startswith("Context  ") and line.endswith("(tools)") for line in lines)
    assert sum(1 for line in lines if line.strip().startswith(READ)) == 5  # 2 proposals, 2 refinements, the judge
    assert "The judge read with tools:" in lines


def test_the_report_lists_the_tool_calls(state: DebateState) -> None:
    report = render_report(state)
    assert report.count("Tool calls (2):") == 5
    assert '- `file_read` `path="notes.md"` → 36 chars' in report
    assert "error: '../x' goes up with '..'" in report


def test_the_web_page_gets_the_tool_calls(state: DebateState) -> None:
    rendered = render_state(state.to_json_dict())
    proposal = rendered["rounds"][0]["contributions"][0]
    assert [t["name"] for t in proposal["toolCalls"]] == ["file_read", "file_read"]
    assert proposal["toolCalls"][0]["resultChars"] == 36 and "error" not in proposal["toolCalls"][0]
    assert rendered["finalSolution"]["toolCalls"][1]["error"].startswith("'../x' goes up")
