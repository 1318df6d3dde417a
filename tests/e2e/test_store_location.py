"""Where debates live: one default store per user, ``--store`` and ``DIALECTIC_HOME`` to move it,
and read commands that never create a store."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from dialectic.core.changes import DebateCreated
from dialectic.core.domain import DebateState
from dialectic.store import SqliteStore
from dialectic.testing.fake_server import FakeLLMServer

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

PROBLEM = "Design a rate limiter"


def files_under(root: Path) -> set[Path]:
    return {path.relative_to(root) for path in root.rglob("*")}


@pytest.mark.parametrize(
    "command",
    [
        ["show", "deb-nope"],
        ["export", "deb-nope"],
        ["report", "deb-nope"],
        ["report", "deb-nope", "-o", "out.md"],
        ["resume", "deb-nope"],
        ["eval", "-c", "eval-config.json", "-d", "deb-nope"],
    ],
)
def test_reading_from_a_missing_store_is_an_unknown_id_and_creates_nothing(
    workspace: Workspace, command: list[str]
) -> None:
    (workspace.root / "eval-config.json").write_text(
        json.dumps({"agents": [{"id": "e1", "name": "E1", "provider": "scripted", "model": "m"}]}), encoding="utf-8"
    )
    before = files_under(workspace.root)
    result = workspace.run(*command, "--store", "typo")
    assert result.returncode == 2, result.stderr
    typo_db = workspace.root / "typo" / "debates.sqlite3"
    assert result.stderr == f"error: no debate with id 'deb-nope' in {typo_db}\n"
    assert files_under(workspace.root) == before


def test_list_of_a_missing_store_says_so_and_creates_nothing(workspace: Workspace) -> None:
    before = files_under(workspace.root)
    result = workspace.run("list", "--store", "typo")
    assert result.returncode == 0, result.stderr
    assert f"No debates at {workspace.root / 'typo' / 'debates.sqlite3'}" in result.stdout + result.stderr
    as_json = workspace.run("list", "--store", "typo", "--json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout) == []
    default = workspace.run("list")  # DIALECTIC_HOME names a directory that does not exist yet
    assert default.returncode == 0
    assert files_under(workspace.root) == before
    assert not workspace.home.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG_DATA_HOME is the Linux convention")
def test_the_default_store_is_the_users_data_directory_wherever_the_debate_started(
    workspace: Workspace, server: FakeLLMServer
) -> None:
    config = workspace.write_config(server)
    data_home = workspace.root / "xdg"
    env = workspace.environ({"DIALECTIC_HOME": None, "XDG_DATA_HOME": str(data_home)})
    project, elsewhere = workspace.root / "project", workspace.root / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()

    def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [workspace.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
        )

    debated = run("debate", PROBLEM, "-c", str(config), cwd=project)
    assert debated.returncode == 0, debated.stderr
    database = data_home / "dialectic" / "debates.sqlite3"
    assert f" saved to {database}" in debated.stderr
    assert database.is_file()
    assert not (project / ".dialectic").exists() and not (workspace.root / ".dialectic").exists()

    listed = run("list", "--json", cwd=elsewhere)
    assert listed.returncode == 0, listed.stderr
    assert [row["status"] for row in json.loads(listed.stdout)] == ["completed"]


def test_the_resume_hint_names_the_store_only_when_it_is_not_the_default(
    workspace: Workspace, server: FakeLLMServer
) -> None:
    config = workspace.write_config(server, clarificationsMaxIterations=1)
    default = workspace.run("debate", PROBLEM, "-c", str(config), "--clarify")
    assert default.returncode == 0, default.stderr
    assert resume_line(default.stderr).endswith(" --answers answers.json")
    assert "--store" not in resume_line(default.stderr)

    elsewhere = workspace.run("debate", PROBLEM, "-c", str(config), "--clarify", "--store", "project-store")
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert f" --store {workspace.root / 'project-store'} " in resume_line(elsewhere.stderr)


def resume_line(stderr: str) -> str:
    return next(line.strip() for line in stderr.splitlines() if line.strip().startswith("dialectic resume deb-"))


def test_an_existing_project_store_from_before_leases_stays_readable(workspace: Workspace) -> None:
    """A ``.dialectic/`` store written by an earlier version: read with ``--store``, upgraded in place."""
    path = workspace.root / ".dialectic" / "debates.sqlite3"
    state = DebateState(id="deb-20240101-120000-ABCD", problem=PROBLEM, status="running")
    with SqliteStore(path) as store:
        store.append(state.id, DebateCreated(state=state))
    db = sqlite3.connect(path)
    with db:
        db.execute("DROP TABLE leases")
        db.execute("DELETE FROM migrations WHERE name = 'm004_leases'")
    db.close()

    listed = workspace.run("list", "--store", ".dialectic", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [(row["id"], row["status"]) for row in json.loads(listed.stdout)] == [(state.id, "stale")]
    shown = workspace.run("show", state.id, "--store", ".dialectic")
    assert shown.returncode == 0, shown.stderr
    assert f"continue it with: dialectic resume {state.id} --store {workspace.root / '.dialectic'})" in shown.stdout
