"""Picking the panel on the page: the models the server's endpoints list, per agent and for the judge."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script
from dialectic.testing.fake_server import FakeLLMServer
from tests.browser.conftest import Served, reply

LISTED = ("fake-model", "model-b", "model-c", "model-d", "model-broken")


def reply_unless_broken(request: CompletionRequest) -> Script | Exception:
    """The browser tests' replies; every call to ``model-broken`` fails (a 500, each time)."""
    if request.model == "model-broken":
        return RuntimeError("this model is down")
    return reply(request)


@pytest.fixture(scope="module")
def llm_server() -> Iterator[FakeLLMServer]:
    """The fake server, listing five models on its ``/v1/models`` (the configuration names only the first)."""
    with FakeLLMServer(reply_unless_broken, models=LISTED) as server:
        yield server


@pytest.fixture(scope="module")
def served_debate() -> dict[str, Any]:
    """One round, and retries without their real back-off (a broken judge gives up at once)."""
    return {"rounds": 1, "retry": {"baseDelayMs": 1, "maxDelayMs": 5, "jitterMs": 1}}


def pick(page: Any, select: str, model: str) -> None:
    page.select_option(select, value=json.dumps(["openai", model], separators=(",", ":")))


def test_two_models_picked_on_the_page_are_the_ones_called(
    page: Any, served: Served, llm_server: FakeLLMServer, shots: Path
) -> None:
    page.goto(served.url + "#/new")
    page.wait_for_selector(".agent-row")
    architect = page.locator('.agent-row[data-role="architect"] select').get_attribute("id")
    kiss = page.locator('.agent-row[data-role="kiss"] select').get_attribute("id")
    offered = page.eval_on_selector_all(f"#{architect} option", "options => options.map(o => o.textContent)")
    # what the endpoint's /v1/models lists (the scripted model first), and a person
    assert offered == [llm_server.scripted.model, *LISTED, "A person (human seat)"]
    pick(page, f"#{architect}", "model-b")
    pick(page, f"#{kiss}", "model-c")
    pick(page, "#judge-model", "model-d")
    page.fill("#judge-temperature", "0.2")
    page.select_option("#judge-fallback", "agent-kiss")
    page.fill("#problem", "Design a rate limiter for a public API")
    page.screenshot(path=str(shots / "panel.png"), full_page=True)
    before = len(llm_server.requests)
    page.click("#new-debate button[type=submit]")
    page.wait_for_url(re.compile(r"#/debates/deb-"))
    page.wait_for_selector("#debate-status.completed", timeout=60_000)
    called = [r.body for r in llm_server.requests[before:] if r.path.endswith("/chat/completions")]
    assert {body["model"] for body in called} == {"model-b", "model-c", "model-d"}
    debate_id = page.url.rsplit("/", 1)[-1]
    saved = served.get(f"/api/debates/{debate_id}")["config"]
    assert [a["model"] for a in saved["agents"]] == ["model-b", "model-c"]
    assert saved["judge"]["model"] == "model-d" and saved["judge"]["fallback"] == "agent-kiss"
    assert saved["judge"]["temperature"] == 0.2


def test_a_judge_that_fails_is_replaced_and_the_page_says_so(page: Any, served: Served) -> None:
    page.goto(served.url + "#/new")
    page.wait_for_selector(".agent-row")
    pick(page, "#judge-model", "model-broken")  # the fallback stays "any participant (auto)"
    page.fill("#problem", "Design a rate limiter for a public API")
    page.click("#new-debate button[type=submit]")
    page.wait_for_url(re.compile(r"#/debates/deb-"))
    page.wait_for_selector("#debate-status.completed", timeout=60_000)
    note = page.locator("#solution-fallback").inner_text()
    assert note.startswith("System Architect wrote the synthesis in the judge's place: the judge failed")
    debate_id = page.url.rsplit("/", 1)[-1]
    report = served.text(f"/api/debates/{debate_id}/report")
    assert "System Architect wrote the synthesis in its place (judge.fallback)" in report
    exported = json.loads(served.text(f"/api/debates/{debate_id}/export"))["finalSolution"]
    assert exported["synthesizedBy"] == "agent-architect" and "model-broken" in exported["judgeFailure"]
