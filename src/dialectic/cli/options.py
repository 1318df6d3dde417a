"""Options several commands share, as Typer annotations.

Imported while the app is built, for every command and for ``--help``: it holds declarations
only (typer, pathlib, typing). What the options set up when a command runs, the environment
file and the store, is in :mod:`dialectic.cli.command_setup`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

DEFAULT_ENV_FILE = ".env"
"""Loaded from the working directory when there is one and ``--env-file`` is not given."""

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        metavar="DIR",
        help="Where debates are kept: a directory, a database file or a postgresql:// URL"
        " (default: $DIALECTIC_STORE, else $DIALECTIC_HOME, else the user data directory).",
    ),
]
EnvFileOption = Annotated[
    Path | None,
    typer.Option("--env-file", help=f"KEY=VALUE file loaded into the environment (default: {DEFAULT_ENV_FILE})."),
]
LenientOption = Annotated[
    bool,
    typer.Option(
        "--lenient",
        help="Take unknown keys in the configuration file as warnings, not an error (never under budget or "
        "limits, where an ignored key would remove a ceiling).",
    ),
]
VerboseOption = Annotated[
    bool, typer.Option("--verbose", "-v", help="Show prompt sources and per-contribution details.")
]
OutputOption = Annotated[
    str | None,
    typer.Option(
        "--output", "-o", metavar="PATH", help="Write the result here instead of stdout (.json: the whole debate)."
    ),
]
ReportOption = Annotated[
    str | None,
    typer.Option(
        "--report",
        metavar="PATH",
        help="Also write a Markdown report here (.md added; a directory: <debate-id>.md in it).",
    ),
]
AnswersOption = Annotated[
    Path | None,
    typer.Option("--answers", help='JSON object of clarification answers by question id, e.g. {"q1": "..."}.'),
]
TraceOption = Annotated[
    bool,
    typer.Option(
        "--trace",
        help="Send an OpenTelemetry trace of the run (OTLP/HTTP: OTEL_EXPORTER_OTLP_ENDPOINT, Langfuse, or localhost).",
    ),
]
TraceContentOption = Annotated[
    bool, typer.Option("--trace-content", help="Trace, with the prompts and replies in the spans (implies --trace).")
]
BudgetUsdOption = Annotated[
    float | None,
    typer.Option("--budget-usd", metavar="USD", help="Stop before a call that could take the debate past this cost."),
]
BudgetTokensOption = Annotated[
    int | None,
    typer.Option("--budget-tokens", metavar="N", help="Stop before a call that could take the debate past N tokens."),
]
WindowOption = Annotated[
    list[str] | None,
    typer.Option(
        "--context-window",
        metavar="[ID=]TOKENS",
        help="Set a participant's context window (ID=TOKENS; TOKENS alone: every participant's), kept with the "
        "debate; repeatable.",
    ),
]
EditorOption = Annotated[
    bool,
    typer.Option(
        "--editor",
        help="Write a human seat's turns in $EDITOR (it opens on the turn's prompt) instead of at the terminal.",
    ),
]
SignKeyOption = Annotated[
    Path | None,
    typer.Option(
        "--sign-key",
        metavar="PATH",
        help="Sign the debate's receipt with this Ed25519 private key "
        "(default: $DIALECTIC_RECEIPT_KEY, else unsigned).",
    ),
]
NotifyOption = Annotated[
    list[str] | None,
    typer.Option(
        "--notify",
        metavar="URL",
        help="POST a signed JSON summary here when the debate finishes (hooks.onComplete; signed with "
        "$DIALECTIC_HOOK_SECRET); repeatable.",
    ),
]
OnCompleteOption = Annotated[
    str | None,
    typer.Option(
        "--on-complete",
        metavar="CMD",
        help="Run CMD (no shell) when the debate finishes, with DIALECTIC_DEBATE_ID and DIALECTIC_EXPORT in its "
        "environment (hooks.onCompleteCommand).",
    ),
]
