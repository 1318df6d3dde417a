"""``dialectic bench`` through the real openai SDK against the fake OpenAI-compatible server.

Tags do not travel over HTTP, so the server's model is the parity one: right exactly when
the true answer is even. Every arm's accuracy is then the share of even answers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from dialectic.bench.tasks import arithmetic_task

from .conftest import Invoke, parity

fake_server = pytest.importorskip("dialectic.testing.fake_server")

N = 6


@pytest.fixture
def server() -> Iterator[object]:
    with fake_server.FakeLLMServer(parity) as running:
        yield running


def test_bench_over_http_counts_calls_tokens_and_scores_by_design(
    invoke: Invoke, server: object, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    base_url = server.openai_base_url  # type: ignore[attr-defined]
    agent = {"provider": "openai", "model": "fake-1", "baseUrl": base_url}
    config = {
        "agents": [
            {"id": "a1", "name": "A1", "role": "architect", **agent},
            {"id": "a2", "name": "A2", "role": "kiss", **agent},
        ],
        "judge": {"id": "j", "name": "J", "role": "generalist", **agent},
        "debate": {"rounds": 1},
    }
    (home / "config.json").write_text(json.dumps(config), encoding="utf-8")
    out = invoke(
        "arithmetic",
        "-n",
        str(N),
        "--arms",
        "single,majority:3,debate:2x2,dialectic",
        "-c",
        "config.json",
        "-o",
        "r.json",
        "--concurrency",
        "2",
    )
    assert out.code == 0, out.stderr

    document = json.loads((home / "r.json").read_text())
    arms = {a["arm"]: a for a in document["arms"]}
    even = sum(int(i.truth) % 2 == 0 for i in arithmetic_task(N, 0).items)
    assert {name: arm["correct"] for name, arm in arms.items()} == {name: even for name in arms}
    assert (arms["single"]["calls"], arms["majority:3"]["calls"], arms["debate:2x2"]["calls"]) == (N, 3 * N, 4 * N)
    assert sum(a["calls"] for a in arms.values()) == server.call_count  # type: ignore[attr-defined]
    assert all(a["input_tokens"] > 0 and a["output_tokens"] > 0 for a in arms.values())
    greedy = [r for r in server.requests if r.body.get("temperature") == 0.0]  # type: ignore[attr-defined]
    assert len(greedy) == N
