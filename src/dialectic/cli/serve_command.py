"""``dialectic serve``: its flags and help.

A declaration only, imported while the app is built: the work is done by
:mod:`dialectic.cli.serve_run`, imported when the command runs, so ``--help`` and the other
commands never load the web framework.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dialectic.cli.options import EnvFileOption, LenientOption, StoreOption
from dialectic.core import environment

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_MAX_RUNNING = 50
DEFAULT_MAX_BODY = 1_000_000
"""The defaults as the help states them (a test holds them equal to :mod:`dialectic.web.state`'s)."""


def serve(
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on; any but a loopback one needs --token.")
    ] = DEFAULT_HOST,
    port: Annotated[int, typer.Option("--port", help="Port to listen on (0: any free port).")] = DEFAULT_PORT,
    store: StoreOption = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Configuration new debates start from (default: ./debate-config.json)."),
    ] = None,
    lenient: LenientOption = False,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar=environment.TOKEN,
            show_envvar=True,
            show_default=False,
            help="Require this token on every API call and event stream (16 characters or more).",
        ),
    ] = None,
    cors: Annotated[
        list[str] | None,
        typer.Option("--cors", metavar="ORIGIN", help="Allow this origin's pages to call the API (repeatable)."),
    ] = None,
    resume_orphans: Annotated[
        bool,
        typer.Option("--resume-orphans", help="Resume the debates a server (or a CLI run) left running when it died."),
    ] = False,
    max_running: Annotated[
        int, typer.Option("--max-running", help="Debates this server runs at once; more are refused (429).")
    ] = DEFAULT_MAX_RUNNING,
    max_body: Annotated[
        int, typer.Option("--max-body", metavar="BYTES", help="Largest request body accepted (413 beyond).")
    ] = DEFAULT_MAX_BODY,
    allow_endpoint: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-endpoint",
            metavar="PROVIDER[=URL]",
            help="Let debates started over the API also call this endpoint (repeatable); by default they may "
            "call only the endpoints of the server's configuration.",
        ),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            metavar="NAME=CONFIG",
            help="Offer the configuration file CONFIG as the model dialectic/NAME on the OpenAI-compatible API "
            "(/v1; repeatable). Every format is offered as dialectic/FORMAT on the server's configuration.",
        ),
    ] = None,
    env_file: EnvFileOption = None,
) -> None:
    """Serve a web page, a JSON API and an OpenAI-compatible API (/v1) to start, watch, steer and download debates."""
    from dialectic.core.extras import require_extra

    require_extra("dialectic serve", "web")  # before serve_run, which imports the web framework
    from dialectic.cli.serve_run import ServeFlags, run_server

    flags = ServeFlags(
        host=host,
        port=port,
        store=store,
        config=config,
        lenient=lenient,
        token=token,
        cors=tuple(cors or ()),
        resume_orphans=resume_orphans,
        max_running=max_running,
        max_body=max_body,
        allow_endpoints=tuple(allow_endpoint or ()),
        models=tuple(model or ()),
        env_file=env_file,
    )
    run_server(flags)
