"""Options several commands share, and the store/environment set-up behind them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from dialectic.cli.console import Terminal
from dialectic.cli.inputs import DEFAULT_ENV_FILE, load_env_file
from dialectic.store import MEMORY_LOCATION, DebateStore, open_store, resolve_data_dir

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        metavar="DIR",
        help="Where debates are kept (default: $DIALECTIC_HOME, else the user data directory).",
    ),
]
EnvFileOption = Annotated[
    Path | None,
    typer.Option("--env-file", help=f"KEY=VALUE file loaded into the environment (default: {DEFAULT_ENV_FILE})."),
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


def load_environment(env_file: Path | None) -> None:
    """Load ``--env-file`` (or a ``.env`` in the working directory when there is one)."""
    loaded = load_env_file(env_file or Path(DEFAULT_ENV_FILE), explicit=env_file is not None)
    if loaded.warnings:
        term = Terminal()
        for warning in loaded.warnings:
            term.warning(warning)


def open_debate_store(store: str | None, *, create: bool = True) -> tuple[DebateStore, str | None]:
    """The store for this command, and the ``--store`` value a later command needs to find it.

    The second value is ``None`` when a plain ``dialectic resume`` would find the same store
    (no ``--store`` needed in the hints we print); otherwise it is the absolute path, so the
    hint works from any directory. Commands that only read pass ``create=False``: a store
    that does not exist is then never created (it reads as empty).
    """
    data_dir = resolve_data_dir(store, os.environ)
    default_dir = resolve_data_dir(None, os.environ)
    return open_store(data_dir, create=create), _store_flag(data_dir, default_dir)


def _store_flag(data_dir: Path, default_dir: Path) -> str | None:
    if data_dir.absolute() == default_dir.absolute():
        return None
    return str(data_dir) if str(data_dir) == MEMORY_LOCATION else str(data_dir.absolute())
