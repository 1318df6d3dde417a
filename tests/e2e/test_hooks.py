"""Post-debate hooks through the installed command, against a real webhook receiver on 127.0.0.1.

Every finished debate (completed or failed) gets exactly one signed POST; a receiver that is down
or answers 500 costs the debate nothing: the same exit code, output and saved state, and no long
wait (the configured back-off is a few milliseconds). ``--on-complete`` runs a command with the
debate's id and export path in its environment.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Workspace
from tests.hook_receiver import SECRET, HookReceiver, closed_port_url

pytestmark = pytest.mark.e2e

PROBLEM = "Design a rate limiter"
FAST = {"maxAttempts": 3, "backoffMs": 5, "waitMs": 3000}
"""Hook settings whose retries take milliseconds, so a dead receiver's cost is measurable as ~nothing."""
SIGNED = {"DIALECTIC_HOOK_SECRET": SECRET}


def scripted_config(workspace: Workspace, hooks: dict[str, Any] | None = None, **debate: Any) -> Path:
    agents = [
        {"id": f"agent-{role}", "name": role.title(), "role": role, "provider": "scripted", "model": "m"}
        for role in ("architect", "kiss")
    ]
    judge = {"id": "judge-main", "name": "Judge", "role": "generalist", "provider": "scripted", "model": "m"}
    data: dict[str, Any] = {"agents": agents, "judge": judge, "debate": {"rounds": 1, **debate}}
    if hooks is not None:
        data["hooks"] = hooks
    path = workspace.root / "scripted.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def saved(workspace: Workspace, debate_id: str) -> dict[str, Any]:
    """What a run of the debate decided: its saved status, solution and rounds (ids and times aside)."""
    data = workspace.export(debate_id)
    contributions = [(c["agentId"], c["type"], c["content"]) for r in data["rounds"] for c in r["contributions"]]
    return {"status": data["status"], "solution": data["finalSolution"]["description"], "contributions": contributions}


def test_one_signed_post_per_finished_debate(workspace: Workspace) -> None:
    with HookReceiver().running() as receiver:
        config = scripted_config(workspace)
        out = workspace.root / "out.json"
        result = workspace.run(
            "debate", PROBLEM, "--config", str(config), "--notify", receiver.url, "-o", str(out), env=SIGNED
        )
        assert result.returncode == 0, result.stderr
        (debate_id,) = workspace.debate_ids()
        posts = receiver.wait_for(1, timeout=1)
    assert len(posts) == 1
    post = posts[0]
    assert post.signed_with(SECRET)
    assert not post.signed_with("another secret")
    assert abs(post.timestamp - time.time()) < 120
    assert post.headers["Content-Type"] == "application/json"
    payload = post.json()
    assert payload["debateId"] == debate_id
    assert payload["status"] == "completed"
    assert payload["problem"] == PROBLEM
    assert payload["solutionSummary"]
    assert payload["usage"]["calls"] > 0
    assert payload["links"] == {"export": str(out.resolve())}
    assert "warning" not in result.stderr


def test_hooks_from_the_config_file_fire_once_with_their_own_secret(workspace: Workspace) -> None:
    with HookReceiver().running() as receiver:
        hooks = {"onComplete": [{"url": receiver.url, "secretEnv": "MY_HOOK_SECRET"}], **FAST}
        config = scripted_config(workspace, hooks)
        result = workspace.run("debate", PROBLEM, "--config", str(config), env={"MY_HOOK_SECRET": "mine"})
        assert result.returncode == 0, result.stderr
        posts = receiver.wait_for(1, timeout=1)
    assert len(posts) == 1
    assert posts[0].signed_with("mine")


def test_a_failed_debate_is_posted_with_its_status_and_keeps_its_exit_code(workspace: Workspace) -> None:
    config = scripted_config(workspace)
    plain = workspace.run("debate", PROBLEM, "--config", str(config), "--budget-tokens", "600")
    with HookReceiver().running() as receiver:
        hooked = workspace.run(
            "debate", PROBLEM, "--config", str(config), "--budget-tokens", "600", "--notify", receiver.url, env=SIGNED
        )
        posts = receiver.wait_for(1, timeout=1)
    assert plain.returncode != 0
    assert hooked.returncode == plain.returncode
    assert len(posts) == 1
    payload = posts[0].json()
    assert payload["status"] == "failed"
    assert "budget" in payload["error"]
    assert payload["links"] == {}


def test_a_receiver_that_is_down_costs_the_debate_nothing(workspace: Workspace) -> None:
    config = scripted_config(workspace)
    started = time.monotonic()
    plain = workspace.run("debate", PROBLEM, "--config", str(config))
    plain_s = time.monotonic() - started
    dead = closed_port_url()
    hooked_config = scripted_config(workspace, {"onComplete": [dead], **FAST})
    started = time.monotonic()
    hooked = workspace.run("debate", PROBLEM, "--config", str(hooked_config), env=SIGNED)
    hooked_s = time.monotonic() - started
    assert hooked.returncode == plain.returncode == 0, hooked.stderr
    assert hooked.stdout == plain.stdout
    first, second = workspace.debate_ids()[::-1]
    assert saved(workspace, second) == saved(workspace, first)
    warnings = [line for line in hooked.stderr.splitlines() if "webhook" in line]
    assert len(warnings) == 1
    assert warnings[0].startswith("warning: ") and "not delivered" in warnings[0] and "3 attempt(s)" in warnings[0]
    assert hooked_s < plain_s + 5  # the hook's own share is its few milliseconds of back-off (slack for a busy CI)


def test_a_dead_receiver_with_the_default_settings_costs_seconds_not_a_hang(workspace: Workspace) -> None:
    config = scripted_config(workspace, {"onComplete": [closed_port_url()], "waitMs": 1000, "backoffMs": 400})
    result = workspace.run("debate", PROBLEM, "--config", str(config), timeout=60)
    assert result.returncode == 0, result.stderr
    assert "not delivered" in result.stderr


def test_a_500_then_200_is_retried_and_delivered_once(workspace: Workspace) -> None:
    with HookReceiver(statuses=[500]).running() as receiver:
        config = scripted_config(workspace, {"onComplete": [receiver.url], **FAST})
        result = workspace.run("debate", PROBLEM, "--config", str(config), env=SIGNED)
        assert result.returncode == 0, result.stderr
        posts = receiver.wait_for(2, timeout=1)
    assert len(posts) == 2  # the 500, then the one taken
    assert posts[0].body == posts[1].body
    assert all(post.signed_with(SECRET) for post in posts)
    assert "warning" not in result.stderr


def test_on_complete_gets_the_debate_id_and_the_export_path(workspace: Workspace) -> None:
    config = scripted_config(workspace)
    seen = workspace.root / "seen.json"
    code = (
        "import json, os, sys; "
        "json.dump({k: os.environ.get(k) for k in ('DIALECTIC_DEBATE_ID', 'DIALECTIC_EXPORT', 'DIALECTIC_STATUS')}"
        ", open(sys.argv[1], 'w'))"
    )
    command = shlex.join([sys.executable, "-c", code, str(seen)])
    out = workspace.root / "result.json"
    result = workspace.run("debate", PROBLEM, "--config", str(config), "-o", str(out), "--on-complete", command)
    assert result.returncode == 0, result.stderr
    (debate_id,) = workspace.debate_ids()
    assert json.loads(seen.read_text(encoding="utf-8")) == {
        "DIALECTIC_DEBATE_ID": debate_id,
        "DIALECTIC_EXPORT": str(out.resolve()),
        "DIALECTIC_STATUS": "completed",
    }


def test_a_failing_on_complete_command_is_a_warning_only(workspace: Workspace) -> None:
    config = scripted_config(workspace)
    command = shlex.join([sys.executable, "-c", "raise SystemExit(7)"])
    result = workspace.run("debate", PROBLEM, "--config", str(config), "--on-complete", command)
    assert result.returncode == 0
    assert "on-complete command failed: exit code 7" in result.stderr


def test_a_bad_notify_url_is_refused_before_a_debate_is_created(workspace: Workspace) -> None:
    config = scripted_config(workspace)
    result = workspace.run("debate", PROBLEM, "--config", str(config), "--notify", "ftp://example.com/x")
    assert result.returncode == 2
    assert "--notify ftp://example.com/x" in result.stderr
    assert workspace.debate_ids() == []


def test_resume_fires_the_hooks_when_the_resumed_debate_finishes(workspace: Workspace) -> None:
    config = scripted_config(workspace)
    failed = workspace.run("debate", PROBLEM, "--config", str(config), "--budget-tokens", "600")
    assert failed.returncode != 0
    (debate_id,) = workspace.debate_ids()
    with HookReceiver().running() as receiver:
        result = workspace.run("resume", debate_id, "--budget-tokens", "1000000", "--notify", receiver.url, env=SIGNED)
        assert result.returncode == 0, result.stderr
        posts = receiver.wait_for(1, timeout=1)
    assert [post.json()["status"] for post in posts] == ["completed"]
    assert posts[0].json()["debateId"] == debate_id
