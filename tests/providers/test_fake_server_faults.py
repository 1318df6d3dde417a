"""The fake server's seeded fault mix and latency: the mix, determinism, each kind on the wire, the flags."""

from __future__ import annotations

import http.client
import json
import os
import statistics
import subprocess
import sys
import urllib.error
import urllib.request
from collections import Counter
from typing import Any

import pytest

from dialectic.testing.fake_server import FakeLLMServer, Fault, closed_port_url, main
from dialectic.testing.faults import FAULT_KINDS, Latency, RandomFaults, parse_fault_kinds

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}


def draw(faults: RandomFaults, n: int) -> list[str | None]:
    return [fault.label if (fault := faults.next()) is not None else None for _ in range(n)]


def test_the_rate_and_the_mix_of_kinds() -> None:
    labels = draw(RandomFaults(0.4, seed=7), 4000)
    failed = [label for label in labels if label is not None]
    assert 0.37 < len(failed) / len(labels) < 0.43
    counts = Counter(failed)
    assert set(counts) == {"429", "500", "stall", "disconnect"}
    for kind in counts:
        assert 0.21 < counts[kind] / len(failed) < 0.29, counts


def test_the_same_seed_gives_the_same_faults_and_another_seed_others() -> None:
    assert draw(RandomFaults(0.3, seed=11), 200) == draw(RandomFaults(0.3, seed=11), 200)
    assert draw(RandomFaults(0.3, seed=11), 200) != draw(RandomFaults(0.3, seed=12), 200)


def test_rate_zero_never_fails_rate_one_always_fails_and_kinds_are_honoured() -> None:
    assert draw(RandomFaults(0.0, seed=1), 100) == [None] * 100
    only_limits = RandomFaults(1.0, ["429"], seed=1, retry_after_s=2.5)
    faults = [only_limits.next() for _ in range(20)]
    assert all(f == Fault("status", status=429, retry_after=2.5) for f in faults)
    stalls = RandomFaults(1.0, "stall", seed=1, stall_s=9.0)
    assert stalls.next() == Fault("stall", delay_s=9.0)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        RandomFaults(1.5)
    with pytest.raises(ValueError, match="unknown fault kind 'teapot'"):
        parse_fault_kinds("429,teapot")
    with pytest.raises(ValueError, match="at least one"):
        parse_fault_kinds(" , ")
    with pytest.raises(ValueError, match="negative"):
        Latency(-1.0)
    assert parse_fault_kinds("500, 429,500") == ("500", "429")
    assert parse_fault_kinds(FAULT_KINDS) == FAULT_KINDS


def test_latency_is_constant_or_a_seeded_lognormal_around_its_median() -> None:
    assert [Latency(0.2).next() for _ in range(3)] == [0.2, 0.2, 0.2]
    spread = Latency(0.2, 0.5, seed=3)
    delays = [spread.next() for _ in range(4000)]
    assert all(d > 0 for d in delays)
    assert 0.18 < statistics.median(delays) < 0.22
    assert max(delays) > 0.4 and min(delays) < 0.1
    again = Latency(0.2, 0.5, seed=3)
    assert [again.next() for _ in range(50)] == delays[:50]


def status_of(url: str, timeout: float = 5.0) -> tuple[int | str, dict[str, str]]:
    """The status and headers of one chat completion, or the name of the connection error."""
    request = urllib.request.Request(
        url + "/v1/chat/completions", data=json.dumps(CHAT).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers)
    except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError) as error:
        reason: Any = getattr(error, "reason", error)
        return type(reason).__name__, {}


def test_the_server_serves_the_seeded_sequence_and_counts_it() -> None:
    sequences = []
    for _ in range(2):
        with FakeLLMServer(fault_rate=0.5, fault_kinds=("429", "500"), seed=5, retry_after_s=3) as fake:
            statuses = [status_of(fake.url) for _ in range(30)]
            sequences.append([status for status, _ in statuses])
            served = dict(fake.faults_served)
            completed = fake.call_count
    first = sequences[0]
    assert sequences[1] == first
    assert served == {"429": first.count(429), "500": first.count(500)}
    assert completed == first.count(200) and 0 < completed < 30
    assert all(headers.get("Retry-After") == "3" for status, headers in statuses if status == 429)


def test_a_stall_holds_the_request_past_the_clients_timeout_and_counts_no_completion() -> None:
    with FakeLLMServer(fault_rate=1.0, fault_kinds=["stall"], stall_s=30.0) as fake:
        status, _ = status_of(fake.url, timeout=0.3)
        assert status in ("TimeoutError", "timeout")
        assert fake.call_count == 0 and fake.faults_served["stall"] == 1


def test_a_disconnect_closes_without_an_answer() -> None:
    with FakeLLMServer(fault_rate=1.0, fault_kinds=["disconnect"]) as fake:
        status, _ = status_of(fake.url)
    assert status == "RemoteDisconnected" and fake.call_count == 0


def test_queued_faults_come_before_the_random_mix() -> None:
    with FakeLLMServer(fault_rate=1.0, fault_kinds=["500"]) as fake:
        fake.inject(Fault("status", status=503))
        assert [status_of(fake.url)[0] for _ in range(2)] == [503, 500]


def test_a_closed_port_refuses_connections() -> None:
    status, _ = status_of(closed_port_url())
    assert status == "ConnectionRefusedError"


def test_command_line_flags_configure_the_faults_and_latency() -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    flags = ["--fault-rate", "1", "--fault-kinds", "500", "--seed", "4", "--latency", "0.01", "--latency-sigma", "0.2"]
    process = subprocess.Popen(
        [sys.executable, "-m", "dialectic.testing.fake_server", "--port", "0", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert [status_of(url)[0] for _ in range(3)] == [500, 500, 500]
        process.terminate()
        process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--fault-rate", "1.5"], "between 0 and 1"),
        (["--fault-kinds", "teapot"], "unknown fault kind"),
        (["--latency-sigma", "-1"], "negative"),
    ],
)
def test_bad_flags_are_usage_errors(flags: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main(flags)
    assert raised.value.code == 2 and message in capsys.readouterr().err
