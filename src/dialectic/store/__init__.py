"""Where debates are kept: the :class:`DebateStore` port, its SQLite, Postgres and in-memory backends.

:func:`resolve_store` decides where the debates live from the command line and the environment
(:func:`resolve_data_dir` where a command needs a directory); :func:`open_store` opens a store there.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from platformdirs import user_data_dir

from dialectic.core import environment
from dialectic.core.errors import InvalidArgumentsError
from dialectic.store.absent import AbsentStore
from dialectic.store.base import CallCache, DebateListing, DebateStore, WindowMemory
from dialectic.store.leases import Lease, LeaseGrant, LeaseOwner
from dialectic.store.memory import MemoryStore
from dialectic.store.postgres import PostgresStore, is_postgres_url, shown_url
from dialectic.store.sqlite import SqliteStore

__all__ = [
    "APP_NAME",
    "DATABASE_FILENAME",
    "HOME_ENV_VAR",
    "MEMORY_LOCATION",
    "STORE_ENV_VAR",
    "AbsentStore",
    "CallCache",
    "DebateListing",
    "DebateStore",
    "Lease",
    "LeaseGrant",
    "LeaseOwner",
    "MemoryStore",
    "PostgresStore",
    "SqliteStore",
    "WindowMemory",
    "database_location",
    "default_data_dir",
    "is_postgres_url",
    "open_store",
    "resolve_data_dir",
    "resolve_store",
    "shown_url",
]

APP_NAME = "dialectic"
HOME_ENV_VAR = environment.HOME
STORE_ENV_VAR = environment.STORE
DATABASE_FILENAME = "debates.sqlite3"
MEMORY_LOCATION = ":memory:"
_DATABASE_SUFFIXES = (".sqlite3", ".db")


def default_data_dir() -> Path:
    """The user's data directory for dialectic (e.g. ``~/.local/share/dialectic`` on Linux)."""
    return Path(user_data_dir(APP_NAME, appauthor=False))


def resolve_store(explicit: str | None, env: Mapping[str, str]) -> str | Path:
    """Where debates live: ``--store`` if given, else ``$DIALECTIC_STORE``, else ``$DIALECTIC_HOME``, else
    the user's data directory.

    A ``postgresql://`` (or ``postgres://``) URL comes back as it is; anything else is a path (a
    directory, a database file or ``:memory:``: :func:`open_store` sorts that out). One default per
    user, so every debate is found wherever it was started.
    """
    for given in (explicit, environment.store(env)):
        if given:
            return given.strip() if is_postgres_url(given) else Path(given).expanduser()
    home = environment.home(env)
    if home:
        return Path(home).expanduser()
    return default_data_dir()


def resolve_data_dir(explicit: str | None, env: Mapping[str, str]) -> Path:
    """The directory (or database path, or ``:memory:``) :func:`resolve_store` gives, for commands that keep
    files of their own beside the debates; a Postgres URL there is an :class:`InvalidArgumentsError`."""
    location = resolve_store(explicit, env)
    if isinstance(location, str):
        raise InvalidArgumentsError(
            f"this command keeps its files in a directory; the store {shown_url(location)} is a Postgres database:"
            " give --store a directory"
        )
    return location


def database_location(location: str | Path) -> str:
    """The database ``location`` means, as an absolute path (for messages that work from anywhere):
    ``:memory:``, the file it names, or ``debates.sqlite3`` in the directory it names."""
    if str(location) == MEMORY_LOCATION:
        return MEMORY_LOCATION
    path = Path(location).expanduser().absolute()
    if path.suffix.lower() in _DATABASE_SUFFIXES or path.is_file():
        return str(path)
    return str(path / DATABASE_FILENAME)


def open_store(location: str | Path | None, *, create: bool = True) -> DebateStore:
    """Open the store at ``location``.

    ``":memory:"`` gives a :class:`MemoryStore`; a path ending in ``.sqlite3`` or ``.db``
    (or naming an existing file) is the database itself; any other path is a directory that
    holds ``debates.sqlite3``. ``None`` means the default from :func:`resolve_store`
    with the process environment. With ``create=False`` (commands that only read) a missing
    database is never created: an empty, read-only :class:`AbsentStore` stands in for it.
    A ``postgresql://`` URL opens a :class:`~dialectic.store.postgres.PostgresStore` (its tables
    are created if the database has none; a missing ``postgres`` extra is a one-line error, exit 4).
    """
    if location is None:
        location = resolve_store(None, os.environ)
    if is_postgres_url(location):
        return PostgresStore(str(location))
    database = database_location(location)
    if database == MEMORY_LOCATION:
        return MemoryStore()
    if not create and not Path(database).is_file():
        return AbsentStore(database)
    return SqliteStore(database, create=create)
