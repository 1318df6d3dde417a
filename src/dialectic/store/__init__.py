"""Where debates are kept: the :class:`DebateStore` port, its SQLite and in-memory backends.

:func:`resolve_data_dir` decides where the data lives from the command line, the
environment and the configuration file; :func:`open_store` opens a store there.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from dialectic.store.base import DebateListing, DebateStore
from dialectic.store.memory import MemoryStore
from dialectic.store.sqlite import SqliteStore

__all__ = [
    "DATABASE_FILENAME",
    "DATA_DIR_NAME",
    "HOME_ENV_VAR",
    "DebateListing",
    "DebateStore",
    "MemoryStore",
    "SqliteStore",
    "open_store",
    "resolve_data_dir",
]

HOME_ENV_VAR = "DIALECTIC_HOME"
DATA_DIR_NAME = ".dialectic"
DATABASE_FILENAME = "debates.sqlite3"
MEMORY_LOCATION = ":memory:"
_DATABASE_SUFFIXES = (".sqlite3", ".db")


def resolve_data_dir(explicit: str | None, config_path: Path | None, env: Mapping[str, str]) -> Path:
    """Where debates live: ``--store`` if given, else ``$DIALECTIC_HOME``, else ``.dialectic/``
    next to the configuration file (or in the current directory when there is none).

    The result may also name a database file or ``:memory:``; :func:`open_store` sorts that out.
    """
    if explicit:
        return Path(explicit).expanduser()
    home = env.get(HOME_ENV_VAR, "").strip()
    if home:
        return Path(home).expanduser()
    base = config_path.expanduser().absolute().parent if config_path is not None else Path.cwd()
    return base / DATA_DIR_NAME


def open_store(location: str | Path | None) -> DebateStore:
    """Open the store at ``location``.

    ``":memory:"`` gives a :class:`MemoryStore`; a path ending in ``.sqlite3`` or ``.db``
    (or naming an existing file) is the database itself; any other path is a directory that
    holds ``debates.sqlite3``. ``None`` means the default from :func:`resolve_data_dir`
    with the process environment and no configuration file.
    """
    if location is None:
        location = resolve_data_dir(None, None, os.environ)
    if str(location) == MEMORY_LOCATION:
        return MemoryStore()
    path = Path(location).expanduser()
    if path.suffix.lower() in _DATABASE_SUFFIXES or path.is_file():
        return SqliteStore(path)
    return SqliteStore(path / DATABASE_FILENAME)
