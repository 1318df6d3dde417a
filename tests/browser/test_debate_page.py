"""The page a person reads: a debate opens on its outcome, is titled by its problem, folds its rounds, moves
focus without a ring, and shows times as ``dialectic show`` and ``dialectic list`` show them on the server."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import BROWSER_TZ, SERVER_TZ, Served
from tests.browser.test_page import start_from_the_form, wait_until_done

TITLE = "Choose a queue for the billing events"
PROBLEM = f"{TITLE}\n\nAbout 2,000 events a second; the order per customer matters.\nExactly once is not required."
VIEWPORT_HEIGHT = 900


def cli(served: Served, *args: str) -> str:
    """What the ``dialectic`` command prints, run on the server's machine (same store, same zone)."""
    executable = str(Path(sys.executable).parent / "dialectic")
    result = subprocess.run(
        [executable, *args, "--store", str(served.root / "store")],
        cwd=served.root,
        env=served.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout


def show_field(shown: str, name: str) -> str:
    """A field of ``dialectic show``'s summary (``Usage    6 calls · …``)."""
    match = re.search(rf"^{name} +(.+)$", shown, re.MULTILINE)
    assert match, shown
    return match.group(1)


def shown_times(served: Served, debate_id: str) -> tuple[str, str]:
    """``Created  2025-06-01 14:03:22   Updated 2025-06-01 14:03:40`` of ``dialectic show``: the two times."""
    line = show_field(cli(served, "show", debate_id), "Created")
    match = re.fullmatch(r"(\S+ \S+) +Updated (\S+ \S+)", line)
    assert match, line
    return match.group(1), match.group(2)


@pytest.fixture(scope="module")
def completed(browser_context: Any, served: Served) -> Iterator[str]:
    """A debate in the ``vote`` format (a vote, a verdict and a solution), started on the page and completed."""
    page = browser_context.new_page()
    page.goto(served.url + "#/new")
    page.wait_for_selector(".agent-row")
    page.select_option("#format", "vote")
    page.fill("#problem", PROBLEM)
    page.click("#new-debate button[type=submit]")
    page.wait_for_url(re.compile(r"#/debates/deb-"))
    debate_id = str(page.url.rsplit("/", 1)[-1])
    wait_until_done(page)
    page.close()
    yield debate_id


def open_from_the_list(page: Any, served: Served, debate_id: str, *, keyboard: bool = False) -> None:
    page.goto(served.url)
    link = page.locator(f'#debates a[href="#/debates/{debate_id}"]')
    if keyboard:
        link.wait_for()
        for _ in range(30):  # Tab to it, as a keyboard user does
            page.keyboard.press("Tab")
            if link.evaluate("a => a === document.activeElement"):
                break
        else:
            pytest.fail("Tab never reached the debate's link")
        page.keyboard.press("Enter")
    else:
        link.click()
    page.wait_for_selector("#debate-status.completed")
    page.wait_for_selector("#outcome .solution")


def box(page: Any, selector: str) -> dict[str, float]:
    found: dict[str, float] | None = page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not shown"
    return found


def test_a_completed_debate_opens_on_its_outcome(page: Any, served: Served, completed: str, shots: Path) -> None:
    open_from_the_list(page, served, completed)
    page.screenshot(path=str(shots / "debate-outcome.png"))
    state = served.get(f"/api/debates/{completed}")
    assert state["finalSolution"] and state["verdict"] and state["vote"]
    first_round = box(page, "#debate-rounds details.round")
    for part in ("#outcome", "#outcome-facts", "#outcome .solution", "#outcome .verdict", "#outcome .vote"):
        assert box(page, part)["y"] < first_round["y"], f"{part} is below the first round"
    assert page.evaluate("window.scrollY") == 0
    facts = box(page, "#outcome-facts")
    assert facts["y"] + facts["height"] <= VIEWPORT_HEIGHT  # cost, tokens, verdict and vote in the first screen
    assert box(page, "#outcome .solution")["y"] < VIEWPORT_HEIGHT
    assert page.locator("#outcome-pending").is_hidden()

    names = {a["id"]: a["name"] for a in state["agents"]}
    tally = sorted(state["vote"]["tally"].items(), key=lambda item: -item[1])
    for agent_id, votes in tally:
        assert f"{names[agent_id]} {votes:g}" in page.inner_text("#debate-vote")
    assert f"quality {state['verdict']['quality']} / 100" in page.inner_text("#debate-verdict")
    withheld = state["finalSolution"].get("confidenceWithheld")
    assert withheld, "the scripted judge's model has no measured calibration: its stated confidence is not shown"
    assert page.inner_text("#debate-confidence") == f"not shown ({withheld})"

    # the usage as ``dialectic show`` writes it, from the same ledger: calls, tokens, and a cost in dollars
    cost = page.inner_text("#debate-cost")
    assert cost.startswith("$") and cost != "$0.00"
    tokens = page.inner_text("#debate-tokens")
    calls = page.inner_text("#debate-calls")
    shown = f"{calls} calls · {tokens.replace(' (', ' tokens (', 1)} · cost {cost}"
    assert shown == show_field(cli(served, "show", completed), "Usage")


def test_its_title_is_the_problem_not_the_id(page: Any, served: Served, completed: str) -> None:
    open_from_the_list(page, served, completed)
    heading = page.inner_text("#debate-title")
    assert heading == TITLE and completed not in heading
    assert page.title() == f"{TITLE} · dialectic"
    assert page.locator("h1:visible").count() == 1
    assert page.inner_text("#debate-id") == completed  # still there, small, below
    assert page.locator("#debate-problem-full").is_visible()  # the rest of the problem, folded
    assert not page.locator("#debate-problem").is_visible()
    page.click("#debate-problem-full summary")
    assert "Exactly once is not required." in page.inner_text("#debate-problem")


def test_a_long_first_line_is_cut_as_the_list_cuts_it(page: Any, served: Served) -> None:
    long_line = "Decide " + " ".join(f"word{n}" for n in range(60))
    debate_id = start_from_the_form(page, served, problem=long_line)
    page.wait_for_function("() => document.querySelector('#debate-title').textContent.startsWith('Decide ')")
    heading = page.inner_text("#debate-title")
    assert heading.endswith("…") and len(heading) <= 140 and long_line.startswith(heading[:-1])
    assert page.title().endswith("… · dialectic") and len(page.title()) <= 60 + len(" · dialectic")
    wait_until_done(page)
    listed = [i for i in served.get("/api/debates")["items"] if i["id"] == debate_id]
    assert listed and listed[0]["problem"] == heading


def test_rounds_are_folded_and_open_on_a_click(page: Any, served: Served, completed: str) -> None:
    open_from_the_list(page, served, completed)
    rounds = page.locator("#debate-rounds details.round")
    assert rounds.count() >= 1
    assert page.evaluate("[...document.querySelectorAll('#debate-rounds details.round')].every(d => !d.open)")
    first = rounds.first
    summary = first.locator("summary")
    assert re.search(r"\d+ proposals?", summary.inner_text())  # what the round holds, folded
    assert not first.locator(".contribution").first.is_visible()
    summary.click()
    assert first.evaluate("d => d.open") and first.locator(".contribution").first.is_visible()
    summary.click()
    assert not first.evaluate("d => d.open") and not first.locator(".contribution").first.is_visible()
    summary.focus()  # and by keyboard
    page.keyboard.press("Enter")
    assert first.evaluate("d => d.open")


def test_a_folded_round_still_fills_while_the_debate_runs(page: Any, served: Served) -> None:
    start_from_the_form(page, served)
    page.wait_for_selector("#outcome-pending:not([hidden])")
    assert page.inner_text("#outcome-pending").startswith("Running")  # the outcome's place says how far it is
    first = page.locator("#debate-rounds details.round").first
    first.wait_for()
    assert first.evaluate("d => d.open")  # the round under way is open
    first.locator("summary").click()  # the reader folds it
    assert not first.evaluate("d => d.open")
    wait_until_done(page)
    page.wait_for_selector("#outcome .solution")
    assert not first.evaluate("d => d.open")  # the reader's choice holds
    assert first.locator(".contribution:not(.streaming)").count() == 6  # everything arrived, folded
    assert re.search(r"2 proposals · 2 critiques · 2 refinements", first.locator("summary").inner_text())
    assert page.locator("#outcome-pending").is_hidden()


@pytest.mark.parametrize("keyboard", [False, True], ids=["click", "keyboard"])
def test_no_focus_ring_frames_the_heading_after_a_navigation(
    page: Any, served: Served, completed: str, keyboard: bool
) -> None:
    open_from_the_list(page, served, completed, keyboard=keyboard)
    page.wait_for_function("() => document.activeElement && document.activeElement.id === 'debate-title'")
    focused = page.evaluate(
        """() => { const s = getComputedStyle(document.activeElement);
                   return { tag: document.activeElement.tagName, outline: s.outlineStyle, width: s.outlineWidth }; }"""
    )
    assert focused["tag"] == "H1"  # focus moved to the new view, for screen readers
    assert focused["outline"] == "none", focused
    page.keyboard.press("Tab")  # the next control still shows where the keyboard is
    ring = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert ring != "none"


def test_times_are_the_command_lines(page: Any, served: Served, completed: str) -> None:
    assert served.get("/api/options")["timeZone"]["name"] == SERVER_TZ
    open_from_the_list(page, served, completed)
    assert page.evaluate("Intl.DateTimeFormat().resolvedOptions().timeZone") == BROWSER_TZ
    created, updated = shown_times(served, completed)
    assert page.inner_text("#debate-created") == created
    assert page.inner_text("#debate-updated") == updated
    state = served.get(f"/api/debates/{completed}")
    assert page.get_attribute("#debate-created", "datetime") == state["createdAt"]
    assert SERVER_TZ in (page.get_attribute("#debate-created", "title") or "")

    # the list shows minutes, as ``dialectic list`` does
    page.goto(served.url)
    row = page.locator("#debates tbody tr", has=page.locator(f'a[href="#/debates/{completed}"]'))
    assert row.locator("time").inner_text() == created[: len("YYYY-MM-DD HH:MM")]
    listed = cli(served, "list")
    assert any(completed in line and updated[: len("YYYY-MM-DD HH:MM")] in line for line in listed.splitlines())


def test_a_zone_the_browser_does_not_know_falls_back_on_its_offset(page: Any, served: Served, completed: str) -> None:
    def unknown_zone(route: Any) -> None:
        response = route.fetch()
        body = response.json()
        body["timeZone"]["name"] = "Nowhere/Atlantis"
        route.fulfill(response=response, json=body)

    page.route("**/api/options", unknown_zone)
    open_from_the_list(page, served, completed)
    created, _ = shown_times(served, completed)
    assert page.inner_text("#debate-created") == created  # the offset now: right while the clocks do not change
    assert "UTC+0" in (page.get_attribute("#debate-created", "title") or "")
