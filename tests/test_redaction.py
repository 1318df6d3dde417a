"""Keys and tokens never reach the terminal: error bodies are redacted before they are shown."""

from __future__ import annotations

import io

import pytest

from dialectic.cli.console import Terminal
from dialectic.core.config import AgentConfig
from dialectic.core.redaction import REDACTED, redact, secret_values
from dialectic.llm.registry import resolve_settings

OPENAI_KEY = "sk-proj-Ab12Cd34Ef56Gh78Ij90"


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "plain words token value")


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (f"Incorrect API key provided: {OPENAI_KEY}.", "Incorrect API key provided: "),
        ("key sk-ant-api03-abcdefghijkl rejected", "key  rejected"),
        ("request had Authorization: Bearer abc.def-ghi_jkl", "request had Authorization: "),
        ("headers: {'x-api-key': 'k-1234-5678'}", "headers: {'x-api-key': '"),
        ('{"api_key": "hunter2hunter2", "model": "m"}', '"model": "m"'),
        ("see https://host/v1?token=abcdef123&x=1", "see https://host/v1?token="),
        ("got Bearer eyJhbGciOiJIUzI1NiJ9.payload", "got Bearer "),
        ("trace 0123456789abcdef0123456789abcdef01 end", "trace  end"),
        ("opaque QmFzZTY0VG9rZW5XaXRoTWl4ZWQxMjM0NTY3OA== here", "opaque  here"),
        ("the service said: plain words token value", "the service said: "),
    ],
)
def test_secrets_are_replaced(text: str, kept: str) -> None:
    shown = redact(text)
    assert REDACTED in shown
    assert kept in shown.replace(REDACTED, "")
    for secret in (OPENAI_KEY, "abcdefghijkl", "abc.def-ghi_jkl", "k-1234-5678", "hunter2hunter2", "abcdef123"):
        assert secret not in shown


@pytest.mark.parametrize(
    "text",
    [
        "openai: rate limited (429) on model gpt-4o-mini",
        "Debate deb-20250101-120000-ABCD saved to /tmp/pytest-of-root/test_sigterm_and_sighup_save_the0/home/x.sqlite3",
        "critique: Performance Engineer → System Architect done (812 tokens, 1.2s)",
        "model qwen2.5-coder-1.5b-instruct-q4_k_m.gguf not found",
        "request id 0f8fad5b-d9cb-469f-a165-70867728950e",
        "max_tokens must be at least 1",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_configured_api_key_env_values_are_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEAM_LLM_CREDENTIAL", "correcthorsebattery")
    assert "correcthorsebattery" not in secret_values()
    agent = AgentConfig(id="a", name="A", role="architect", apiKeyEnv="TEAM_LLM_CREDENTIAL")
    resolve_settings(agent)
    assert "correcthorsebattery" in secret_values()
    assert redact("the server echoed correcthorsebattery") == f"the server echoed {REDACTED}"


def test_short_values_are_not_searched_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert redact("keep every k in this line") == "keep every k in this line"


def test_every_terminal_line_is_redacted() -> None:
    stream = io.StringIO()
    Terminal(stream).line(f"critique failed: bad request (400): your key {OPENAI_KEY} is invalid")
    assert stream.getvalue() == f"critique failed: bad request (400): your key {REDACTED} is invalid\n"


def test_provider_errors_are_redacted_when_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a stored contribution's error says can never hold a key the server echoed."""
    from dialectic.core.errors import BadRequest
    from dialectic.core.redaction import note_key_env

    monkeypatch.setenv("MY_PROXY_CREDENTIAL", "proxy-secret-value-123")
    note_key_env("MY_PROXY_CREDENTIAL")
    error = BadRequest(
        "openai: bad request (400): key proxy-secret-value-123 rejected",
        detail="Authorization: Bearer sk-abcdef0123456789",
    )
    assert "proxy-secret-value-123" not in error.message and REDACTED in error.message
    assert error.detail is not None and "sk-abcdef0123456789" not in error.detail
