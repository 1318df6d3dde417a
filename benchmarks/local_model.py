"""Benchmark the ``local`` provider on this machine.

Two questions:

1. Decode speed: tokens/s of raw llama-cpp-python (``Llama.create_chat_completion``) versus
   tokens/s seen through dialectic's :class:`LocalProvider` for the same prompts (same
   prefix-cache behaviour on both sides, temperature 0, so both generate the same tokens).
2. Prompt-prefix reuse: prompt-evaluation time over a debate-like sequence of prompts (three
   agents taking turns to propose, critique each other and refine, rendered from the real
   templates) with no reuse (``Llama.reset()`` before every call), with llama.cpp's own KV
   prefix reuse alone, with the provider's :class:`PrefixSnapshots` on top (what the provider
   does), and with ``LlamaRAMCache`` on top instead (whole-state snapshots, logits included).

Run: ``.venv/bin/python benchmarks/local_model.py [--model qwen2.5-0.5b] [--tokens 128]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from dataclasses import dataclass
from typing import Any, cast

from dialectic.agents.participants import ROLE_TITLES
from dialectic.agents.templates import builtin_role_prompt, render
from dialectic.llm.base import CompletionRequest, Message
from dialectic.llm.local_models import DEFAULT_MODEL, ModelSpec, prepare_model, resolve_model
from dialectic.llm.local_provider import (
    MAX_DEFAULT_N_CTX,
    SAMPLING,
    LocalProvider,
    PrefixSnapshots,
    default_threads,
    import_llama,
)

import_llama()  # first, so raw llama.cpp runs with the provider's OpenMP settings

import llama_cpp  # noqa: E402
from llama_cpp import Llama  # noqa: E402
from llama_cpp.llama_cache import LlamaRAMCache  # noqa: E402

Chat = list[dict[str, str]]

DECODE_PROMPTS: tuple[str, ...] = (
    "Explain how a token-bucket rate limiter works, step by step.",
    "Describe the trade-offs between SQL and document databases for an order system.",
    "Write a Python function that merges overlapping intervals, and explain it.",
)

PROBLEM = """Design the backend for a ticket-booking service for concert venues.
Requirements: 50,000 seats may go on sale at the same moment and sell out within minutes;
no seat may ever be sold twice; a buyer holds seats for ten minutes while paying through an
external payment provider that sometimes times out or answers twice; prices vary by section
and change during the sale; the service must keep working when one availability zone fails;
audit every state change of a seat for disputes; support refunds and resale of returned
seats; expose a public API for partner ticket shops with per-partner quotas. The team has six
engineers who know Python and PostgreSQL well and have run Kafka in production before.
Budget: one region, three availability zones, managed PostgreSQL, no custom hardware."""

PROPOSAL = """Approach: a seat-inventory service owns every seat row in PostgreSQL and moves seats
through held, sold and released states with conditional updates, so a seat can only change
from the state the caller saw. Holds expire through a sweeper. Payments run through an outbox
table and a worker that calls the provider with an idempotency key; duplicate answers are
ignored by key. Partner traffic passes a gateway that enforces quotas with token buckets in
Redis. Every state change appends to an audit table in the same transaction. Risks: hot rows
at sale start, sweeper lag, and Redis as a quota single point of failure."""

CRITIQUE = """1. Hot rows: conditional updates on popular sections will serialise; shard holds by
section and batch them. 2. The sweeper can release a seat whose payment is confirming; check
the outbox first. 3. Redis failure blocks partners; fail open with a local bucket."""


@dataclass(frozen=True)
class Agent:
    role: str
    system: str

    @property
    def title(self) -> str:
        return ROLE_TITLES.get(self.role, self.role)


def debate_sequence(roles: tuple[str, ...] = ("architect", "performance", "kiss")) -> list[Chat]:
    """One debate round's prompts in the engine's order: proposals, critiques, refinements.

    Agents run concurrently and the model serves them in turn, so prompts alternate between
    agents. Proposals and refinements are each followed by a continuation (the client asks
    for one when a reply hits the token limit, as small ``maxTokens`` make them do).
    """
    agents = [Agent(role, builtin_role_prompt(role)) for role in roles]
    common: dict[str, Any] = {"problem": PROBLEM, "clarifications": "", "history": "", "history_is_summary": False}

    def chat(agent: Agent, user: str) -> Chat:
        return [{"role": "system", "content": agent.system}, {"role": "user", "content": user}]

    def continued(first: Chat, reply: str) -> Chat:
        return [*first, {"role": "assistant", "content": reply}, {"role": "user", "content": render("continue.md.j2")}]

    proposals = [chat(a, render("propose.md.j2", role_name=a.title, context="", **common)) for a in agents]
    critiques = [
        chat(
            a,
            render(
                "critique.md.j2",
                role_name=a.title,
                target_name=t.title,
                target_role=t.role,
                proposal=PROPOSAL,
                **common,
            ),
        )
        for a in agents
        for t in agents
        if t is not a
    ]
    refinements = [
        chat(
            a,
            render(
                "refine.md.j2",
                role_name=a.title,
                original=PROPOSAL,
                **common,
                critiques=[
                    {"author_name": o.title, "author_role": o.role, "content": CRITIQUE} for o in agents if o is not a
                ],
            ),
        )
        for a in agents
    ]
    return [
        *proposals,
        *(continued(p, PROPOSAL) for p in proposals),
        *critiques,
        *refinements,
        *(continued(r, PROPOSAL) for r in refinements),
    ]


@dataclass
class Perf:
    prompt_tokens: int = 0
    prompt_ms: float = 0.0
    decode_tokens: int = 0
    decode_ms: float = 0.0
    wall_s: float = 0.0
    completion_tokens: int = 0

    def add(self, llama: Llama, wall_s: float, completion_tokens: int) -> None:
        data = llama_cpp.llama_perf_context(llama.ctx)
        self.prompt_tokens += data.n_p_eval
        self.prompt_ms += data.t_p_eval_ms
        self.decode_tokens += data.n_eval
        self.decode_ms += data.t_eval_ms
        self.wall_s += wall_s
        self.completion_tokens += completion_tokens


def timed_chat(llama: Llama, messages: Chat, max_tokens: int, perf: Perf) -> str:
    """Answer ``messages``, adding its figures to ``perf``; returns the reply text."""
    llama_cpp.llama_perf_context_reset(llama.ctx)
    started = time.perf_counter()
    reply: Any = llama.create_chat_completion(
        messages=cast(Any, messages), max_tokens=max_tokens, temperature=0.0, **SAMPLING
    )
    perf.add(llama, time.perf_counter() - started, reply["usage"]["completion_tokens"])
    return str(reply["choices"][0]["message"]["content"] or "")


def raw_decode(llama: Llama, tokens: int) -> Perf:
    perf = Perf()
    for prompt in DECODE_PROMPTS:
        timed_chat(llama, [{"role": "user", "content": prompt}], tokens, perf)
    return perf


async def provider_decode(model: str, n_ctx: int, tokens: int) -> tuple[float, int, float]:
    """Wall seconds, completion tokens and the first (loading) call's seconds through LocalProvider."""
    provider = LocalProvider(model, n_ctx=n_ctx)
    started = time.perf_counter()
    await provider.complete(CompletionRequest(messages=(Message("user", "Hi"),), model=model, max_tokens=1))
    load_s = time.perf_counter() - started
    wall, produced = 0.0, 0
    for prompt in DECODE_PROMPTS:
        request = CompletionRequest(
            messages=(Message("user", prompt),), model=model, max_tokens=tokens, temperature=0.0
        )
        started = time.perf_counter()
        completion = await provider.complete(request)
        wall += time.perf_counter() - started
        produced += completion.usage.output_tokens
    return wall, produced, load_s


def reset(llama: Llama) -> None:
    cast(Any, llama).reset()  # llama-cpp-python leaves reset() unannotated


def prefix_run(llama: Llama, chats: list[Chat], mode: str) -> Perf:
    """Answer ``chats`` with one token each; ``wall_s`` includes snapshot restores and saves."""
    perf = Perf()
    snapshots = PrefixSnapshots()
    reset(llama)
    started = time.perf_counter()
    for messages in chats:
        key = PrefixSnapshots.key(messages)
        if mode == "reset":
            reset(llama)
        elif mode == "snapshots":
            snapshots.restore(llama, key)
        reply = timed_chat(llama, messages, 1, perf)
        if mode == "snapshots":
            snapshots.save(llama, key + PrefixSnapshots.key([{"role": "assistant", "content": reply}]))
    perf.wall_s = time.perf_counter() - started
    return perf


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * 4096 / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--tokens", type=int, default=128, help="tokens to generate per decode prompt")
    args = parser.parse_args()

    source = resolve_model(args.model)
    started = time.perf_counter()
    path = prepare_model(source) if isinstance(source, ModelSpec) else source
    prepare_s = time.perf_counter() - started
    threads = default_threads()
    n_ctx = MAX_DEFAULT_N_CTX
    print(f"model {args.model} ({path}), n_ctx {n_ctx}, {threads} threads; prepare_model {prepare_s:.2f}s")

    llama = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, verbose=False)
    raw = raw_decode(llama, args.tokens)

    chats = debate_sequence()
    no_reuse = prefix_run(llama, chats, "reset")
    kv_reuse = prefix_run(llama, chats, "kv")
    snapshot_reuse = prefix_run(llama, chats, "snapshots")
    rss_before = rss_mb()
    llama.set_cache(LlamaRAMCache(capacity_bytes=2 << 30))
    ram_cache = prefix_run(llama, chats, "kv")
    rss_cache = rss_mb() - rss_before
    llama.set_cache(None)
    llama.close()
    del llama
    gc.collect()

    wall, produced, load_s = asyncio.run(provider_decode(args.model, n_ctx, args.tokens))

    print(f"\nDecode speed (temperature 0, same prompts, {args.tokens} tokens each)")
    print(f"{'path':<44}{'tokens':>8}{'seconds':>9}{'tok/s':>8}")
    print(
        f"{'raw llama.cpp, decode only (perf counters)':<44}{raw.decode_tokens:>8}{raw.decode_ms / 1000:>9.2f}"
        f"{raw.decode_tokens / (raw.decode_ms / 1000):>8.1f}"
    )
    print(
        f"{'raw create_chat_completion, end to end':<44}{raw.completion_tokens:>8}{raw.wall_s:>9.2f}"
        f"{raw.completion_tokens / raw.wall_s:>8.1f}"
    )
    print(f"{'dialectic LocalProvider.complete':<44}{produced:>8}{wall:>9.2f}{produced / wall:>8.1f}")
    print(f"(LocalProvider first call, loading the model: {load_s:.2f}s)")

    print(f"\nPrompt evaluation over a debate round ({len(chats)} prompts, 3 agents taking turns)")
    print(f"{'mode':<38}{'evaluated':>10}{'eval s':>8}{'wall s':>8}{'saved':>8}")
    for label, perf in (
        ("no reuse (reset before each call)", no_reuse),
        ("llama.cpp KV prefix reuse only", kv_reuse),
        ("KV reuse + PrefixSnapshots (provider)", snapshot_reuse),
        ("KV reuse + LlamaRAMCache", ram_cache),
    ):
        saved = 1 - perf.wall_s / no_reuse.wall_s
        print(f"{label:<38}{perf.prompt_tokens:>10}{perf.prompt_ms / 1000:>8.2f}{perf.wall_s:>8.2f}{saved:>8.0%}")
    print(f"(LlamaRAMCache grew the process by {rss_cache:.0f} MB)")


if __name__ == "__main__":
    main()
