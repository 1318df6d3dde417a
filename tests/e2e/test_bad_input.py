"""Every bad input gets the right exit code and one clear line on stderr, and creates no debate."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import pytest

from dialectic.testing.fake_server import FakeLLMServer

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e


def assert_one_error_line(stderr: str, *needles: str) -> None:
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ")
    for needle in needles:
        assert needle in lines[0]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ([], "no problem given"),
        (["Design a cache", "--problem-file", "problem.md"], "not both"),
        (["--problem-file", "missing.md"], "not found"),
        (["--problem-file", "adir"], "is a directory"),
        (["--problem-file", "blank.md"], "is empty"),
        (["--problemDescription", "binary.md"], "is not a UTF-8 text file"),
        (["Design a cache", "--rounds", "0"], "--rounds must be at least 1"),
        (["Design a cache", "--rounds", "abc"], "--rounds"),
        (["Design a cache", "--answers", "answers.json"], "must hold a JSON object"),
        (["Design a cache", "--env-file", "missing.env"], "env file not found"),
        (["Design a cache", "--context", "missing-dir"], "context directory not found"),
    ],
)
def test_invalid_arguments_exit_2(workspace: Workspace, server: FakeLLMServer, args: list[str], needle: str) -> None:
    config = workspace.write_config(server)
    (workspace.root / "problem.md").write_text("Design a cache\n", encoding="utf-8")
    (workspace.root / "adir").mkdir()
    (workspace.root / "blank.md").write_text("  \n\t\n", encoding="utf-8")
    (workspace.root / "binary.md").write_bytes(bytes(range(256)))
    (workspace.root / "answers.json").write_text('["not", "an", "object"]', encoding="utf-8")
    result = workspace.run("debate", *args, "--config", str(config))
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert_one_error_line(result.stderr, needle)
    assert workspace.debate_ids() == []
    assert server.requests == []


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("bad.json", '{"agents": [\n  {"id": "a",\n}', "invalid JSON in bad.json at line 3"),
        ("bad.yaml", "agents:\n  - id: a\n    name: [oops\n", "invalid YAML in bad.yaml at line"),
        ("bad.toml", "[judge\n", "invalid TOML in bad.toml"),
        (
            "types.json",
            json.dumps({"agents": [{"id": "a", "name": "A", "role": "architect", "temperature": "hot"}]}),
            "agents[0].temperature: Input should be a valid number",
        ),
        (
            "provider.json",
            json.dumps({"agents": [{"id": "a", "name": "A", "role": "architect", "provider": "gemini"}]}),
            "unknown provider 'gemini'",
        ),
    ],
)
def test_config_errors_exit_4(workspace: Workspace, name: str, text: str, needle: str) -> None:
    (workspace.root / name).write_text(text, encoding="utf-8")
    result = workspace.run("debate", "Design a cache", "--config", name)
    assert result.returncode == 4, result.stderr
    assert_one_error_line(result.stderr, needle)
    assert workspace.debate_ids() == []


def test_unknown_provider_flag_exits_4(workspace: Workspace, server: FakeLLMServer) -> None:
    config = workspace.write_config(server)
    result = workspace.run("debate", "Design a cache", "-c", str(config), "--provider", "gemini")
    assert result.returncode == 4
    assert_one_error_line(result.stderr, "unknown provider 'gemini'")


def test_missing_api_key_exits_4_naming_the_variable(workspace: Workspace) -> None:
    config = workspace.write_config(None)
    result = workspace.run("debate", "Design a cache", "-c", str(config), env={"OPENAI_API_KEY": None})
    assert result.returncode == 4
    assert_one_error_line(result.stderr, "OPENAI_API_KEY")
    assert workspace.debate_ids() == []


def test_api_key_from_env_file_is_used(workspace: Workspace, server: FakeLLMServer) -> None:
    config = workspace.write_config(None)
    (workspace.root / ".env").write_text(
        f"OPENAI_API_KEY=from-dotenv\nOPENAI_BASE_URL={server.openai_base_url}\n", encoding="utf-8"
    )
    result = workspace.run("debate", "Design a cache", "-c", str(config), env={"OPENAI_API_KEY": None})
    assert result.returncode == 0, result.stderr
    assert server.requests and all(r.headers.get("authorization") == "Bearer from-dotenv" for r in server.requests)


def test_unknown_debate_id_exits_2(workspace: Workspace) -> None:
    for command in ("show", "export", "report", "resume"):
        result = workspace.run(command, "deb-20250101-000000-ABCD")
        assert result.returncode == 2, (command, result.stderr)
        assert_one_error_line(result.stderr, "no debate with id")


def test_provider_failing_every_call_exits_3_and_keeps_the_work_done(
    workspace: Workspace, fast_retry: dict[str, int]
) -> None:
    with FakeLLMServer(fail_after=2) as failing:
        config = workspace.write_config(failing, retry=fast_retry)
        result = workspace.run("debate", "Design a cache", "-c", str(config))
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    last = result.stderr.splitlines()[-1]
    assert last.startswith("error: ") and "500" in last
    saved = re.search(r"Debate (deb-\S+) saved to .*\(failed; continue it with: dialectic resume \1\)", result.stderr)
    assert saved is not None, result.stderr
    show = workspace.run("show", saved.group(1))
    assert show.returncode == 0
    assert "Status   failed" in show.stdout
    assert "Round 1: 2 proposals" in show.stdout
    exported = workspace.export(saved.group(1))
    assert exported["status"] == "failed"
    assert [c["type"] for c in exported["rounds"][0]["contributions"] if c.get("status", "ok") == "ok"] == [
        "proposal",
        "proposal",
    ]


def test_model_path_must_be_an_existing_gguf_file(workspace: Workspace) -> None:
    missing = workspace.run("debate", "Design a cache", "--model-path", "nope.gguf")
    assert missing.returncode == 2
    assert missing.stderr.splitlines()[-1] == "error: --model-path nope.gguf: no such file"
    (workspace.root / "weights.bin").write_bytes(b"x")
    wrong = workspace.run("debate", "Design a cache", "--model-path", "weights.bin")
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
    assert wrong.stderr.splitlines()[-1].endswith("expected a .gguf model file")
    assert workspace.debate_ids() == []
