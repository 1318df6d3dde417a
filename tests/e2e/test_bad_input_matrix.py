"""The bad-input matrix, run through the installed command against the fake server.

Every refused input: the right exit code, exactly one ``error:`` line on stderr and nothing
else, no traceback, no debate created, no request sent, and no file or directory created in
the workspace (so no partial output). Inputs whose right behaviour is a warning are checked
apart: the run goes on, and the warning says what was ignored.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from dialectic.core.domain import DebateState, Solution
from dialectic.testing.fake_server import FakeLLMServer

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

MB = 1024 * 1024
SECRET = "TOP-SECRET-CONTENT"
ID_PATTERN = r"deb-\d{8}-\d{6}-[0-9A-F]{4}"

Setup = Callable[["Workspace", FakeLLMServer], None]
ConfigChange = Callable[[dict[str, Any]], Any]


def tree(root: Path) -> set[str]:
    """Every path under ``root`` (symlinks not followed), to prove a refused command created nothing."""
    found: set[str] = set()
    for current, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            found.add(Path(current, name).relative_to(root).as_posix())
    return found


def assert_refused(
    workspace: Workspace, server: FakeLLMServer, result: Any, exit_code: int, needles: tuple[str, ...]
) -> None:
    assert result.returncode == exit_code, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert result.stdout == ""
    assert server.requests == []


def edit_config(workspace: Workspace, server: FakeLLMServer, change: ConfigChange) -> None:
    """Write the default ``debate-config.json`` (two agents on the fake server) after ``change``."""
    path = workspace.write_config(server)
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def config_in_subdirectory(workspace: Workspace, server: FakeLLMServer, change: ConfigChange) -> None:
    """``cfg/debate-config.json`` and a secret in ``outside/``, beside (not below) the config's directory."""
    (workspace.root / "cfg").mkdir()
    (workspace.root / "outside").mkdir()
    (workspace.root / "outside" / "secret.txt").write_text(SECRET, encoding="utf-8")
    path = workspace.write_config(server, name="cfg/debate-config.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def write(name: str, data: bytes) -> Setup:
    def setup(workspace: Workspace, server: FakeLLMServer) -> None:
        (workspace.root / name).write_bytes(data)

    return setup


def fifo(name: str) -> Setup:
    def setup(workspace: Workspace, server: FakeLLMServer) -> None:
        os.mkfifo(workspace.root / name)

    return setup


def symlink(name: str, target: str) -> Setup:
    def setup(workspace: Workspace, server: FakeLLMServer) -> None:
        (workspace.root / name).symlink_to(target)

    return setup


def a_file_named(name: str) -> Setup:
    return write(name, b"not a directory\n")


def a_directory(name: str) -> Setup:
    def setup(workspace: Workspace, server: FakeLLMServer) -> None:
        (workspace.root / name).mkdir()

    return setup


def agent_key(key: str, value: Any, *, index: int = 0) -> Setup:
    def setup(workspace: Workspace, server: FakeLLMServer) -> None:
        edit_config(workspace, server, lambda data: data["agents"][index].update({key: value}))

    return setup


def outside_prompt(section: str, key: str, value: str) -> Setup:
    def change(data: dict[str, Any]) -> None:
        target = data["agents"][0] if section == "agent" else data["judge"]
        target[key] = value

    def setup(workspace: Workspace, server: FakeLLMServer) -> None:
        config_in_subdirectory(workspace, server, change)
        if value == "link.md":
            (workspace.root / "cfg" / "link.md").symlink_to(workspace.root / "outside" / "secret.txt")

    return setup


def every_agent_disabled(workspace: Workspace, server: FakeLLMServer) -> None:
    edit_config(workspace, server, lambda data: [a.update({"enabled": False}) for a in data["agents"]])


def thirteen_agents(workspace: Workspace, server: FakeLLMServer) -> None:
    def change(data: dict[str, Any]) -> None:
        data["agents"] = [{**data["agents"][0], "id": f"a{i}"} for i in range(13)]

    edit_config(workspace, server, change)


def debate_rounds(rounds: int) -> Setup:
    def setup(workspace: Workspace, server: FakeLLMServer) -> None:
        edit_config(workspace, server, lambda data: data["debate"].update({"rounds": rounds}))

    return setup


def eval_config(workspace: Workspace, server: FakeLLMServer) -> None:
    evaluator = {"id": "e1", "name": "E", "model": "m", "provider": "openai", "baseUrl": server.openai_base_url}
    (workspace.root / "eval-config.json").write_text(json.dumps({"agents": [evaluator]}), encoding="utf-8")
    solved = DebateState(
        id="deb-20250101-000000-ABCD", problem="p", status="completed", final_solution=Solution(description="s")
    )
    (workspace.root / "debate.json").write_text(json.dumps(solved.to_json_dict()), encoding="utf-8")


def both(*setups: Setup) -> Setup:
    def setup(workspace: Workspace, server: FakeLLMServer) -> None:
        for each in setups:
            each(workspace, server)

    return setup


@dataclass(frozen=True)
class Case:
    id: str
    args: tuple[str, ...]
    exit_code: int
    needles: tuple[str, ...]
    setup: Setup | None = None
    own_config: bool = False
    """The setup writes the config itself (otherwise a working ``debate-config.json`` is written)."""
    store_may_appear: bool = False
    """``bench`` opens its results store before reading its inputs: the store is not a debate."""
    env: dict[str, str | None] = field(default_factory=dict)


DEBATE = ("debate", "Design a cache")

CASES = [
    # --- one reader of user-supplied files ---
    Case("problem-dev-zero", ("debate", "-f", "/dev/zero"), 2, ("problem file /dev/zero is a device",)),
    Case(
        "problem-symlink-dev-zero",
        ("debate", "-f", "zero.md"),
        2,
        ("problem file zero.md is a device",),
        symlink("zero.md", "/dev/zero"),
    ),
    Case("problem-fifo", ("debate", "-f", "p.fifo"), 2, ("problem file p.fifo is a FIFO",), fifo("p.fifo")),
    Case("problem-proc", ("debate", "-f", "/proc/self/environ"), 2, ("is a system file (under /proc)",)),
    Case(
        "problem-10-mb",
        ("debate", "-f", "big.md"),
        2,
        ("problem file big.md is larger than 1 MB", "limits.maxProblemChars"),
        write("big.md", b"a" * (10 * MB)),
    ),
    Case(
        "problem-over-char-limit",
        ("debate", "-f", "long.md"),
        2,
        ("200,000 characters, more than the limit of 100,000", "limits.maxProblemChars"),
        write("long.md", b"a" * 200_000),
    ),
    Case("problem-argument-over-limit", ("debate", "a" * 100_001), 2, ("100,001 characters",)),
    Case("config-dev-zero", (*DEBATE, "-c", "/dev/zero"), 4, ("config file /dev/zero is a device",)),
    Case("config-fifo", (*DEBATE, "-c", "c.fifo"), 4, ("config file c.fifo is a FIFO",), fifo("c.fifo")),
    Case(
        "config-2-mb",
        (*DEBATE, "-c", "big.json"),
        4,
        ("config file big.json is larger than 1 MB",),
        write("big.json", b" " * (2 * MB) + b"{}"),
    ),
    Case(
        "config-not-utf8",
        (*DEBATE, "-c", "latin.json"),
        4,
        ("config file latin.json is not a UTF-8 text file",),
        write("latin.json", '{"agents": [], "x": "caf\xe9"}'.encode("latin-1")),
    ),
    Case("config-proc", (*DEBATE, "-c", "/proc/version"), 4, ("is a system file (under /proc)",)),
    Case(
        "answers-dev-zero", (*DEBATE, "--clarify", "--answers", "/dev/zero"), 2, ("answers file /dev/zero is a device",)
    ),
    Case(
        "answers-2-mb",
        (*DEBATE, "--clarify", "--answers", "a.json"),
        2,
        ("answers file a.json is larger than 1 MB",),
        write("a.json", b'{"q1": "' + b"x" * (2 * MB) + b'"}'),
    ),
    Case("env-dev-zero", (*DEBATE, "--env-file", "/dev/zero"), 2, ("env file /dev/zero is a device",)),
    Case(
        "env-300-kb",
        (*DEBATE, "--env-file", "big.env"),
        2,
        ("env file big.env is larger than 256 KB",),
        write("big.env", b"# padding\n" * 30_000),
    ),
    Case(
        "system-prompt-dev-zero",
        (*DEBATE, "--allow-outside-prompts"),
        4,
        ("agent 'agent-architect' systemPromptPath /dev/zero is a device",),
        agent_key("systemPromptPath", "/dev/zero"),
    ),
    Case(
        "summary-prompt-fifo",
        DEBATE,
        4,
        ("summaryPromptPath", "is a FIFO"),
        both(agent_key("summaryPromptPath", "s.fifo"), fifo("s.fifo")),
    ),
    Case(
        "system-prompt-300-kb",
        DEBATE,
        4,
        ("systemPromptPath", "is larger than 256 KB"),
        both(agent_key("systemPromptPath", "big.md"), write("big.md", b"x" * (300 * 1024))),
    ),
    # --- configuration rules ---
    Case("config-typo", (*DEBATE, "-c", "typo.json"), 4, ("config file not found: typo.json",)),
    Case("agents-no-such-role", (*DEBATE, "--agents", "nosuchrole"), 2, ("roles available: architect, security",)),
    Case("every-agent-disabled", DEBATE, 4, ("every agent in the configuration is disabled",), every_agent_disabled),
    Case(
        "api-key-env-unset-with-base-url",
        DEBATE,
        4,
        ("MY_GATEWAY_KEY",),
        agent_key("apiKeyEnv", "MY_GATEWAY_KEY", index=1),
    ),
    Case("rounds-1e9", (*DEBATE, "--rounds", "1000000000"), 2, ("limit of 20 rounds", "limits.maxRounds")),
    Case("config-rounds-over-limit", DEBATE, 4, ("debate.rounds is 50", "limits.maxRounds"), debate_rounds(50)),
    Case("thirteen-agents", DEBATE, 4, ("13 agents would take part", "limits.maxAgents"), thirteen_agents),
    Case(
        "system-prompt-dotdot-outside",
        (*DEBATE, "-c", "cfg/debate-config.json"),
        4,
        ("systemPromptPath ../outside/secret.txt is outside", "--allow-outside-prompts"),
        outside_prompt("agent", "systemPromptPath", "../outside/secret.txt"),
        own_config=True,
    ),
    Case(
        "system-prompt-absolute-outside",
        (*DEBATE, "-c", "cfg/debate-config.json"),
        4,
        ("systemPromptPath /etc/hostname is outside",),
        outside_prompt("agent", "systemPromptPath", "/etc/hostname"),
        own_config=True,
    ),
    Case(
        "summary-prompt-symlink-outside",
        (*DEBATE, "-c", "cfg/debate-config.json"),
        4,
        ("summaryPromptPath link.md is outside",),
        outside_prompt("agent", "summaryPromptPath", "link.md"),
        own_config=True,
    ),
    Case(
        "clarification-prompt-outside",
        (*DEBATE, "-c", "cfg/debate-config.json"),
        4,
        ("clarificationPromptPath ../outside/secret.txt is outside",),
        outside_prompt("agent", "clarificationPromptPath", "../outside/secret.txt"),
        own_config=True,
    ),
    Case(
        "judge-prompt-outside",
        (*DEBATE, "-c", "cfg/debate-config.json"),
        4,
        ("judge 'judge-main' systemPromptPath ../outside/secret.txt is outside",),
        outside_prompt("judge", "systemPromptPath", "../outside/secret.txt"),
        own_config=True,
    ),
    # --- one checker of output paths, before the first call ---
    Case("output-parent-is-a-file", (*DEBATE, "-o", "afile/out.md"), 2, ("afile is a file",), a_file_named("afile")),
    Case("output-proc-version", (*DEBATE, "-o", "/proc/version"), 2, ("--output /proc/version is under /proc",)),
    Case("output-existing-directory", (*DEBATE, "-o", "adir"), 2, ("is a directory",), a_directory("adir")),
    Case("output-trailing-slash", (*DEBATE, "-o", "newdir/"), 2, ("names a directory",)),
    Case("output-fifo", (*DEBATE, "-o", "o.fifo"), 2, ("is a FIFO",), fifo("o.fifo")),
    Case("output-dev-zero", (*DEBATE, "-o", "/dev/zero"), 2, ("is a device",)),
    Case(
        "report-parent-is-a-file",
        (*DEBATE, "--report", "afile/sub/r"),
        2,
        ("--report", "afile is a file"),
        a_file_named("afile"),
    ),
    Case("report-proc", (*DEBATE, "--report", "/proc/r"), 2, ("--report /proc/r.md is under /proc",)),
    Case("report-sys-directory", (*DEBATE, "--report", "/sys/"), 2, ("is under /sys",)),
    # --- the other commands that read user files or write outputs ---
    Case("eval-config-dev-zero", ("eval", "-c", "/dev/zero", "-d", "x.json"), 4, ("eval config file /dev/zero",)),
    Case(
        "eval-debate-fifo",
        ("eval", "-c", "eval-config.json", "-d", "d.json"),
        2,
        ("debate file d.json is a FIFO",),
        both(eval_config, fifo("d.json")),
    ),
    Case(
        "eval-output-parent-is-a-file",
        ("eval", "-c", "eval-config.json", "-d", "debate.json", "-o", "afile/s.json"),
        2,
        ("afile is a file",),
        both(eval_config, a_file_named("afile")),
    ),
    Case(
        "bench-dataset-dev-zero",
        ("bench", "jsonl", "/dev/zero"),
        2,
        ("dataset /dev/zero is a device",),
        store_may_appear=True,
    ),
    Case(
        "bench-output-proc",
        ("bench", "arithmetic", "-n", "2", "-o", "/proc/out.json"),
        2,
        ("is under /proc",),
        store_may_appear=True,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input_is_refused_up_front(workspace: Workspace, server: FakeLLMServer, case: Case) -> None:
    if not case.own_config:
        workspace.write_config(server)
    if case.setup is not None:
        case.setup(workspace, server)
    before = tree(workspace.root)
    result = workspace.run(*case.args, env=case.env, timeout=60)
    assert_refused(workspace, server, result, case.exit_code, case.needles)
    assert workspace.debate_ids() == []
    after = tree(workspace.root)
    if case.store_may_appear:
        after = {p for p in after if p != "home" and not p.startswith("home/")}
    assert after == before


# --- refused on a stored debate: nothing added to it -------------------------------------------


def suspended_debate(workspace: Workspace, server: FakeLLMServer) -> str:
    config = workspace.write_config(server, clarificationsMaxIterations=1)
    result = workspace.run("debate", "Design a rate limiter", "-c", str(config), "--clarify")
    assert result.returncode == 0, result.stderr
    match = re.search(rf"Debate ({ID_PATTERN}) saved to ", result.stderr)
    assert match is not None, result.stderr
    return match.group(1)


STORED_CASES = [
    (("resume", "{id}", "-o", "afile/out.md"), 2, "afile is a file"),
    (("resume", "{id}", "--report", "/proc/r"), 2, "is under /proc"),
    (("resume", "{id}", "--answers", "/dev/zero"), 2, "answers file /dev/zero is a device"),
    (("resume", "{id}", "--env-file", "/dev/zero"), 2, "env file /dev/zero is a device"),
    (("export", "{id}", "-o", "afile/x.json"), 2, "afile is a file"),
    (("export", "{id}", "-o", "/proc/version"), 2, "is under /proc"),
    (("report", "{id}", "-o", "/proc/r"), 2, "is under /proc"),
    (("report", "{id}", "-o", "afile/r.md"), 2, "afile is a file"),
]


def test_bad_input_on_a_stored_debate_changes_nothing(workspace: Workspace, server: FakeLLMServer) -> None:
    debate_id = suspended_debate(workspace, server)
    (workspace.root / "afile").write_text("x", encoding="utf-8")
    sent = len(server.requests)
    snapshot = workspace.export(debate_id)
    before = {p for p in tree(workspace.root) if not p.startswith("home")}
    for args, exit_code, needle in STORED_CASES:
        result = workspace.run(*(a.format(id=debate_id) for a in args))
        assert result.returncode == exit_code, (args, result.stderr)
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], (args, result.stderr)
        assert "Traceback" not in result.stderr
    assert len(server.requests) == sent
    assert workspace.export(debate_id) == snapshot
    assert {p for p in tree(workspace.root) if not p.startswith("home")} == before


# --- inputs whose right behaviour is a warning ----------------------------------------------


def warnings_of(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning: ")]


def test_context_never_escapes_its_directory(workspace: Workspace, server: FakeLLMServer) -> None:
    workspace.write_config(server)
    docs = workspace.root / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("Use Redis.\n", encoding="utf-8")
    (docs / "zero").symlink_to("/dev/zero")
    (workspace.root / "secret.txt").write_text(SECRET, encoding="utf-8")
    (docs / "secret-link.txt").symlink_to(workspace.root / "secret.txt")
    os.mkfifo(docs / "pipe")
    result = workspace.run(*DEBATE, "--context", "docs", "--context-mode", "paste", timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "error:" not in result.stderr
    assert warnings_of(result.stderr) == [
        f"warning: context directory {docs.resolve()}: skipped pipe (is a FIFO, not a regular file), "
        "secret-link.txt (links outside the context directory), zero (links outside the context directory)"
    ]
    bodies = [json.dumps(r.body) for r in server.requests]
    assert any("Use Redis." in body for body in bodies)
    assert not any(SECRET in body for body in bodies)


def test_answers_without_clarify_is_a_warning(workspace: Workspace, server: FakeLLMServer) -> None:
    workspace.write_config(server)
    (workspace.root / "a.json").write_text('{"q1": "10k"}', encoding="utf-8")
    result = workspace.run(*DEBATE, "--answers", "a.json")
    assert result.returncode == 0, result.stderr
    assert warnings_of(result.stderr) == [
        "warning: --answers is not used without --clarify: no clarifying questions will be asked"
    ]
    assert result.stdout.strip()


def test_answers_with_unknown_ids_are_a_warning(workspace: Workspace, server: FakeLLMServer) -> None:
    workspace.write_config(server, clarificationsMaxIterations=1)
    (workspace.root / "a.json").write_text('{"q1": "10k", "q2": "EU", "q9": "?"}', encoding="utf-8")
    result = workspace.run(*DEBATE, "--clarify", "--answers", "a.json")
    assert result.returncode == 0, result.stderr
    assert warnings_of(result.stderr) == ["warning: ignoring answers to unknown or already answered questions: q9"]
    assert result.stdout.strip()


def test_resume_answers_with_unknown_ids_or_nothing_pending_are_warnings(
    workspace: Workspace, server: FakeLLMServer
) -> None:
    debate_id = suspended_debate(workspace, server)
    (workspace.root / "a.json").write_text('{"q1": "10k", "q2": "EU", "q7": "?"}', encoding="utf-8")
    resumed = workspace.run("resume", debate_id, "--answers", "a.json")
    assert resumed.returncode == 0, resumed.stderr
    assert warnings_of(resumed.stderr) == ["warning: ignoring answers to unknown or already answered questions: q7"]
    assert workspace.export(debate_id)["status"] == "completed"

    with FakeLLMServer(fail_after=2) as failing:
        config = workspace.write_config(failing, name="failing.json")
        failed = workspace.run(*DEBATE, "-c", str(config))
        assert failed.returncode == 3
        match = re.search(rf"Debate ({ID_PATTERN}) saved to ", failed.stderr)
        assert match is not None, failed.stderr
        again = workspace.run("resume", match.group(1), "--answers", "a.json")
    assert again.returncode == 3  # the endpoint still fails; the warning came first
    assert warnings_of(again.stderr)[0] == (
        f"warning: --answers: debate {match.group(1)} has no pending questions; the answers file is not used"
    )


def test_unknown_config_keys_when_lenient_and_roles_are_warnings(workspace: Workspace, server: FakeLLMServer) -> None:
    edit_config(workspace, server, lambda data: data["debate"].update({"round": 2}))
    result = workspace.run(*DEBATE, "--agents", "architect,nosuchrole", "--lenient")
    assert result.returncode == 0, result.stderr
    assert warnings_of(result.stderr) == [
        "warning: debate-config.json: `debate.round`: unknown key — did you mean `debate.rounds`?",
        "warning: --agents: no enabled agent has the role nosuchrole (roles available: architect, security)",
        "warning: only one agent (System Architect) takes part: there will be no critiques, and each refinement "
        "has only the agent's own proposal to work from",
    ]


def test_unparsable_env_line_is_a_warning(workspace: Workspace, server: FakeLLMServer) -> None:
    workspace.write_config(None)
    (workspace.root / ".env").write_text(
        f'export OPENAI_BASE_URL="{server.openai_base_url}"\nthis line = = "broken\n', encoding="utf-8"
    )
    result = workspace.run(*DEBATE)
    assert result.returncode == 0, result.stderr
    assert warnings_of(result.stderr) == [
        "warning: env file .env: could not parse statement starting at line 2; the statement is ignored"
    ]
    assert server.requests


# --- what the checks allow ------------------------------------------------------------------


def test_missing_default_config_keeps_the_built_in_defaults(workspace: Workspace, server: FakeLLMServer) -> None:
    result = workspace.run(*DEBATE, "--rounds", "1", env={"OPENAI_BASE_URL": server.openai_base_url})
    assert result.returncode == 0, result.stderr
    assert warnings_of(result.stderr)[0] == "warning: no config file at debate-config.json; using the built-in defaults"
    assert server.requests


def test_report_into_a_directory_is_named_after_the_debate(workspace: Workspace, server: FakeLLMServer) -> None:
    workspace.write_config(server)
    result = workspace.run(*DEBATE, "--report", "reports/")
    assert result.returncode == 0, result.stderr
    (debate_id,) = workspace.debate_ids()
    assert [p.name for p in (workspace.root / "reports").iterdir()] == [f"{debate_id}.md"]
    assert not (workspace.root / "reports.md").exists()
    again = workspace.run("report", debate_id, "-o", "reports")
    assert again.returncode == 0, again.stderr
    assert f"Generated report: reports/{debate_id}.md" in again.stderr


def test_outputs_respect_the_umask_and_dev_null_discards(workspace: Workspace, server: FakeLLMServer) -> None:
    workspace.write_config(server)
    previous = os.umask(0o027)
    try:
        result = workspace.run(*DEBATE, "-o", "out/solution.md", "--report", "/dev/null")
    finally:
        os.umask(previous)
    assert result.returncode == 0, result.stderr
    written = workspace.root / "out" / "solution.md"
    assert written.read_text(encoding="utf-8").strip()
    assert stat.S_IMODE(written.stat().st_mode) == 0o640
    assert stat.S_ISCHR(Path("/dev/null").stat().st_mode)
    assert "Generated report" not in result.stderr


def test_allow_outside_prompts_is_saved_for_resume(workspace: Workspace, server: FakeLLMServer) -> None:
    config_in_subdirectory(
        workspace,
        server,
        lambda data: (
            data["agents"][0].update({"systemPromptPath": "../outside/secret.txt"}),
            data["debate"].update({"clarificationsMaxIterations": 1}),
        ),
    )
    config = "cfg/debate-config.json"
    started = workspace.run(*DEBATE, "-c", config, "--clarify", "--allow-outside-prompts")
    assert started.returncode == 0, started.stderr
    (debate_id,) = workspace.debate_ids()
    assert workspace.export(debate_id)["status"] == "suspended"
    (workspace.root / "a.json").write_text('{"q1": "a", "q2": "b"}', encoding="utf-8")
    resumed = workspace.run("resume", debate_id, "--answers", "a.json")
    assert resumed.returncode == 0, resumed.stderr
    assert workspace.export(debate_id)["status"] == "completed"
    assert any(SECRET in json.dumps(r.body) for r in server.requests)
