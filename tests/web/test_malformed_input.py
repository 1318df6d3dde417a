"""Property: whatever a client sends, the API answers 2xx-4xx, never 500, with a one-line error.

Hypothesis sends every endpoint malformed versions of its fields: wrong types, missing and
unknown fields, huge and negative numbers, NaN, non-ASCII digits, lone surrogates, NUL bytes,
paths. The app is the web tests' own (:func:`tests.web.conftest.serve`, the scripted model:
no LLM is called); Hypothesis runs in a worker thread and each request runs on the app's
event loop, so debates a valid example starts go on running beside it. Examples are few and
derandomized, so the file runs in seconds and the same way every time.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import httpx2 as httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.web.conftest import Api

Send = Callable[..., httpx.Response]

NASTY_TEXT = (
    "",
    " ",
    "\ud800",
    "ok \udfff",
    "\x00",
    "²",
    "١٢",
    "１２",
    "-1",
    "1.5",
    "1e400",
    "NaN",
    str(10**30),
    str(2**63),
    "../../etc/passwd",
    "/etc/passwd",
    "%00",
    "a" * 300,
)
"""Text that broke (or might break) a handler: surrogates, NUL, digits ``int`` refuses, numbers SQLite refuses."""
NUMBERS = st.one_of(
    st.integers(min_value=-(10**40), max_value=10**40),
    st.sampled_from([0, -1, 2**63, 2**64, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
)
TEXT = st.one_of(st.sampled_from(NASTY_TEXT), st.text(max_size=12))
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, TEXT)
JUNK = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
    max_leaves=6,
)
"""Any JSON value, nested a little."""
HEADER_TEXT = st.one_of(
    st.sampled_from([text for text in NASTY_TEXT if (text.isprintable() and text.isascii()) or text == "²"]),
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"), max_size=24),
)
"""What a header can carry (HTTP header values are bytes, read as Latin-1)."""
SETTINGS = settings(
    max_examples=50,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)


@pytest.fixture(autouse=True)
def no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """No example may reach a real model: without keys or endpoints, a body naming a real provider is a 422.

    (The only provider a request can use is then the scripted one the app is built with; the embedded
    local model is never named.)"""
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_BASE_URL")):
            monkeypatch.delenv(name)


def body_of(value: Any) -> bytes:
    """``value`` as a client may send it: ASCII JSON, a lone surrogate as its escape, NaN as ``NaN``."""
    return json.dumps(value).encode("ascii")


def check(response: httpx.Response) -> None:
    """The property: no 5xx, a JSON ``{error, detail}`` of one line for every refusal, ``nosniff`` always."""
    assert response.status_code < 500, (response.request.method, response.request.url, response.text)
    assert response.headers.get("x-content-type-options") == "nosniff"
    if response.status_code >= 400:
        body = response.json()
        assert isinstance(body["error"], str) and isinstance(body["detail"], str)
        assert body["detail"] and "\n" not in body["detail"], body


def probe(serve: Callable[..., None], run: Callable[[Send, str], None]) -> None:
    """``run(send, debate_id)`` in a worker thread, ``send`` making each request on the app's loop.

    ``debate_id`` is a completed debate's, so streams and downloads reach the store with the values sent."""

    async def scenario(api: Api) -> None:
        loop = asyncio.get_running_loop()
        debate_id = await api.start()
        await api.finished(debate_id)

        def send(method: str, url: str, **kwargs: Any) -> httpx.Response:
            request = api.client.request(method, url, **kwargs)
            response = asyncio.run_coroutine_threadsafe(request, loop).result(timeout=60)
            check(response)
            return response

        await asyncio.to_thread(run, send, debate_id)

    serve(scenario)


def ids(debate_id: str) -> st.SearchStrategy[str]:
    """A debate id for a path: the real one, unknown ones, or any text a URL can carry."""
    path_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=16).filter(lambda t: t.strip("."))
    return st.one_of(st.just(debate_id), st.just("deb-nope"), path_text)


def mostly(plausible: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``plausible`` two times in three, else any JSON value: near-valid bodies reach the deeper checks."""
    return st.one_of(plausible, plausible, JUNK)


ROLES = st.one_of(st.sampled_from(("architect", "kiss", "security", "generalist", "nobody")), TEXT)
AGENT = st.fixed_dictionaries(
    {"role": mostly(ROLES)},
    optional={
        "id": mostly(st.one_of(st.sampled_from(("agent-architect", "agent-performance")), TEXT)),
        "name": mostly(TEXT),
        "provider": mostly(st.one_of(st.sampled_from(("scripted", "nope")), TEXT)),
        "model": mostly(TEXT),
        "temperature": mostly(NUMBERS),
        "bogus": JUNK,
    },
)
SPEAKER = st.fixed_dictionaries(
    {"id": mostly(TEXT), "role": mostly(ROLES), "provider": mostly(st.just("scripted"))},
    optional={
        "name": mostly(TEXT),
        "model": mostly(TEXT),
        "baseUrl": mostly(st.sampled_from(("http://127.0.0.1:1/v1", "/etc/passwd"))),
        "systemPromptPath": mostly(TEXT),
        "apiKey": TEXT,
    },
)
CONFIG = st.fixed_dictionaries(
    {},
    optional={
        "agents": mostly(st.lists(SPEAKER, max_size=2)),
        "judge": mostly(SPEAKER),
        "debate": mostly(
            st.fixed_dictionaries(
                {},
                optional={"rounds": mostly(NUMBERS), "format": mostly(TEXT), "context": JUNK, "bogus": JUNK},
            )
        ),
        "limits": JUNK,
    },
)
NEW_DEBATE = mostly(
    st.fixed_dictionaries(
        {"problem": mostly(st.one_of(st.just("Design a cache"), TEXT))},
        optional={
            "roles": mostly(st.lists(ROLES, max_size=3)),
            "agents": mostly(st.lists(AGENT, max_size=3)),
            "format": mostly(st.one_of(st.sampled_from(("critique-refine", "vote", "nope")), TEXT)),
            "rounds": mostly(NUMBERS),
            "termination": mostly(
                st.fixed_dictionaries(
                    {"type": mostly(st.sampled_from(("fixed", "convergence", "consensus")))},
                    optional={"threshold": mostly(NUMBERS)},
                )
            ),
            "clarify": mostly(st.booleans()),
            "config": mostly(CONFIG),
            "bogus": JUNK,
        },
    )
)
"""``POST /api/debates`` bodies: every field present or not, plausible or anything."""


def test_starting_a_debate_never_answers_500(serve: Callable[..., None]) -> None:
    def run(send: Send, debate_id: str) -> None:
        @SETTINGS
        @given(body=NEW_DEBATE)
        @example(body={"problem": "Design a cache \ud800"})
        @example(body={"problem": "Design a cache", "rounds": 10**30})
        @example(body={"problem": "Design a cache", "termination": {"type": "consensus", "threshold": 2**64}})
        @example(body={"problem": "Design a cache", "agents": [{"role": "x", "temperature": float("nan")}]})
        @example(body={"problem": "Design a cache", "config": {"agents": [{"name": "\udfff"}]}})
        def once(body: Any) -> None:
            send("POST", "/api/debates", content=body_of(body), headers={"Content-Type": "application/json"})

        once()

    probe(serve, run)


def test_signing_in_and_answering_never_answer_500(serve: Callable[..., None]) -> None:
    def run(send: Send, debate_id: str) -> None:
        @SETTINGS
        @given(
            token=mostly(TEXT),
            answers=mostly(st.dictionaries(st.one_of(st.just("q1"), TEXT), mostly(TEXT), max_size=2)),
            target=ids(debate_id),
            whole=st.booleans(),
        )
        @example(token="\ud800", answers={"q1": "\ud800"}, target=debate_id, whole=False)
        def once(token: Any, answers: Any, target: str, whole: bool) -> None:
            json_header = {"Content-Type": "application/json"}
            session = token if whole else {"token": token}
            send("POST", "/api/session", content=body_of(session), headers=json_header)
            reply = answers if whole else {"answers": answers}
            path = f"/api/debates/{quote(target, safe='')}/answers"
            send("POST", path, content=body_of(reply), headers=json_header)

        once()

    probe(serve, run)


def test_reading_and_steering_never_answer_500(serve: Callable[..., None]) -> None:
    def run(send: Send, debate_id: str) -> None:
        @SETTINGS
        @given(
            target=ids(debate_id),
            action=st.sampled_from(["", "/export", "/report", "/pause", "/resume", "/cancel", "/nothing"]),
            params=st.dictionaries(st.sampled_from(("status", "limit", "cursor", "x")), TEXT, max_size=3),
        )
        def once(target: str, action: str, params: dict[str, str]) -> None:
            method = "POST" if action in ("/pause", "/resume", "/cancel") else "GET"
            send(method, f"/api/debates/{quote(target, safe='')}{action}")
            send("GET", "/api/debates", params=_sendable(params))

        once()

    probe(serve, run)


def test_the_event_stream_never_answers_500(serve: Callable[..., None]) -> None:
    def run(send: Send, debate_id: str) -> None:
        @SETTINGS
        @given(target=ids(debate_id), last_event_id=st.one_of(st.none(), HEADER_TEXT), after=st.one_of(st.none(), TEXT))
        @example(target=debate_id, last_event_id="²", after=None)
        @example(target=debate_id, last_event_id=None, after="²")
        @example(target=debate_id, last_event_id=str(10**30), after=None)
        @example(target=debate_id, last_event_id=None, after=str(10**30))
        @example(target=debate_id, last_event_id=f"{10**30}.{10**30}", after=None)
        def once(target: str, last_event_id: str | None, after: str | None) -> None:
            headers = {"Last-Event-ID": last_event_id.encode("latin-1")} if last_event_id is not None else {}
            params = _sendable({"after": after} if after is not None else {})
            send("GET", f"/api/debates/{quote(target, safe='')}/events", headers=headers, params=params)

        once()

    probe(serve, run)


def _sendable(params: dict[str, str]) -> dict[str, str]:
    """Query values a URL can carry (a lone surrogate cannot be percent-encoded; a client cannot send it)."""
    return {key: value.encode("utf-8", "replace").decode("utf-8") for key, value in params.items()}
