"""``dialectic mcp``: its flags and help.

A declaration only, imported while the app is built: the work is done by
:mod:`dialectic.cli.mcp_run`, imported when the command runs, so ``--help`` and the other
commands never load the MCP SDK.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dialectic.cli.options import EnvFileOption, LenientOption, StoreOption
from dialectic.core import environment

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
TRANSPORTS = ("stdio", "http")


def mcp(
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Configuration debates start from (default: ./debate-config.json)."),
    ] = None,
    lenient: LenientOption = False,
    transport: Annotated[
        str,
        typer.Option(
            "--transport",
            metavar="stdio|http",
            help="stdio: an MCP client starts the server and talks on its stdin/stdout; "
            "http: streamable HTTP at http://HOST:PORT/mcp.",
        ),
    ] = "stdio",
    host: Annotated[
        str | None,
        typer.Option(
            "--host", help=f"Address to listen on (http; default {DEFAULT_HOST}); any but a loopback one needs --token."
        ),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option("--port", help=f"Port to listen on (http; default {DEFAULT_PORT}; 0: any free port)."),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar=environment.TOKEN,
            show_envvar=True,
            show_default=False,
            help="Require this token on every HTTP request, as 'Authorization: Bearer TOKEN' (16 characters or more).",
        ),
    ] = None,
    store: StoreOption = None,
    env_file: EnvFileOption = None,
) -> None:
    """Serve debates to AI assistants over the Model Context Protocol (stdio, or HTTP with --transport http)."""
    from dialectic.core.errors import InvalidArgumentsError
    from dialectic.core.extras import require_extra

    if transport not in TRANSPORTS:
        raise InvalidArgumentsError(f"--transport {transport}: give stdio or http")
    if transport == "stdio" and (host is not None or port is not None):
        raise InvalidArgumentsError("--host and --port are for --transport http")
    require_extra("dialectic mcp", "mcp")  # before mcp_run, which imports the SDK
    from dialectic.cli.mcp_run import McpFlags, run_mcp

    flags = McpFlags(
        config=config,
        lenient=lenient,
        transport=transport,
        host=host if host is not None else DEFAULT_HOST,
        port=port if port is not None else DEFAULT_PORT,
        token=token,
        store=store,
        env_file=env_file,
    )
    run_mcp(flags)
