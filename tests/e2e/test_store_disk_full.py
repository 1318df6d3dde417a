"""The debate store's disk full mid-debate (issue 52, item 6): a clear error, nothing half-written, resumable.

As root (CI) the store lives on a small tmpfs mounted for the test and filled up to a few pages;
elsewhere the command runs with a file-size limit (``RLIMIT_FSIZE``, with ``SIGXFSZ`` ignored, so a
write past it fails as on a full disk). Either way the second debate cannot be written to its end.
"""

from __future__ import annotations

import errno
import itertools
import os
import re
import resource
import signal
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from dialectic.core.domain import DebateState
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script, default_reply
from dialectic.store import open_store
from dialectic.testing.fake_server import FakeLLMServer
from tests.e2e.conftest import Workspace

ROOM = 224 * 1024
"""Without a tmpfs: bytes the store file may grow by (the debate starts, and cannot get far)."""
FILL_AT_CALL = 5
"""On a tmpfs, the call of the second debate during which the disk is filled up (round 1's critiques)."""


@contextmanager
def small_disk(where: Path) -> Iterator[Callable[[], None] | None]:
    """A 4 MB tmpfs at ``where``, unmounted at the end; yields ``None`` where it cannot be mounted."""
    where.mkdir()
    mounted = os.geteuid() == 0 and (
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)], capture_output=True).returncode
        == 0
    )
    try:
        yield (lambda: None) if mounted else None
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path) -> Path:
    """A file taking all of ``disk``'s free space."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0" * 65536)
        except OSError as full:
            assert full.errno == errno.ENOSPC
    return filler


def file_limit(size: int) -> Callable[[], None]:
    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit


def dialectic(
    workspace: Workspace, *args: str, limit: Callable[[], None] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [workspace.executable, *args],
        cwd=workspace.root,
        env=workspace.environ({"DIALECTIC_HOME": str(workspace.home)}),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=limit,
    )


def test_a_full_disk_mid_debate_is_a_clear_error_leaves_the_store_whole_and_the_debate_resumes(
    workspace: Workspace,
) -> None:
    disk = workspace.root / "disk"
    served = itertools.count(1)
    filled: list[Path] = []
    armed: list[bool] = []  # the second debate's calls are counted

    def respond(request: CompletionRequest) -> Script:
        if armed and next(served) == FILL_AT_CALL and mounted is not None:
            filled.append(fill(disk))  # the disk fills up while round 1's critiques are being written
        return default_reply(request)

    with small_disk(disk) as mounted, FakeLLMServer(respond) as server:
        config = workspace.write_config(server, rounds=2)
        workspace.home = disk / "home"
        created = dialectic(workspace, "debate", "Design a rate limiter", "-c", str(config))
        assert created.returncode == 0, created.stderr
        database = workspace.home / "debates.sqlite3"
        armed.append(True)
        limit = None if mounted is not None else file_limit(database.stat().st_size + ROOM)
        full = dialectic(workspace, "debate", "Design a rate limiter", "-c", str(config), limit=limit)

        assert full.returncode != 0
        error = [line for line in full.stderr.splitlines() if line.startswith("error:")]
        assert len(error) == 1 and "Traceback" not in full.stderr, full.stderr
        assert re.search(r"disk is full|disk I/O error", error[0])  # a full tmpfs, or a file-size limit
        found = re.search(r"dialectic resume (deb-[\w-]+)", error[0])
        assert found is not None, error[0]
        debate_id = found.group(1)

        with sqlite3.connect(database) as db:  # nothing half-written: every write was a whole transaction
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        stopped = loaded(workspace, debate_id)
        assert stopped.status == "running" and stopped.final_solution is None  # its last saved step, no further
        if mounted is not None:
            assert filled and stopped.rounds, full.stderr  # it had begun: the disk filled mid-debate

        for filler in filled:
            filler.unlink()
        resumed = dialectic(workspace, "resume", debate_id)
        assert resumed.returncode == 0, resumed.stderr
        done = loaded(workspace, debate_id)
        assert done.status == "completed" and done.final_solution is not None and not done.dropped
        keys = [(r.round_number, c.type, c.agent_id, c.target_agent_id) for r in done.rounds for c in r.contributions]
        assert len(keys) == len(set(keys))  # nothing saved twice


def loaded(workspace: Workspace, debate_id: str) -> DebateState:
    store = open_store(workspace.home)
    try:
        return store.load(debate_id)
    finally:
        store.close()
