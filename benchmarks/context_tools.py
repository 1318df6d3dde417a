"""Tokens and calls of a debate over a context directory: agents reading through tools vs the files pasted.

The context directory is this repository's own ``src/``; the question is a design question
about it. The same debate runs twice, ``debate.context.mode`` ``tools`` and ``paste``, and the
usage ledger of each (input and output tokens, LLM requests, tool calls) is printed side by side.

By default the agents are the scripted model acting as a reader: with tools offered, it
searches the index for the question's words, reads the best passage, then answers (each step
a real, counted request). With ``--fake-server`` the same reader answers behind the fake
OpenAI-compatible server, so every step goes through the openai SDK and the wire format (tool
calls included) and the tokens are the server's counts. With ``--config FILE`` the agents and
judge of that configuration run instead (e.g. the local model), the context settings replaced
for each arm. ``--export DIR``
writes each arm's debate as ``DIR/tools.json`` and ``DIR/paste.json`` (``dialectic export``'s
format), for ``dialectic eval -d DIR/tools.json`` to score.

    .venv/bin/python benchmarks/context_tools.py [--rounds 1] [--agents 2] [--fake-server | --config FILE]
        [--export DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from dialectic.core.config import SystemConfig
from dialectic.core.domain import DebateState
from dialectic.core.errors import DialecticError
from dialectic.core.events import EventBus
from dialectic.core.ledger import entries_of, ledger_totals
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.llm.base import CompletionRequest, LLMProvider, ToolCall
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import Script, ScriptedProvider, ScriptedReply, default_reply
from dialectic.loading.config import load_config, with_local_limits
from dialectic.reporting.export import export_json
from dialectic.store import SqliteStore
from dialectic.testing.fake_server import FakeLLMServer
from dialectic.testing.harness import make_config

SOURCE = Path(__file__).resolve().parent.parent / "src"
QUESTION = (
    "dialectic's LLM layer (src/dialectic/llm) retries, continues cut-off replies and repairs structured "
    "output in one client wrapped around every provider. Should tool calling live in that client too, or in "
    "the agents? Propose where the tool loop, its limits and its recording belong, and why."
)


def reader(request: CompletionRequest) -> Script:
    """A scripted agent that reads like a careful model: search, read the best hit, answer."""
    results = [m.content for m in request.messages if m.role == "tool"]
    if request.tools and not results:
        return ScriptedReply(tool_calls=(ToolCall("s1", "context_search", {"query": "tool loop retry client"}),))
    if request.tools and len(results) == 1:
        hit = re.search(r"^1\. (\S+):(\d+)-(\d+)", results[0], re.MULTILINE)
        if hit is not None:
            path, start, end = hit.group(1), int(hit.group(2)), int(hit.group(3))
            arguments = {"path": path, "start_line": start, "end_line": end}
            return ScriptedReply(tool_calls=(ToolCall("r1", "file_read", arguments),))
    return default_reply(request)


def with_context(config: SystemConfig, mode: str) -> SystemConfig:
    context = config.debate.context.model_copy(update={"dir": str(SOURCE), "mode": mode})
    return config.model_copy(update={"debate": config.debate.model_copy(update={"context": context})})


async def run_arm(config: SystemConfig, mode: str, store_dir: Path, pool: ProviderPool) -> DebateState:
    store = SqliteStore(store_dir / f"{mode}.sqlite3")
    try:
        engine = DebateEngine(store, pool, EventBus())
        request = DebateRequest(problem=QUESTION, config=with_context(config, mode), config_dir=Path("."))
        return await engine.start(request)
    finally:
        store.close()


FIGURES = ("status", "input tokens", "output tokens", "LLM requests", "tool calls", "pasted characters")


def behind(config: SystemConfig, base_url: str) -> SystemConfig:
    """``config`` with every agent and the judge on the OpenAI-compatible server at ``base_url``."""
    endpoint = {"provider": "openai", "model": "fake", "base_url": base_url}
    return config.model_copy(
        update={
            "agents": [agent.model_copy(update=endpoint) for agent in config.agents],
            "judge": config.judge.model_copy(update=endpoint),
        }
    )


def figures(state: DebateState) -> dict[str, Any]:
    totals = ledger_totals(entries_of(state))
    speakers = [*state.all_contributions(), *([state.final_solution] if state.final_solution else [])]
    tool_calls = sum(len(c.tool_calls or []) for c in speakers)
    return {
        "status": state.status,
        "input tokens": totals.input_tokens,
        "output tokens": totals.output_tokens,
        "LLM requests": totals.requests,
        "tool calls": tool_calls,
        "pasted characters": len(state.context or ""),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--agents", type=int, default=2)
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--config", type=Path, help="run these agents and judge instead of the scripted reader")
    chosen.add_argument("--fake-server", action="store_true", help="the scripted reader behind the fake server")
    parser.add_argument("--export", type=Path, help="write each arm's debate here as MODE.json, for dialectic eval")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        run(args, stack)


def run(args: argparse.Namespace, stack: contextlib.ExitStack) -> None:
    overrides: dict[str, LLMProvider]
    if args.fake_server:
        server = stack.enter_context(FakeLLMServer(reader))
        os.environ.setdefault("OPENAI_API_KEY", "bench-key")  # the fake server takes any key
        config = behind(make_config(agents=args.agents, rounds=args.rounds), server.openai_base_url)
        overrides = {}
        model = "scripted reader behind the fake OpenAI-compatible server (its token counts)"
    elif args.config is not None:
        config = with_local_limits(load_config(args.config, explicit=True).config)  # as `dialectic debate` does
        config = config.model_copy(update={"debate": config.debate.model_copy(update={"rounds": args.rounds})})
        overrides = {}
        model = "configured agents"
    else:
        config = make_config(agents=args.agents, rounds=args.rounds)
        overrides = {"scripted": ScriptedProvider(reader)}
        model = "scripted reader (tokens counted in words)"
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="dialectic-context-bench-") as scratch:
        for mode in ("tools", "paste"):
            try:
                pool = ProviderPool(overrides=overrides)  # one per arm: an SDK client belongs to one event loop
                state = asyncio.run(run_arm(config, mode, Path(scratch), pool))
                results[mode] = figures(state)
                if args.export is not None:
                    args.export.mkdir(parents=True, exist_ok=True)
                    (args.export / f"{mode}.json").write_text(export_json(state), encoding="utf-8")
            except DialecticError as error:  # e.g. a prompt past a small model's window: a finding, not a crash
                results[mode] = {key: "—" for key in FIGURES} | {"status": f"failed: {error.message[:60]}"}
    print(f"Context directory: {SOURCE} · {model} · {args.agents} agents × {args.rounds} round(s)")
    print(f"{'':<20}{'tools':>12}{'paste':>12}")
    for key in results["tools"]:
        print(f"{key:<20}{results['tools'][key]!s:>12}{results['paste'][key]!s:>12}")
    if any(r["status"] != "completed" for r in results.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
