"""Browser fixtures: ``dialectic serve`` as a user starts it, the fake OpenAI server, and headless Chromium.

Playwright drives Debian's ``chromium`` by its path (Playwright's own browser download is not
used). Without a browser the tests skip, except where ``DIALECTIC_REQUIRE_BROWSER`` is set (CI):
there a missing browser fails them. Screenshots of the main views go to
``$DIALECTIC_SCREENSHOTS`` when it is set (to look at them), else to the test's temporary directory.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script, default_reply
from dialectic.testing.fake_server import FakeLLMServer

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HOSTILE = "<script>window.__owned = true; alert('owned')</script>"
SERVER_TZ = "Europe/Paris"
"""The zone ``dialectic serve`` (and the command line beside it) runs in: not the browser's."""
BROWSER_TZ = "Pacific/Auckland"
"""The browser's zone: times on the page must not follow it."""
PRICE = {"input": 3.0, "output": 15.0}
"""Dollars per million tokens of the fake model, so that a debate has a cost."""
STARTUP_LINE = "Serving on "


def chromium_path() -> str | None:
    return os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("DIALECTIC_REQUIRE_BROWSER"):
        pytest.fail(f"the browser tests must run here, but {reason}")
    pytest.skip(reason)


def reply(request: CompletionRequest) -> Script:
    """Replies long enough to watch them stream, each with a script tag in it (which must stay text)."""
    if request.json_schema is not None:
        return default_reply(request)
    words = " ".join(f"point{n}" for n in range(30))
    return f"{default_reply(request).text}\n\nThe limiter {HOSTILE} keeps **one bucket** per client. {words}"


@dataclass
class Served:
    url: str
    root: Path
    process: subprocess.Popen[str]
    env: dict[str, str]

    def text(self, path: str) -> str:
        with urllib.request.urlopen(self.url.rstrip("/") + path, timeout=30) as response:
            body: str = response.read().decode("utf-8")
        return body

    def get(self, path: str) -> Any:
        return json.loads(self.text(path))


@pytest.fixture(scope="module")
def llm_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(reply, chunk_delay_s=0.02, latency_s=0.05) as server:
        yield server


@pytest.fixture(scope="module")
def served_debate() -> dict[str, Any]:
    """The ``debate`` section of the served configuration (a test module may override it)."""
    return {"rounds": 1}


@pytest.fixture(scope="module")
def served(
    llm_server: FakeLLMServer, served_debate: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    """``dialectic serve`` on a free port, its agents on the fake server; stopped with SIGTERM."""
    root = tmp_path_factory.mktemp("served")
    endpoint = {"provider": "openai", "baseUrl": llm_server.openai_base_url, "model": "fake-model"}
    config = {
        "agents": [
            {"id": "agent-architect", "name": "System Architect", "role": "architect", **endpoint},
            {"id": "agent-kiss", "name": "Simplicity Advocate", "role": "kiss", **endpoint},
        ],
        "judge": {"id": "judge-main", "name": "Technical Judge", "role": "generalist", **endpoint},
        "debate": served_debate,
        "pricing": {"openai/fake-model": PRICE},
    }
    (root / "debate-config.json").write_text(json.dumps(config), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "DIALECTIC_TOKEN"))}
    env.update(OPENAI_API_KEY="test-key", DIALECTIC_HOME=str(root / "home"), TZ=SERVER_TZ)
    executable = str(Path(sys.executable).parent / "dialectic")
    process = subprocess.Popen(
        [executable, "serve", "--port", "0", "--store", str(root / "store")],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=(root / "serve.stderr").open("w"),
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith(STARTUP_LINE):
        process.kill()
        pytest.fail(f"dialectic serve did not start: {line!r} {(root / 'serve.stderr').read_text()}")
    url = line[len(STARTUP_LINE) :].split()[0]
    yield Served(url, root, process, env)
    process.send_signal(signal.SIGTERM)
    # uvicorn shuts down gracefully, then ends by the signal it caught (exit 143 in a shell)
    assert process.wait(timeout=30) == -signal.SIGTERM
    assert "Traceback" not in (root / "serve.stderr").read_text()


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    path = chromium_path()
    if path is None:
        _unavailable("chromium is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[dev]')")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=path,
            headless=True,
            args=CHROMIUM_ARGS,
            accept_downloads=True,
            viewport={"width": 1200, "height": 900},
            timezone_id=BROWSER_TZ,
        )
        context.set_default_timeout(30_000)
        yield context
        context.close()


@pytest.fixture
def page(browser_context: Any) -> Iterator[Any]:
    page = browser_context.new_page()
    page.dialogs = []  # type: ignore[attr-defined]
    page.errors = []  # type: ignore[attr-defined]
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    yield page
    assert page.errors == [], page.errors
    page.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    chosen = os.environ.get("DIALECTIC_SCREENSHOTS")
    directory = Path(chosen) if chosen else tmp_path
    directory.mkdir(parents=True, exist_ok=True)
    return directory
