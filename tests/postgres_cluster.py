"""A throwaway Postgres cluster for the tests: ``initdb`` into a temporary directory, a server on a
unix socket in it and on a free port of 127.0.0.1, one database; stopped and removed at the end.

Postgres refuses to run as root, so as root (CI, containers) the cluster belongs to ``nobody`` and
its commands run through ``runuser``. Where the binaries, ``runuser`` or psycopg are missing the tests
that need the cluster are skipped, saying why; ``DIALECTIC_REQUIRE_POSTGRES=1`` makes that a failure.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

DATABASE = "dialectic_test"
TABLES = ("changes", "leases", "debates", "windows", "call_cache")
"""Every table a store keeps (``migrations`` aside), emptied before each test."""


class Unavailable(Exception):
    """Why no cluster can be started here."""


def _bin_dir() -> Path:
    on_path = shutil.which("pg_ctl")
    if on_path and shutil.which("initdb"):
        return Path(on_path).parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    if not found:
        raise Unavailable("the Postgres server binaries (initdb, pg_ctl) are not installed")
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Cluster:
    """A running throwaway cluster: its database's URL, and a way to stop it and start it again (same port)."""

    url: str
    stop: Callable[[], None]
    """Stop the server at once (``pg_ctl stop -m immediate``): every connection is cut."""
    start: Callable[[], None]
    """Start it again on the same port and data (waits until it accepts connections)."""


@contextmanager
def cluster() -> Iterator[str]:
    """Start a cluster; yield the URL of its database."""
    with controlled_cluster() as running:
        yield running.url


@contextmanager
def controlled_cluster() -> Iterator[Cluster]:
    """Start a cluster; yield it (its URL, and how to stop and start it: for the fault tests)."""
    try:
        import psycopg
    except ImportError:
        raise Unavailable("psycopg is not installed (pip install 'dialectic-debate[postgres]')") from None
    bin_dir = _bin_dir()
    as_user: list[str] = []
    root = tempfile.mkdtemp(prefix="dialectic-pg-")
    if os.geteuid() == 0:
        runuser = shutil.which("runuser")
        if runuser is None:
            raise Unavailable("running as root, and there is no runuser to start Postgres as nobody")
        as_user = [runuser, "-u", "nobody", "--"]
        shutil.chown(root, "nobody", "nogroup" if _has_group("nogroup") else "nobody")
    data, log = f"{root}/data", f"{root}/server.log"
    port = _free_port()

    def run(*args: str) -> None:
        done = subprocess.run([*as_user, *args], capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            server_log = Path(log).read_text(errors="replace") if Path(log).exists() else ""
            raise RuntimeError(f"{' '.join(args)} failed: {done.stdout}{done.stderr}{server_log}")

    settings = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
    running = False

    def start() -> None:
        nonlocal running
        run(f"{bin_dir}/pg_ctl", "-D", data, "-l", log, "-o", settings, "-w", "-t", "60", "start")
        running = True

    def stop() -> None:
        nonlocal running
        run(f"{bin_dir}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
        running = False

    try:
        run(f"{bin_dir}/initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
        start()
        with psycopg.connect(f"host={root} port={port} user=postgres dbname=postgres", autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {DATABASE}")
        yield Cluster(f"postgresql://postgres@127.0.0.1:{port}/{DATABASE}", stop, start)
    finally:
        if running:
            stop()
        shutil.rmtree(root, ignore_errors=True)


def _has_group(name: str) -> bool:
    import grp

    try:
        grp.getgrnam(name)
    except KeyError:
        return False
    return True


def empty(url: str) -> None:
    """Remove every debate, lease, window and cached call from the database at ``url``."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        present = {
            row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        }
        tables = [table for table in TABLES if table in present]
        if tables:
            conn.execute(f"TRUNCATE {', '.join(tables)}")
