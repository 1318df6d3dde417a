"""The set-up several commands share when they run: the environment file, and the store.

Imported from inside a command's function, never while the app is built: it loads the store
and the dotenv parser, which ``--help`` and the commands that need neither must not pay for.
"""

from __future__ import annotations

import os
from pathlib import Path

from dialectic.cli.console import Terminal
from dialectic.cli.inputs import load_env_file
from dialectic.cli.options import DEFAULT_ENV_FILE
from dialectic.store import MEMORY_LOCATION, DebateStore, open_store, resolve_store, shown_url


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
    hint works from any directory (a Postgres URL without its password). Commands that only read pass
    ``create=False``: a store that does not exist is then never created (it reads as empty).
    """
    location = resolve_store(store, os.environ)
    default = resolve_store(None, os.environ)
    return open_store(location, create=create), _store_flag(location, default)


def _store_flag(location: str | Path, default: str | Path) -> str | None:
    if isinstance(location, str) or isinstance(default, str):
        return None if location == default else shown_url(str(location))
    if location.absolute() == default.absolute():
        return None
    return str(location) if str(location) == MEMORY_LOCATION else str(location.absolute())
