"""A seat a person plays, in the browser: chosen on the new-debate form, its turn written in a form in the
seat's card (which shows what the seat is asked), and the debate completing with the person's words."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.browser.conftest import Served
from tests.browser.test_page import wait_until_done

PROBLEM = "Pick a store for web sessions"
TURN = "Keep sessions in Redis with a one-hour TTL; sign the cookie."


def test_a_person_writes_a_seats_turn_in_its_card(page: Any, served: Served, shots: Path) -> None:
    page.goto(served.url + "#/new")
    page.wait_for_selector(".agent-row")
    page.select_option("#format", "free-form")  # one turn per seat and round
    page.fill("#problem", PROBLEM)
    page.locator('.agent-row[data-role="kiss"] select').select_option("human")
    page.click("#new-debate button[type=submit]")
    page.wait_for_url(re.compile(r"#/debates/deb-"))
    debate_id = str(page.url.rsplit("/", 1)[-1])

    form = page.locator(".card", has_text="Simplicity Advocate").locator(".turn-form")
    form.locator("textarea").wait_for()
    page.wait_for_selector("#debate-status.suspended")
    assert "Simplicity Advocate to write a turn" in page.inner_text("#outcome-pending")
    form.locator("summary").click()
    assert PROBLEM in form.locator("pre.prompt.user").inner_text()  # what the seat is asked
    assert "System Architect" in form.locator("pre.prompt.user").inner_text()  # the turn before it
    page.screenshot(path=str(shots / "human-turn.png"), full_page=True)

    form.locator("button[type=submit]").click()
    assert form.locator(".field-error").inner_text() == "Write the turn first."
    form.locator("textarea").fill(TURN)
    form.locator("button[type=submit]").click()
    wait_until_done(page)
    page.wait_for_selector(".solution")
    written = page.locator(".card", has_text="Simplicity Advocate").locator(".contribution").first
    assert TURN in written.inner_text()
    assert "written by a person" in written.locator(".meta").inner_text()
    assert page.locator(".turn-form").count() == 0
    state = served.get(f"/api/debates/{debate_id}")
    [turn] = [c for r in state["rounds"] for c in r["contributions"] if c["agentId"] == "agent-kiss"]
    assert turn["content"] == TURN and turn["metadata"]["playedBy"] == "person"
