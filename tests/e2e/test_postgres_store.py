"""A Postgres store (``--store postgresql://…`` / ``DIALECTIC_STORE``): debates run by the CLI and by
``dialectic serve`` on one database are seen by every other command on it, live."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from dialectic.core.errors import EXIT_CONFIG_ERROR, EXIT_GENERAL_ERROR
from dialectic.testing.fake_server import FakeLLMServer
from tests.web.test_serve_command import http, serving

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

PROBLEM = "Design a rate limiter"


def listed(workspace: Workspace, *args: str, env: dict[str, str | None] | None = None) -> list[tuple[str, str]]:
    result = workspace.run("list", "--json", *args, env=env)
    assert result.returncode == 0, result.stderr
    return [(row["id"], row["status"]) for row in json.loads(result.stdout)]


def test_a_debate_run_on_postgres_is_listed_and_shown_from_it(
    workspace: Workspace, server: FakeLLMServer, empty_postgres: str
) -> None:
    config = workspace.write_config(server)
    debated = workspace.run("debate", PROBLEM, "-c", str(config), "--store", empty_postgres)
    assert debated.returncode == 0, debated.stderr
    assert f"saved to {empty_postgres}" in debated.stderr
    assert not workspace.home.exists()  # nothing went to the default store

    rows = listed(workspace, "--store", empty_postgres)
    assert [status for _, status in rows] == ["completed"]
    debate_id = rows[0][0]
    assert listed(workspace, env={"DIALECTIC_STORE": empty_postgres}) == rows  # the variable chooses it too
    assert listed(workspace) == []  # the default store stays apart

    shown = workspace.run("show", debate_id, "--store", empty_postgres)
    assert shown.returncode == 0, shown.stderr
    assert PROBLEM in shown.stdout and "completed" in shown.stdout
    exported = workspace.run("export", debate_id, "--store", empty_postgres)
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout)["id"] == debate_id


@pytest.fixture
def started(workspace: Workspace, empty_postgres: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    with serving(workspace.root, workspace.environ(None), empty_postgres) as server:
        yield server


def test_a_debate_started_by_serve_on_postgres_is_listed_by_the_cli_on_it(
    workspace: Workspace, started: tuple[str, subprocess.Popen[str]], empty_postgres: str
) -> None:
    url, process = started
    status, body = http(url + "api/debates", {"problem": "Design a cache"})
    assert status == 201
    debate_id = json.loads(body)["id"]
    _, events = http(url + f"api/debates/{debate_id}/events")  # ends once the debate is at rest
    assert "event: end" in events
    # the server still runs: the CLI sees its debate live, in the same database
    assert listed(workspace, "--store", empty_postgres) == [(debate_id, "completed")]

    debated = workspace.run("debate", PROBLEM, "-c", "debate-config.json", "--store", empty_postgres)
    assert debated.returncode == 0, debated.stderr
    _, page = http(url + "api/debates")
    assert PROBLEM in page  # and the server lists the CLI's debate

    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == -signal.SIGTERM
    assert [status for _, status in listed(workspace, "--store", empty_postgres)] == ["completed", "completed"]


@pytest.mark.parametrize("module", ["psycopg", "psycopg_pool"])
def test_without_the_postgres_extra_a_postgres_store_is_one_line_naming_it(workspace: Workspace, module: str) -> None:
    """Each library of the ``postgres`` extra, missing (stubbed out as ``None``): one line naming the extra, exit 4."""
    probe = (
        f"import sys; sys.modules[{module!r}] = None\n"
        "from dialectic.cli.app import run\n"
        "sys.exit(run(['list', '--store', 'postgresql://nobody@127.0.0.1:1/none']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=workspace.root, env=workspace.environ(None), capture_output=True, text=True
    )
    assert result.returncode == EXIT_CONFIG_ERROR, result.stderr
    assert result.stderr == (
        f"error: a postgresql:// store needs the 'postgres' extra, which is not installed (no module named "
        f"'{module}'): pip install 'dialectic-debate[postgres]'\n"
    )


def test_a_database_that_cannot_be_reached_is_one_line_without_the_password(workspace: Workspace) -> None:
    pytest.importorskip("psycopg")
    result = workspace.run("list", "--store", "postgres://someone:secret@127.0.0.1:1/none")
    assert result.returncode == EXIT_GENERAL_ERROR, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: cannot open the debate store postgres://someone:***@127.0.0.1:1/none: "
    ), result.stderr
    assert "secret" not in result.stderr
