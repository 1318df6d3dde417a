"""The page in headless Chromium, against ``dialectic serve`` and the fake OpenAI server, as a user uses it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.browser.conftest import HOSTILE, Served

PROBLEM = "Design a rate limiter for a public API"


def start_from_the_form(page: Any, served: Served, *, clarify: bool = False, problem: str = PROBLEM) -> str:
    page.goto(served.url + "#/new")
    page.wait_for_selector(".agent-row")
    page.fill("#problem", problem)
    if clarify:
        page.check("#clarify")
    page.click("#new-debate button[type=submit]")
    page.wait_for_url(re.compile(r"#/debates/deb-"))
    return str(page.url.rsplit("/", 1)[-1])


def wait_until_done(page: Any) -> None:
    page.wait_for_selector("#debate-status.completed", timeout=60_000)


def shown_contributions(page: Any) -> list[str]:
    """Every saved contribution on the page: agent, kind, text."""
    script = """() => [...document.querySelectorAll('#debate-rounds .card')].flatMap(card =>
        [...card.querySelectorAll('.contribution:not(.streaming)')].map(c =>
            card.querySelector('h3').textContent + '|' + c.querySelector('h4').textContent + '|' +
            c.querySelector('.body, .error').textContent))"""
    result: list[str] = page.evaluate(script)
    return result


def test_a_debate_started_from_the_form_streams_and_shows_a_script_as_text(
    page: Any, served: Served, shots: Path
) -> None:
    debate_id = start_from_the_form(page, served)
    streaming = page.wait_for_selector(".contribution.streaming .body")
    page.wait_for_function(
        "el => el.isConnected && el.textContent.split(' ').length >= 5", arg=streaming
    )  # words arrive one by one, before the reply is whole
    page.screenshot(path=str(shots / "live-streaming.png"), full_page=True)
    wait_until_done(page)
    page.wait_for_selector(".solution")
    page.screenshot(path=str(shots / "completed.png"), full_page=True)
    state = served.get(f"/api/debates/{debate_id}")
    saved = [c for r in state["rounds"] for c in r["contributions"]]
    assert len(shown_contributions(page)) == len(saved) == 6
    architect = page.locator(".card", has_text="System Architect").first.locator(".contribution").first
    assert HOSTILE in architect.inner_text()  # shown as text
    assert page.evaluate("window.__owned === undefined")
    assert page.evaluate("document.querySelectorAll('#debate-rounds script').length") == 0
    assert page.dialogs == []  # type: ignore[attr-defined]
    assert page.locator(".card .contribution h4", has_text="Critique → Simplicity Advocate").count() == 1
    assert re.match(r"\d[\d,]* \(", page.inner_text("#debate-tokens"))


def test_a_reload_mid_debate_shows_everything_once(page: Any, served: Served, shots: Path) -> None:
    debate_id = start_from_the_form(page, served)
    page.wait_for_selector(".contribution:not(.streaming)")  # some of it is saved, the rest is under way
    page.reload()
    page.wait_for_selector("#debate-rounds .card")
    page.screenshot(path=str(shots / "after-reload.png"), full_page=True)
    wait_until_done(page)
    page.wait_for_selector(".solution")
    shown = shown_contributions(page)
    state = served.get(f"/api/debates/{debate_id}")
    saved = [c for r in state["rounds"] for c in r["contributions"]]
    assert len(shown) == len(saved) and len(set(shown)) == len(shown)
    assert page.locator(".contribution.streaming").count() == 0
    assert page.locator(".solution").count() == 1


def test_pause_then_resume(page: Any, served: Served, shots: Path) -> None:
    debate_id = start_from_the_form(page, served)
    page.wait_for_selector(".contribution.streaming")
    page.click("#btn-pause")
    page.wait_for_selector("#debate-status.paused")
    page.screenshot(path=str(shots / "paused.png"), full_page=True)
    assert served.get(f"/api/debates/{debate_id}")["status"] == "paused"
    assert page.is_visible("#btn-resume") and not page.is_visible("#btn-pause")
    page.click("#btn-resume")
    wait_until_done(page)
    assert len(shown_contributions(page)) == 6


def test_clarifying_questions_are_answered_on_the_page(page: Any, served: Served, shots: Path) -> None:
    start_from_the_form(page, served, clarify=True)
    asked: set[str] = set()
    for _ in range(4):  # the scripted agents ask follow-ups, up to three times
        page.wait_for_selector("#questions:not([hidden]) textarea, #debate-status.completed")
        if page.is_visible("#debate-status.completed"):
            break
        ids = page.eval_on_selector_all("#question-fields textarea", "fields => fields.map(f => f.id)")
        assert not set(ids) & asked, "a question was asked twice"
        if not asked:
            page.screenshot(path=str(shots / "questions.png"), full_page=True)
        asked |= set(ids)
        for field in page.query_selector_all("#question-fields textarea"):
            field.fill("Around 1,000 requests a second, per client.")
        page.click("#answers-form button[type=submit]")
        page.wait_for_function(
            """ids => document.querySelector('#debate-status.completed') ||
                     ![...document.querySelectorAll('#question-fields textarea')].some(f => ids.includes(f.id))""",
            arg=ids,
        )
    wait_until_done(page)
    assert asked
    assert page.locator("#answered-list dd", has_text="Around 1,000 requests a second").count() == len(asked)


def test_both_downloads_are_the_servers_files(page: Any, served: Served, tmp_path: Path) -> None:
    debate_id = start_from_the_form(page, served)
    wait_until_done(page)
    with page.expect_download() as exported:
        page.click("#dl-export")
    saved = Path(tmp_path / "export.json")
    exported.value.save_as(saved)
    assert exported.value.suggested_filename == f"{debate_id}.json"
    assert json.loads(saved.read_text(encoding="utf-8"))["id"] == debate_id
    assert saved.read_text(encoding="utf-8") == served.text(f"/api/debates/{debate_id}/export")
    with page.expect_download() as report:
        page.click("#dl-report")
    assert report.value.suggested_filename == f"{debate_id}.md"
    report.value.save_as(tmp_path / "report.md")
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == served.text(f"/api/debates/{debate_id}/report")


def test_a_validation_error_shows_by_its_field(page: Any, served: Served, shots: Path) -> None:
    page.goto(served.url + "#/new")
    page.wait_for_selector(".agent-row")
    assert page.input_value("#max-answers") == "5"  # the server's adaptive budget
    page.fill("#rounds", "0")
    page.fill("#max-answers", "99")
    page.click("#new-debate button[type=submit]")
    page.wait_for_selector("#error-problem:not([hidden])")
    assert page.inner_text("#error-problem") == "the problem is empty"
    assert page.inner_text("#error-rounds") == "rounds must be at least 1 (got 0)"
    assert page.inner_text("#error-maxAnswers") == "maxAnswers must be between 2 and 64 (got 99)"
    page.screenshot(path=str(shots / "form-errors.png"), full_page=True)


def test_the_list_filters_and_works_narrow_and_by_keyboard(page: Any, served: Served, shots: Path) -> None:
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(served.url)
    page.wait_for_selector("#debates tbody tr")
    page.screenshot(path=str(shots / "list-narrow.png"), full_page=True)
    rows = page.locator("#debates tbody tr").count()
    assert rows >= 1
    page.select_option("#status-filter", "paused")
    page.wait_for_function("document.querySelectorAll('#debates tbody tr').length === 0")
    page.select_option("#status-filter", "completed")
    page.wait_for_selector("#debates tbody tr")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    page.keyboard.press("Tab")  # the skip link
    page.keyboard.press("Tab")  # the brand
    page.keyboard.press("Tab")  # Debates
    page.keyboard.press("Tab")  # New debate
    page.keyboard.press("Enter")
    page.wait_for_selector("#view-new:not([hidden])")
    assert page.evaluate("document.activeElement.id") == "problem"
    page.screenshot(path=str(shots / "form-narrow.png"), full_page=True)
