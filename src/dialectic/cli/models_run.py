"""What ``dialectic models`` does: ask a server for its models and print them, one per line.

The server is the provider's usual address (``llamacpp`` → ``http://127.0.0.1:8080/v1``, …),
its ``*_BASE_URL`` variable, or ``--base-url``; its key, when one is set, goes with the request.
The embedded ``local`` provider has no server: its catalogue is printed instead.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from dialectic.cli.command_setup import load_environment
from dialectic.core.config import AgentConfig
from dialectic.core.errors import InvalidArgumentsError
from dialectic.llm.openai_provider import ListedModel
from dialectic.llm.registry import provider_spec, resolve_settings


def print_models(*, provider: str, base_url: str | None, as_json: bool, env_file: Path | None) -> None:
    load_environment(env_file)
    listed = _local_catalogue() if provider.strip().lower() == "local" else asyncio.run(_ask(provider, base_url))
    if as_json:
        sys.stdout.write(json.dumps([{"id": m.id, "contextWindow": m.window} for m in listed], indent=2) + "\n")
        return
    if not listed:
        sys.stderr.write("the server lists no models\n")
    for model in listed:
        window = f"\t(context window {model.window:,} tokens)" if model.window else ""
        sys.stdout.write(f"{model.id}{window}\n")


async def _ask(provider: str, base_url: str | None) -> list[ListedModel]:
    spec = provider_spec(provider)
    agent = AgentConfig(id="models", name="models", role="generalist", provider=spec.name, base_url=base_url)
    client = spec.factory(resolve_settings(agent))
    try:
        ask = getattr(client, "models", None)
        if ask is None:
            raise InvalidArgumentsError(
                f"provider '{spec.name}' cannot list its models here: `dialectic models` asks OpenAI-compatible "
                "servers (openai, openrouter, llamacpp, ollama, vllm, lmstudio)"
            )
        listed: list[ListedModel] = await ask()
        return listed
    finally:
        await client.aclose()


def _local_catalogue() -> list[ListedModel]:
    from dialectic.llm.local_models import CATALOGUE

    return [ListedModel(id=name) for name in CATALOGUE]
