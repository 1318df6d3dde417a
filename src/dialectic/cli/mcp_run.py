"""What ``dialectic mcp`` does: check everything, open the store, then serve until stopped.

The server loads its configuration the way ``dialectic serve`` does (the file given, or
``./debate-config.json``, or the defaults), checks its prompt files and API keys, and over
HTTP refuses to listen anywhere but on a loopback address without a token. Over stdio,
stdout belongs to the protocol: everything else this command says goes to stderr.
Imported by :mod:`dialectic.cli.mcp_command` when the command runs; the MCP SDK is imported
once the flags and the configuration have passed their checks.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path

from dialectic.cli.command_setup import load_environment, open_debate_store
from dialectic.cli.console import Terminal
from dialectic.core import environment
from dialectic.core.binding import check_bind, check_port, listen
from dialectic.loading.setup import Overrides, prepare_config


@dataclass(frozen=True)
class McpFlags:
    """``dialectic mcp``'s flags, built once by :func:`dialectic.cli.mcp_command.mcp` and passed whole."""

    config: Path | None
    transport: str
    host: str
    port: int
    token: str | None
    store: str | None
    env_file: Path | None
    lenient: bool = False


def run_mcp(flags: McpFlags) -> None:
    """``dialectic mcp``: the flags are described in :func:`dialectic.cli.mcp_command.mcp`."""
    config, transport, host, port = flags.config, flags.transport, flags.host, flags.port
    token, store, lenient = flags.token, flags.store, flags.lenient
    term = Terminal()
    load_environment(flags.env_file)
    http = transport == "http"
    if http:
        token = token or environment.token()
        check_bind(host, token)
        check_port(port)  # before the configuration: a wrong flag is said first
    prepared = prepare_config(config, Overrides(lenient=lenient))
    for line in prepared.notes:
        term.line(line)
    for warning in prepared.warnings:
        term.warning(warning)

    from dialectic.mcp_server.server import DebateService, build_server
    from dialectic.mcp_server.transports import serve_http, serve_stdio

    listening = listen(host, port) if http else None
    debate_store, _ = open_debate_store(store)
    try:
        service = DebateService(prepared.config, prepared.directory, debate_store, "http" if http else "stdio")
        server = build_server(service)
        if listening is None:
            term.line(f"dialectic MCP server on stdio (debates in {debate_store.location})")
            asyncio.run(serve_stdio(server, service))
            return
        address, bound_port = listening.getsockname()[:2]
        shown = f"[{address}]" if ":" in address else address
        sys.stdout.write(f"Serving MCP on http://{shown}:{bound_port}/mcp (debates in {debate_store.location})\n")
        sys.stdout.flush()
        asyncio.run(serve_http(server, service, listening, token=token))
    finally:
        debate_store.close()
        if listening is not None:
            listening.close()
