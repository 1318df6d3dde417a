"""The page shows a council's count and a correction's checks: started from the form, read live as the debate
runs, and the same after a reload."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script, default_reply
from dialectic.testing.fake_server import FakeLLMServer
from tests.browser.conftest import Served
from tests.browser.test_page import wait_until_done

PROBLEM = "Design a rate limiter for a public API"
DESIGNS = {"System Architect": "A token bucket per client.", "Simplicity Advocate": "A fixed window counter."}


def reply(request: CompletionRequest) -> Script:
    prompt = request.last_user
    if "FINAL RANKING" in prompt:  # the fixed window first, whoever ranks
        blocks = re.findall(r"^### (Response [A-Z])\n(.*?)\n", prompt, re.MULTILINE)
        order = sorted(blocks, key=lambda block: "fixed window" not in block[1])
        return "FINAL RANKING:\n" + "\n".join(f"{n}. {label}" for n, (label, _) in enumerate(order, 1))
    if "## An answer to check" in prompt:
        if "token bucket" in prompt:
            return "Violation: no burst limit is set\nEvidence: A token bucket per client"
        return "Nothing is wrong."
    if "## A reviewer's objection" in prompt:
        return "A token bucket per client, 10 requests of burst."
    for title, design in DESIGNS.items():
        if prompt.startswith(f"You are the {title} in a design debate.") and "Propose a design" in prompt:
            return design
    return default_reply(request)


@pytest.fixture(scope="module")
def llm_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(reply) as server:
        yield server


def run_from_the_form(page: Any, served: Served, fmt: str) -> None:
    page.goto(served.url + "#/new")
    page.wait_for_selector(".agent-row")
    page.select_option("#format", fmt)
    page.fill("#problem", PROBLEM)
    page.click("#new-debate button[type=submit]")
    page.wait_for_url(re.compile(r"#/debates/deb-"))
    wait_until_done(page)


def test_the_page_shows_the_council_standings_rankings_and_what_the_chair_got(page: Any, served: Served) -> None:
    run_from_the_form(page, served, "council")
    for _ in range(2):  # as the stream brought it, then as the saved debate loads
        page.wait_for_selector("section.council")
        assert page.text_content("#debate-council") == "Simplicity Advocate 2 · System Architect 0"
        rows = page.locator("section.council tbody tr").all_inner_texts()
        assert [" ".join(r.split()) for r in rows] == ["Simplicity Advocate 2 yes", "System Architect 0 yes"]
        council = page.text_content("section.council") or ""
        assert "The chair was given Simplicity Advocate, System Architect, best first." in council
        assert page.locator("section.council ul.rankings li").all_inner_texts() == [
            "System Architect ranked Simplicity Advocate > System Architect",
            "Simplicity Advocate ranked Simplicity Advocate > System Architect",
        ]
        assert page.locator('#debate-rounds .contribution[data-kind="ranking"]').count() == 2
        page.reload()
        wait_until_done(page)


def test_the_page_shows_each_check_the_points_and_the_winner(page: Any, served: Served) -> None:
    run_from_the_form(page, served, "correction")
    for _ in range(2):
        page.wait_for_selector("section.correction")
        assert page.locator("section.correction ul.checks li").all_inner_texts() == [
            "System Architect → Simplicity Advocate: holds",
            "Simplicity Advocate → System Architect: corrects — violation: no burst limit is set; "
            "evidence: “A token bucket per client”",
        ]
        rows = [" ".join(r.split()) for r in page.locator("section.correction tbody tr").all_inner_texts()]
        assert rows == ["System Architect 0", "System Architect (revised) 1", "Simplicity Advocate 1.5"]
        assert page.text_content("#debate-correction") == "Simplicity Advocate won · 1.5 points"
        page.reload()
        wait_until_done(page)
