"""``dialectic batch`` against the fake server: many debates, a failing one, bad input, and resume after SIGKILL."""

from __future__ import annotations

import json
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from dialectic.batch.store import BatchStore
from dialectic.core.ledger import debate_totals
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script, default_reply
from dialectic.store import open_store
from dialectic.testing.fake_server import FakeLLMServer

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

COMPLETION_PATHS = ("/v1/responses", "/v1/chat/completions")
ROLES = ("architect", "security")


def completions(server: FakeLLMServer) -> int:
    return sum(1 for path in server.paths() if path in COMPLETION_PATHS)


def write_problems(path: Path, count: int, *, poison: int | None = None) -> Path:
    lines = [
        json.dumps({"id": f"p{i:02d}", "problem": f"Design cache number {i}" + (" POISON" if i == poison else "")})
        for i in range(count)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def result_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_batch_completes_every_debate_and_writes_one_line_each(workspace: Workspace) -> None:
    with FakeLLMServer(latency_s=0.01) as server:
        config = workspace.write_config(server, ROLES)
        problems = write_problems(workspace.root / "problems.jsonl", 20)
        out = workspace.root / "results.jsonl"
        result = workspace.run("batch", str(problems), "-c", str(config), "-o", str(out), "--concurrency", "5")
    assert result.returncode == 0, result.stderr
    lines = result_lines(out)
    assert sorted(line["id"] for line in lines) == [f"p{i:02d}" for i in range(20)]
    assert {line["status"] for line in lines} == {"completed"}
    assert all(line["solution"] and line["calls"] > 0 and line["error"] is None for line in lines)
    assert len({line["debate_id"] for line in lines}) == 20
    assert len(workspace.debate_ids()) == 20
    assert "20/20 debates finished (20 completed)" in result.stdout
    assert "time per debate: mean" in result.stdout and "cost: $" in result.stdout


def fail_on_poison(request: CompletionRequest) -> Script:
    if any("POISON" in message.content for message in request.messages):
        return RuntimeError("injected fault")
    return default_reply(request)


def test_a_failing_debate_is_recorded_and_the_others_complete(workspace: Workspace, fast_retry: dict[str, int]) -> None:
    with FakeLLMServer(fail_on_poison) as server:
        config = workspace.write_config(server, ROLES, retry=fast_retry)
        problems = write_problems(workspace.root / "problems.jsonl", 6, poison=2)
        out = workspace.root / "results.jsonl"
        result = workspace.run("batch", str(problems), "-c", str(config), "-o", str(out), "--concurrency", "3")
    assert result.returncode == 1, result.stderr
    by_id = {line["id"]: line for line in result_lines(out)}
    assert len(by_id) == 6
    assert by_id["p02"]["status"] == "failed" and by_id["p02"]["error"]
    assert by_id["p02"]["debate_id"] is not None
    assert all(by_id[f"p{i:02d}"]["status"] == "completed" for i in (0, 1, 3, 4, 5))
    assert "p02: failed:" in result.stderr
    assert "(5 completed, 1 failed)" in result.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": "a", "problem": "x"}\nnot json\n', "line 2: not JSON"),
        ('{"id": "a", "problem": "x"}\n{"id": "a", "problem": "y"}\n', "line 2: id 'a' repeats line 1"),
        ('{"id": "a"}\n', 'line 1: "problem" must be a non-empty string'),
        ("[1, 2]\n", "line 1: expected an object"),
        ("\n", "no problems"),
    ],
)
def test_bad_problems_are_one_line_errors_before_any_call(workspace: Workspace, content: str, message: str) -> None:
    with FakeLLMServer() as server:
        config = workspace.write_config(server, ROLES)
        problems = workspace.root / "problems.jsonl"
        problems.write_text(content, encoding="utf-8")
        result = workspace.run("batch", str(problems), "-c", str(config))
        assert server.paths() == []
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert not (workspace.home / "batch.sqlite3").exists()


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["missing.jsonl"], 2),
        (["/dev/zero"], 2),
        (["."], 2),
        (["--resume", "batch-20990101-000000-ABCD"], 2),
        ([], 2),
        (["problems.jsonl", "--concurrency", "0"], 2),
        (["problems.jsonl", "-c", "missing-config.json"], 4),  # a configuration error, as `debate` reports it
    ],
)
def test_missing_input_is_a_one_line_error(workspace: Workspace, args: list[str], code: int) -> None:
    write_problems(workspace.root / "problems.jsonl", 2)
    result = workspace.run("batch", *args)
    assert result.returncode == code, result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr


def batch_items(home: Path) -> list[Any]:
    path = home / "batch.sqlite3"
    if not path.exists():
        return []
    with BatchStore(path) as store:
        runs = [row[0] for row in store._db.execute("SELECT id FROM batch_runs")]
        return store.items(runs[0]) if runs else []


def test_resume_after_kill_repeats_no_saved_call(workspace: Workspace) -> None:
    count, concurrency = 8, 4
    with FakeLLMServer(latency_s=0.1) as server:
        config = workspace.write_config(server, ROLES)
        problems = write_problems(workspace.root / "problems.jsonl", count)
        baseline_out = workspace.root / "baseline.jsonl"
        baseline = workspace.run(
            "batch", str(problems), "-c", str(config), "-o", str(baseline_out), "--store", str(workspace.root / "b")
        )
        assert baseline.returncode == 0, baseline.stderr
        needed = completions(server)

        before_run = completions(server)
        out = workspace.root / "results.jsonl"
        process = workspace.spawn(
            "batch", str(problems), "-c", str(config), "-o", str(out), "--concurrency", str(concurrency)
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                assert process.poll() is None, "the batch ended before the test could kill it"
                assert time.monotonic() < deadline, "the batch never got half way"
                items = batch_items(workspace.home)
                if sum(1 for item in items if item.finished) >= 2 and any(item.status == "running" for item in items):
                    break
                time.sleep(0.02)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
        time.sleep(0.2)  # let the server record any request that was still on the wire
        killed = {item.id: item for item in batch_items(workspace.home)}
        finished_before = {i: item.debate_id for i, item in killed.items() if item.finished}
        run_id = (workspace.root / "run.stderr").read_text(encoding="utf-8").split()[1].rstrip(":")

        resumed = workspace.run("batch", "--resume", run_id)
        assert resumed.returncode == 0, resumed.stderr
        total = completions(server) - before_run

    # only calls in flight at the kill (at most two per running debate) are made again
    assert needed <= total <= needed + concurrency * len(ROLES), (needed, total)
    lines = result_lines(out)
    assert sorted(line["id"] for line in lines) == [f"p{i:02d}" for i in range(count)]
    assert {line["status"] for line in lines} == {"completed"}
    by_id = {line["id"]: line for line in lines}
    assert all(by_id[i]["debate_id"] == debate_id for i, debate_id in finished_before.items())
    # a kill between a debate's creation and its first event (no call made yet) leaves that debate unused
    store = open_store(workspace.home)
    try:
        unused = [i for i in workspace.debate_ids() if i not in {line["debate_id"] for line in lines}]
        assert all(debate_totals(store.load(i)).calls == 0 for i in unused), "a debate was started again"
    finally:
        store.close()
    assert f"{count}/{count} debates finished" in resumed.stdout


def test_the_help_names_the_flags(workspace: Workspace) -> None:
    result = workspace.run("batch", "--help")
    assert result.returncode == 0
    for flag in ("--config", "--output", "--concurrency", "--resume", "--store"):
        assert flag in result.stdout


def test_sigterm_stops_the_batch_cleanly_and_resume_finishes_it(workspace: Workspace) -> None:
    with FakeLLMServer(latency_s=0.1) as server:
        config = workspace.write_config(server, ROLES)
        problems = write_problems(workspace.root / "problems.jsonl", 6)
        out = workspace.root / "results.jsonl"
        process = workspace.spawn("batch", str(problems), "-c", str(config), "-o", str(out), "--concurrency", "2")
        deadline = time.monotonic() + 60
        while not any(item.finished for item in batch_items(workspace.home)):
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 143
        stderr = (workspace.root / "run.stderr").read_text(encoding="utf-8")
        assert "stopped with" in stderr and "resume with: dialectic batch --resume batch-" in stderr
        statuses = {workspace.export(i)["status"] for i in workspace.debate_ids()}
        assert "running" not in statuses  # the debates in flight were saved as interrupted
        run_id = stderr.split()[1].rstrip(":")
        resumed = workspace.run("batch", "--resume", run_id)
    assert resumed.returncode == 0, resumed.stderr
    lines = result_lines(out)
    assert sorted(line["id"] for line in lines) == [f"p{i:02d}" for i in range(6)]
    assert {line["status"] for line in lines} == {"completed"}


def test_notify_posts_once_for_each_finished_debate_and_resume_keeps_the_flags(workspace: Workspace) -> None:
    from tests.hook_receiver import SECRET, HookReceiver

    with HookReceiver().running() as receiver, FakeLLMServer(latency_s=0.01) as server:
        config = workspace.write_config(server, ROLES)
        problems = write_problems(workspace.root / "problems.jsonl", 3)
        marker = workspace.root / "ran.txt"
        code = "import os, sys; open(sys.argv[1], 'a').write(os.environ['DIALECTIC_DEBATE_ID'] + chr(10))"
        command = shlex.join([sys.executable, "-c", code, str(marker)])
        flags = ("--notify", receiver.url, "--on-complete", command)
        env = {"DIALECTIC_HOOK_SECRET": SECRET}
        result = workspace.run("batch", str(problems), "-c", str(config), "-k", "2", *flags, env=env)
        assert result.returncode == 0, result.stderr
        posts = receiver.wait_for(3, timeout=5)
        run_id = result.stderr.split("batch ", 1)[1].split(":", 1)[0]
        again = workspace.run("batch", "--resume", run_id, env=env)  # nothing left to run: no hook fires again
        assert again.returncode == 0, again.stderr
    assert len(posts) == 3 and all(post.signed_with(SECRET) for post in posts)
    assert sorted(post.json()["debateId"] for post in posts) == sorted(workspace.debate_ids())
    assert {post.json()["status"] for post in posts} == {"completed"}
    assert sorted(marker.read_text(encoding="utf-8").split()) == sorted(workspace.debate_ids())
    assert len(receiver.received) == 3


def test_a_bad_notify_url_is_refused_before_a_batch_is_created(workspace: Workspace) -> None:
    problems = write_problems(workspace.root / "problems.jsonl", 2)
    result = workspace.run("batch", str(problems), "--notify", "ftp://example.org/hook")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: --notify ftp://example.org/hook: not an http:// or https:// URL"
    ]
    assert workspace.debate_ids() == []
