"""Picking the panel on the page: the models the server's endpoints list, per agent and for the judge."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dialectic.testing.fake_server import FakeLLMServer
from tests.browser.conftest import Served, reply

LISTED = ("fake-model", "model-b", "model-c", "model-d")


@pytest.fixture(scope="module")
def llm_server() -> Iterator[FakeLLMServer]:
    """The fake server, listing four models on its ``/v1/models`` (the configuration names only the first)."""
    with FakeLLMServer(reply, models=LISTED) as server:
        yield server


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
