"""What ``dialectic serve`` does: check everything, open the store, then serve until stopped.

The server starts from a configuration the way ``dialectic debate`` does (the file given, or
``./debate-config.json``, or with neither and no key the embedded local model), checks its
prompt files and API keys, and refuses to listen anywhere but on a loopback address without
a token. Imported by :mod:`dialectic.cli.serve_command` when the command runs.
"""

from __future__ import annotations

import gc
import re
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from urllib.parse import urlsplit

from dialectic.cli.command_setup import load_environment, open_debate_store
from dialectic.cli.console import Terminal
from dialectic.cli.interruptions import signal_name
from dialectic.cli.wording import plural
from dialectic.core import environment
from dialectic.core.binding import check_bind, listen
from dialectic.core.errors import InvalidArgumentsError
from dialectic.loading.client_config import parse_endpoint
from dialectic.loading.setup import Overrides, prepare_config
from dialectic.store import DebateStore
from dialectic.web.new_debate import NamedConfig, ServerConfig
from dialectic.web.state import ServeSettings, build_context

MIN_BODY_BYTES = 1024
MODEL_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
"""A ``--model`` name: the model id is ``dialectic/NAME``."""


@dataclass(frozen=True)
class ServeFlags:
    """``dialectic serve``'s flags, built once by :func:`dialectic.cli.serve_command.serve` and passed whole."""

    host: str
    port: int
    store: str | None
    config: Path | None
    token: str | None
    cors: tuple[str, ...]
    resume_orphans: bool
    max_running: int
    max_body: int
    allow_endpoints: tuple[str, ...]
    env_file: Path | None
    models: tuple[str, ...] = ()
    lenient: bool = False


def run_server(flags: ServeFlags) -> None:
    """``dialectic serve``: the flags are described in :func:`dialectic.cli.serve_command.serve`."""
    host, port, store, config, cors = flags.host, flags.port, flags.store, flags.config, flags.cors
    resume_orphans, max_running, max_body = flags.resume_orphans, flags.max_running, flags.max_body
    allow_endpoints, models, lenient = flags.allow_endpoints, flags.models, flags.lenient
    term = Terminal()
    load_environment(flags.env_file)
    token = flags.token or environment.token()
    _check_flags(host, port, token, cors, max_running, max_body)
    extra_endpoints = frozenset(parse_endpoint(value) for value in allow_endpoints)
    prepared = prepare_config(config, Overrides(lenient=lenient))
    for line in prepared.notes:
        term.line(line)
    for warning in prepared.warnings:
        term.warning(warning)
    named = _named_configs(models, term)
    settings = ServeSettings(
        host=host,
        port=port,
        token=token,
        cors_origins=cors,
        max_running=max_running,
        max_body_bytes=max_body,
        resume_orphans=resume_orphans,
    )
    listening = listen(host, port, backlog=2048)
    debate_store, _ = open_debate_store(store)
    try:
        server = ServerConfig(prepared.config, prepared.directory, extra_endpoints, named)
        _serve(debate_store, server, settings, listening, term)
    finally:
        debate_store.close()
        listening.close()


def _serve(
    store: DebateStore, server: ServerConfig, settings: ServeSettings, sock: socket.socket, term: Terminal
) -> None:
    """Run uvicorn on ``sock`` until a signal stops it (the runs still going are saved as interrupted)."""
    import uvicorn

    from dialectic.web.app import create_app, stale_debates

    context = build_context(store, server, settings)
    for offered in (server.config, *(n.config for n in server.named)):
        context.providers.prepare([*offered.agents, offered.judge])
    app = create_app(context, request_log=term.line)
    if not settings.resume_orphans:
        orphans = stale_debates(store)
        if orphans:
            term.warning(
                f"{len(orphans)} debate(s) were left running by a process that stopped: {', '.join(orphans)}; "
                "resume them from the page, or restart with --resume-orphans"
            )
    port = sock.getsockname()[1]
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    context.runs.base_url = f"http://{host}:{port}"  # the links a debate's hooks send
    sys.stdout.write(f"Serving on http://{host}:{port}/ (debates in {store.location}; API docs at /docs)\n")
    sys.stdout.flush()
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=5)
    # What is alive now (modules, SDKs, templates) lives as long as the process: leave it out of the
    # collector's full passes, which otherwise scan it all and stall the event loop (~0.1 s each, measured).
    # And collect less often (the defaults are 700, 10, 10): nearly all of a debate's garbage is freed by
    # reference counting, while every pass of the collector holds up every debate on the loop.
    gc.collect()
    gc.freeze()
    gc.set_threshold(5000, 20, 50)

    class Server(uvicorn.Server):
        """uvicorn's server, saying so on stderr when a signal stops it (then shutting down gracefully)."""

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if not self.should_exit:
                term.line(shutdown_line(sig, context.runs.count))
            super().handle_exit(sig, frame)

    Server(config).run(sockets=[sock])


def shutdown_line(signum: int, running: int) -> str:
    """What ``serve`` says when a signal stops it (before uvicorn's graceful shutdown)."""
    line = f"Shutting down ({signal_name(signum)})"
    if running:
        line += f": {plural(running, 'running debate')} saved as interrupted (resume from the page or the CLI)"
    return line


def _check_flags(
    host: str, port: int, token: str | None, cors: tuple[str, ...], max_running: int, max_body: int
) -> None:
    check_bind(host, token)
    if not 0 <= port <= 65535:
        raise InvalidArgumentsError(f"--port must be between 0 and 65535 (got {port})")
    if max_running < 1:
        raise InvalidArgumentsError(f"--max-running must be at least 1 (got {max_running})")
    if max_body < MIN_BODY_BYTES:
        raise InvalidArgumentsError(f"--max-body must be at least {MIN_BODY_BYTES} bytes (got {max_body})")
    for origin in cors:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/") or parts.query:
            raise InvalidArgumentsError(f"--cors {origin}: give an origin such as https://example.org")


def _named_configs(values: tuple[str, ...], term: Terminal) -> tuple[NamedConfig, ...]:
    """``--model NAME=CONFIG``: each configuration loaded and checked as ``-c`` is (its problems are the
    operator's to fix before the server starts)."""
    from dialectic.core.config import FORMATS

    named: list[NamedConfig] = []
    for value in values:
        name, equals, path = value.partition("=")
        name = name.strip()
        if not equals or not path.strip() or not MODEL_NAME.fullmatch(name):
            raise InvalidArgumentsError(
                f"--model {value}: give NAME=CONFIG, NAME in lower-case letters, digits, '.', '_' and '-' "
                "(the model is then dialectic/NAME)"
            )
        if name in FORMATS:
            raise InvalidArgumentsError(f"--model {value}: dialectic/{name} is the {name} format's model already")
        if any(n.name == name for n in named):
            raise InvalidArgumentsError(f"--model {value}: the name {name} is given twice")
        prepared = prepare_config(Path(path.strip()))
        for warning in prepared.warnings:
            term.warning(f"--model {name}: {warning}")
        named.append(NamedConfig(name, prepared.config, prepared.directory))
    return tuple(named)
