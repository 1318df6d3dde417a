"""Post-debate hooks (:mod:`dialectic.reporting.hooks`): the settings, the payload, the signature, delivery with
retries on a virtual clock against a real receiver on 127.0.0.1, the command, and the Python API firing them."""

from __future__ import annotations

import json
import os
import select
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from dialectic.core.config import HookSettings, SystemConfig, WebhookTarget
from dialectic.core.domain import DebateState, Solution, Verdict
from dialectic.core.errors import ConfigError
from dialectic.front.debate import Debate
from dialectic.loading.client_config import check_settings
from dialectic.reporting.hooks import (
    SIGNATURE_HEADER,
    SUMMARY_CHARS,
    deliver,
    finish_command,
    fire,
    hook_payload,
    run_command,
    signature,
    start_command,
    verify_signature,
    wait_pending,
)
from dialectic.testing.harness import make_config
from tests.hook_receiver import SECRET, HookReceiver, closed_port_url


class VirtualClock:
    """``time.monotonic`` and ``time.sleep`` for :func:`deliver`: sleeping advances the clock, instantly."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def finished(status: str = "completed", **fields: object) -> DebateState:
    return DebateState.model_validate({"id": "deb-1", "problem": "Design a rate limiter", "status": status, **fields})


# --- settings ---------------------------------------------------------------------------------------------


def test_hooks_are_read_in_camel_case_and_a_bare_string_is_a_url() -> None:
    config = SystemConfig.model_validate(
        {
            "hooks": {
                "onComplete": ["https://example.com/a", {"url": "http://127.0.0.1:9/b", "secretEnv": "B_SECRET"}],
                "onCompleteCommand": "notify-send done",
                "maxAttempts": 2,
                "backoffMs": 10,
                "waitMs": 100,
                "commandTimeoutMs": 50,
            }
        }
    )
    hooks = config.hooks
    assert [t.url for t in hooks.on_complete] == ["https://example.com/a", "http://127.0.0.1:9/b"]
    assert [t.secret_env for t in hooks.on_complete] == ["DIALECTIC_HOOK_SECRET", "B_SECRET"]
    assert (hooks.max_attempts, hooks.backoff_ms, hooks.wait_ms, hooks.command_timeout_ms) == (2, 10, 100, 50)
    assert hooks.active
    assert config.to_json_dict()["hooks"]["onComplete"][1] == {"url": "http://127.0.0.1:9/b", "secretEnv": "B_SECRET"}
    assert not SystemConfig().hooks.active


@pytest.mark.parametrize("url", ["ftp://example.com", "example.com/hook", "http://", ""])
def test_a_webhook_url_is_http_or_https(url: str) -> None:
    with pytest.raises(ValidationError):
        WebhookTarget.model_validate(url)


def test_a_client_of_the_server_may_not_set_hooks() -> None:
    with pytest.raises(ConfigError, match="hooks"):
        check_settings({"hooks": {"onComplete": ["http://127.0.0.1:1/"]}})


# --- payload and signature --------------------------------------------------------------------------------


def test_the_payload_carries_a_summary_the_verdict_usage_and_links() -> None:
    state = finished(
        final_solution=Solution(description="x" * 2000),
        verdict=Verdict(summary="A wins", winner_id="agent-a"),
    )
    payload = hook_payload(state, {"export": "/tmp/out.json"})
    assert payload["debateId"] == "deb-1"
    assert payload["status"] == "completed"
    assert payload["problem"] == "Design a rate limiter"
    assert len(payload["solutionSummary"]) == SUMMARY_CHARS
    assert payload["verdict"]["summary"] == "A wins" and payload["verdict"]["winnerId"] == "agent-a"
    assert payload["usage"]["calls"] == 0 and "costUsd" in payload["usage"]
    assert payload["links"] == {"export": "/tmp/out.json"}
    json.dumps(payload)  # all of it JSON


def test_a_failed_debate_says_why_without_a_key() -> None:
    payload = hook_payload(finished("failed", error="provider said: bad key sk-abcdefghijklmnopqrstuvwxyz123456"))
    assert payload["status"] == "failed"
    assert payload["solutionSummary"] is None and payload["verdict"] is None
    assert "sk-abcdefghijklmnopqrstuvwxyz123456" not in payload["error"]


def test_the_signature_is_the_hmac_sha256_of_the_raw_body() -> None:
    import hashlib
    import hmac

    body = b'{"a": 1}'
    assert signature(body, "s") == "sha256=" + hmac.new(b"s", body, hashlib.sha256).hexdigest()
    assert verify_signature(body, "s", signature(body, "s"))
    assert not verify_signature(body + b" ", "s", signature(body, "s"))
    assert not verify_signature(body, "s", None)


# --- delivery ---------------------------------------------------------------------------------------------


def test_a_receiver_that_is_down_is_retried_with_exponential_back_off_within_the_wait() -> None:
    clock = VirtualClock()
    settings = HookSettings(max_attempts=4, backoff_ms=100, wait_ms=60_000)
    problem = deliver(WebhookTarget(url=closed_port_url()), b"{}", settings, sleep=clock.sleep, clock=clock.clock)
    assert problem is not None and "ConnectError" in problem and "4 attempt(s)" in problem
    assert clock.slept == [0.1, 0.2, 0.4]


def test_the_wait_bounds_every_retry() -> None:
    clock = VirtualClock()
    settings = HookSettings(max_attempts=10, backoff_ms=1000, wait_ms=2500)
    problem = deliver(WebhookTarget(url=closed_port_url()), b"{}", settings, sleep=clock.sleep, clock=clock.clock)
    assert problem is not None and "2 attempt(s)" in problem
    assert clock.slept == [1.0]  # the next pause (2 s) would pass the 2.5 s wait: no more tries
    assert sum(clock.slept) <= 2.5


def test_a_500_then_a_200_is_delivered_on_the_second_attempt() -> None:
    clock = VirtualClock()
    with HookReceiver(statuses=[500, 503]).running() as receiver:
        settings = HookSettings(backoff_ms=50)
        body = b'{"debateId": "deb-1"}'
        problem = deliver(
            WebhookTarget(url=receiver.url), body, settings, secret=SECRET, sleep=clock.sleep, clock=clock.clock
        )
        posts = receiver.wait_for(3)
    assert problem is None
    assert len(posts) == 3
    assert all(post.body == body and post.signed_with(SECRET) for post in posts)
    assert clock.slept == [0.05, 0.1]


def test_a_4xx_is_not_retried() -> None:
    clock = VirtualClock()
    with HookReceiver(statuses=[404]).running() as receiver:
        problem = deliver(WebhookTarget(url=receiver.url), b"{}", HookSettings(), sleep=clock.sleep, clock=clock.clock)
        posts = receiver.wait_for(1)
    assert problem == "HTTP 404"
    assert len(posts) == 1 and clock.slept == []


def test_without_a_secret_the_post_is_sent_unsigned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DIALECTIC_HOOK_SECRET", raising=False)
    warnings: list[str] = []
    with HookReceiver().running() as receiver:
        run = fire(HookSettings(on_complete=[WebhookTarget(url=receiver.url)]), finished(), warn=warnings.append)
        assert run is not None
        run.wait()
        posts = receiver.wait_for(1)
    assert len(posts) == 1 and SIGNATURE_HEADER not in posts[0].headers
    assert warnings == []


@pytest.mark.parametrize("status", ["suspended", "paused", "running"])
def test_no_hook_runs_for_a_debate_that_has_not_finished(status: str) -> None:
    settings = HookSettings(on_complete=[WebhookTarget(url=closed_port_url())])
    assert fire(settings, finished(status), warn=pytest.fail) is None


def test_a_dead_receiver_is_one_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIALECTIC_HOOK_SECRET", SECRET)
    warnings: list[str] = []
    settings = HookSettings(on_complete=[WebhookTarget(url=closed_port_url())], max_attempts=2, backoff_ms=1)
    run = fire(settings, finished("failed"), warn=warnings.append)
    assert run is not None
    run.wait()
    assert len(warnings) == 1 and "deb-1" in warnings[0] and "not delivered" in warnings[0]


# --- the command ------------------------------------------------------------------------------------------


def test_the_command_gets_the_debate_in_its_environment_and_no_shell(tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    code = "import os, sys; open(sys.argv[1], 'w').write(os.environ['DIALECTIC_DEBATE_ID'] + ' ' + sys.argv[2])"
    command = f"{sys.executable} -c \"{code}\" {seen} '$(touch {tmp_path / 'injected'})'"
    settings = HookSettings(on_complete_command=command)
    run = fire(settings, finished(), links={"export": "/x.json"}, warn=pytest.fail)
    assert run is not None
    run.wait()
    assert seen.read_text() == f"deb-1 $(touch {tmp_path / 'injected'})"
    assert not (tmp_path / "injected").exists()


def test_a_command_past_its_timeout_is_stopped() -> None:
    problem = run_command(f"{sys.executable} -c 'import time; time.sleep(30)'", dict(os.environ), 0.2)
    assert problem is not None and "limit" in problem


def test_a_command_past_its_timeout_is_stopped_with_every_process_it_started(tmp_path: Path) -> None:
    """``sh -c 'sleep 120 & ...'``: the shell's own child is stopped too, not left running after dialectic exits."""
    fifo = tmp_path / "pid.fifo"
    os.mkfifo(fifo)
    process = start_command(["sh", "-c", f"sleep 120 & echo $! > {fifo}; wait"], dict(os.environ))
    with fifo.open(encoding="ascii") as reader:  # blocks until the shell has started its child and named it
        grandchild = int(reader.read().strip())
    ended = os.pidfd_open(grandchild)  # readable once the process has ended
    try:
        assert not ended_yet(ended, 0)
        problem = finish_command(process, 0)  # its time is up at once: no clock in the test
        assert problem is not None and "was stopped" in problem
        assert ended_yet(ended, 60)  # a bound on the wait for the kernel, not a measure: it ends at once
    finally:
        os.close(ended)


def ended_yet(pidfd: int, wait_s: float) -> bool:
    """Whether the process of ``pidfd`` has ended, waiting at most ``wait_s`` for it."""
    readable, _, _ = select.select([pidfd], [], [], wait_s)
    return bool(readable)


def test_a_missing_command_is_a_warning_only() -> None:
    problem = run_command("no-such-command-for-dialectic-hooks", dict(os.environ), 5)
    assert problem is not None


# --- the Python API ---------------------------------------------------------------------------------------


def test_the_python_api_fires_the_configured_hooks_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIALECTIC_HOOK_SECRET", SECRET)
    with HookReceiver().running() as receiver:
        config = make_config(agents=2, rounds=1)
        config = config.model_copy(update={"hooks": HookSettings(on_complete=[WebhookTarget(url=receiver.url)])})
        result = Debate(config, store=":memory:").run_sync("Design a rate limiter")
        wait_pending()
        posts = receiver.wait_for(1, timeout=1)
    assert result.status == "completed"
    assert len(posts) == 1 and posts[0].signed_with(SECRET)
    assert posts[0].json()["debateId"] == result.id
