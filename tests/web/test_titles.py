"""Titles without Markdown marks: the server's rule (dialectic.core.titles) and the page's copy of it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from dialectic.core.titles import title_line, without_marks
from dialectic.web import app as web_app

CASES = {
    "# Rate limiter for an API": "Rate limiter for an API",
    "## Design **a** cache ##": "Design a cache",
    "> - item one": "item one",
    "1. First *step* here": "First step here",
    "Use `redis_cache` with [the docs](https://example.org)": "Use redis_cache with the docs",
    "snake_case_name and 2*3*4": "snake_case_name and 2*3*4",
    "#hashtag is no heading": "#hashtag is no heading",
    "***bold italic***": "bold italic",
    "Plain words": "Plain words",
}


@pytest.mark.parametrize(("line", "title"), CASES.items())
def test_a_lines_marks_are_taken_off(line: str, title: str) -> None:
    assert without_marks(line) == title


def test_the_title_is_the_first_line_with_words() -> None:
    assert title_line("#\n\n  # Rate limiter for an API\n\nDesign one.") == "Rate limiter for an API"
    assert title_line("   \n") == ""


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs the page's script")
def test_the_page_follows_the_same_rules() -> None:
    script = (Path(web_app.STATIC_DIR) / "app.js").read_text(encoding="utf-8")
    part = script[script.index("// titles:begin") : script.index("// titles:end")]
    lines = [*CASES, "#\n\n  # Rate limiter for an API\n\nDesign one."]
    program = f"{part}\nconsole.log(JSON.stringify({json.dumps(lines)}.map(titleLine)));"
    ran = subprocess.run(["node", "-e", program], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(ran.stdout) == [title_line(line) for line in lines]


def test_a_markdown_problem_is_listed_and_reported_by_its_words(tmp_path: Path) -> None:
    from dialectic.llm.scripted import ScriptedProvider
    from dialectic.reporting.report import render_report
    from dialectic.store import SqliteStore
    from dialectic.testing.harness import Harness, make_config
    from dialectic.web.listing import summary_row
    from dialectic.web.views import listing_row

    store = SqliteStore(tmp_path / "debates.sqlite3")
    try:
        state = Harness(store, ScriptedProvider()).start(
            make_config(), problem="# Rate limiter for an API\n\nDesign a **rate limiter**."
        )
        assert [d.problem for d in store.list()] == ["Rate limiter for an API"]
        assert render_report(state).startswith("# Debate report: Rate limiter for an API\n")
        assert listing_row(state, "completed")["problem"] == "Rate limiter for an API"
        (entry,) = store.page(limit=1)
        assert entry.details is not None
        assert summary_row(entry, entry.details, "completed")["problem"] == "Rate limiter for an API"
    finally:
        store.close()
