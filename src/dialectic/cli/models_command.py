"""The ``dialectic models`` command: the models a server offers, so a configuration can name one.

Declarations only (the flags and the help), imported while the app is built: what the command
does is in :mod:`dialectic.cli.models_run`, imported when it runs.
"""

from __future__ import annotations

from typing import Annotated

import typer

from dialectic.cli.options import EnvFileOption


def models(
    provider: Annotated[
        str,
        typer.Option(
            "--provider",
            "-p",
            metavar="NAME",
            help="openai, openrouter, llamacpp, ollama, vllm, lmstudio or an OpenAI-compatible plugin provider.",
        ),
    ] = "openai",
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", metavar="URL", help="The server's address (default: the provider's usual one)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
    env_file: EnvFileOption = None,
) -> None:
    """List the models an OpenAI-compatible server offers (GET /v1/models)."""
    from dialectic.cli.models_run import print_models

    print_models(provider=provider, base_url=base_url, as_json=as_json, env_file=env_file)
