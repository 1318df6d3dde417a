"""A hostile-input matrix over the newer surfaces, through the installed command: configuration typos, batch,
bench, memory, receipts (``verify``, ``--sign-key``, ``--public-key``), human turn files, hooks, replay and the
servers' flags (``mcp``, ``serve``).

Every run has its address space capped at :data:`MEMORY_CAP` (``RLIMIT_AS``), so a number that would allocate
(``-k 1000000000`` used to grow past 15 GB) fails the test instead of the machine. Every refused input: the
right exit code, one ``error:`` line on stderr naming the cause, no traceback, nothing on stdout, no request
to the model. The accepted cases run to their end under the same cap. MCP's tools get their own matrix over
stdio and HTTP (``tests/mcp/test_hostile_calls.py``).
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from dialectic.testing.fake_server import FakeLLMServer

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

MEMORY_CAP = 300 * 1024 * 1024
"""The address space every command of this matrix may have (the issue's bar: RSS under 300 MB)."""
ID = r"deb-\d{8}-\d{6}-[0-9A-F]{4}"
HUGE = "1000000000"
BEYOND_SQLITE = str(10**30)
SPACES = " " * 20


def capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_capped(workspace: Workspace, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``dialectic *args`` in the workspace, as :meth:`Workspace.run` runs it, under :data:`MEMORY_CAP`."""
    return subprocess.run(
        [workspace.executable, *args],
        cwd=workspace.root,
        env=workspace.environ(None),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=capped,
        check=False,
    )


def assert_one_error(result: subprocess.CompletedProcess[str], code: int, needle: str) -> None:
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr and "unexpected" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and needle in errors[0], result.stderr
    assert not [line for line in result.stderr.splitlines() if not line.startswith(("error: ", "warning: "))]
    assert result.stdout == ""


# --- the files a case needs ---------------------------------------------------------------------------------

Setup = Callable[["Workspace", FakeLLMServer], None]


def config(change: Callable[[dict[str, Any]], Any] | None = None, name: str = "debate-config.json") -> Setup:
    """``name``: two agents and a judge on the fake server, after ``change``."""

    def setup(workspace: Workspace, server: FakeLLMServer) -> None:
        path = workspace.write_config(server, name=name)
        data = json.loads(path.read_text(encoding="utf-8"))
        if change is not None:
            change(data)
        path.write_text(json.dumps(data), encoding="utf-8")

    return setup


def files(**written: str | bytes) -> Setup:
    """Files in the workspace (``_`` in a name stands for ``.``); ``fifo`` makes a FIFO named ``pipe``."""

    def setup(workspace: Workspace, server: FakeLLMServer) -> None:
        for name, content in written.items():
            path = workspace.root / name.replace("_", ".")
            if name == "fifo":
                os.mkfifo(workspace.root / "pipe")
            elif isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")

    return setup


def both(*setups: Setup) -> Setup:
    def setup(workspace: Workspace, server: FakeLLMServer) -> None:
        for each in setups:
            each(workspace, server)

    return setup


def private_key(workspace: Workspace, server: FakeLLMServer) -> None:
    """``private.pem``, an Ed25519 private key (given where the public key belongs)."""
    serialization = pytest.importorskip("cryptography.hazmat.primitives.serialization")
    ed25519 = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.ed25519")
    key = ed25519.Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    (workspace.root / "private.pem").write_bytes(pem)


def nothing(workspace: Workspace, server: FakeLLMServer) -> None:
    return None


def set_in(path: Sequence[str], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        place = data
        for key in path[:-1]:
            place = place.setdefault(key, {})
        place[path[-1]] = value

    return change


PROBLEMS = '{"id": "a", "problem": "Design a cache"}\n{"id": "b", "problem": "Design a queue"}\n'
DEEP = "[" * 100_000


@dataclass(frozen=True)
class Case:
    name: str
    setup: Setup
    args: tuple[str, ...]
    code: int
    needle: str


def case(name: str, setup: Setup, args: str | Sequence[str], code: int, needle: str) -> Case:
    return Case(name, setup, tuple(args.split()) if isinstance(args, str) else tuple(args), code, needle)


DEBATE = ("debate", "Design a cache")
CASES = [
    # configuration typos: the right cause, every key named, never a ceiling ignored
    case(
        "misspelt-section",
        config(lambda d: d.update(agnets=d.pop("agents"))),
        DEBATE,
        4,
        "`agnets`: unknown key — did you mean `agents`?",
    ),
    case(
        "misspelt-budget",
        config(set_in(["debate", "budget", "maxCostUSD"], 0.0001)),
        DEBATE,
        4,
        "`debate.budget.maxCostUSD`: unknown key — did you mean `debate.budget.maxCostUsd`?",
    ),
    case(
        "misspelt-budget-lenient",
        config(set_in(["debate", "budget", "maxCostUSD"], 0.0001)),
        (*DEBATE, "--lenient"),
        4,
        "did you mean `debate.budget.maxCostUsd`?",
    ),
    case(
        "misspelt-limit-strict-false",
        config(lambda d: d.update(strict=False, limits={"maxRound": 2})),
        DEBATE,
        4,
        "`limits.maxRound`: unknown key — did you mean `limits.maxRounds`?",
    ),
    case("misspelt-provider", config(), (*DEBATE, "--provider", "opneai"), 4, "did you mean `openai`?"),
    case("limit-past-its-ceiling", config(set_in(["limits", "maxRounds"], 10**9)), DEBATE, 4, "limits.maxRounds"),
    case(
        "infinite-budget",
        config(set_in(["debate", "budget", "maxCostUsd"], float("inf"))),
        DEBATE,
        4,
        "debate.budget.maxCostUsd: Input should be a finite number",
    ),
    case("retry-attempts-huge", config(set_in(["debate", "retry", "maxAttempts"], 10**9)), DEBATE, 4, "maxAttempts"),
    # batch
    case("batch-k-huge", both(config(), files(p_jsonl=PROBLEMS)), f"batch p.jsonl -k {HUGE}", 2, "--concurrency"),
    case("batch-k-zero", both(config(), files(p_jsonl=PROBLEMS)), "batch p.jsonl -k 0", 2, "between 1 and 1,000"),
    case(
        "batch-output-a-directory",
        both(config(), files(p_jsonl=PROBLEMS), lambda w, s: (w.root / "out").mkdir()),
        "batch p.jsonl -o out",
        2,
        "--output out is a directory",
    ),
    case(
        "batch-problem-over-the-limit",
        both(config(), files(p_jsonl=json.dumps({"id": "big", "problem": "x" * 5_000_000}) + "\n")),
        "batch p.jsonl",
        2,
        "p.jsonl, line 1: the problem has 5,000,000 characters, more than the limit of 100,000",
    ),
    case("batch-problems-a-device", config(), "batch /dev/zero", 2, "problems file /dev/zero is a device"),
    case("batch-problems-a-fifo", both(config(), files(fifo="")), "batch pipe", 2, "problems file pipe is a FIFO"),
    case(
        "batch-line-nested-deep",
        both(config(), files(p_jsonl='{"id": "a", "problem": ' + DEEP + "\n")),
        "batch p.jsonl",
        2,
        "line 1: not JSON (nested too deeply)",
    ),
    case(
        "batch-config-typo",
        both(config(set_in(["debate", "round"], 2)), files(p_jsonl=PROBLEMS)),
        "batch p.jsonl",
        4,
        "did you mean `debate.rounds`?",
    ),
    # bench
    case("bench-concurrency-huge", nothing, f"bench arithmetic --concurrency {HUGE}", 2, "--concurrency"),
    case("bench-items-huge", nothing, f"bench arithmetic -n {HUGE} --provider scripted", 2, "-n must be between"),
    case("bench-seed-huge", nothing, f"bench arithmetic --seed {BEYOND_SQLITE} --provider scripted", 2, "--seed"),
    # memory and listings
    case("list-limit-huge", nothing, f"list --limit {BEYOND_SQLITE}", 2, "--limit must be between 1 and 1,000,000"),
    case("memory-limit-huge", nothing, f"memory list --limit {BEYOND_SQLITE}", 2, "--limit must be between"),
    case("memory-forget-unknown", nothing, "memory forget deb-20250101-000000-0000", 2, "deb-20250101-000000-0000"),
    case("memory-count-huge", config(set_in(["debate", "memoryCount"], 10**9)), DEBATE, 4, "memoryCount"),
    # receipts
    case("verify-a-device", nothing, "verify /dev/zero", 2, "receipt file /dev/zero is a device"),
    case("verify-a-fifo", files(fifo=""), "verify ./pipe", 2, "receipt file pipe is a FIFO"),
    case("verify-nested-deep", files(deep_json=DEEP), "verify deep.json", 2, "nested too deeply"),
    case("verify-public-key-a-device", nothing, "verify x.json --public-key /dev/zero", 4, "public key /dev/zero"),
    case(
        "verify-public-key-words",
        files(words_pem="not a key at all\n"),
        "verify x.json --public-key words.pem",
        4,
        "words.pem is not an Ed25519 public key",
    ),
    case(
        "verify-public-key-private",
        private_key,
        "verify x.json --public-key private.pem",
        4,
        "private.pem is not an Ed25519 public key",
    ),
    case("sign-key-a-device", config(), (*DEBATE, "--sign-key", "/dev/zero"), 4, "signing key /dev/zero is a device"),
    case("sign-key-a-fifo", both(config(), files(fifo="")), (*DEBATE, "--sign-key", "pipe"), 4, "is a FIFO"),
    # hooks
    case("hook-timeout-zero", config(set_in(["hooks", "commandTimeoutMs"], 0)), DEBATE, 4, "commandTimeoutMs"),
    case("hook-typo", config(set_in(["hooks", "onCompleteComand"], "true")), DEBATE, 4, "`hooks.onCompleteCommand`"),
    case("notify-not-http", config(), (*DEBATE, "--notify", "ftp://x"), 2, "--notify ftp://x"),
    # replay
    case("replay-unknown-id", nothing, "replay deb-20250101-000000-0000", 2, "deb-20250101-000000-0000"),
    # the servers
    case(
        "mcp-blank-token",
        config(),
        ("mcp", "--transport", "http", "--host", "0.0.0.0", "--token", SPACES),
        2,
        "the token must not hold spaces",
    ),
    case("mcp-port-first", nothing, "mcp --transport http --port 99999", 2, "--port must be between 0 and 65535"),
    case(
        "serve-blank-token",
        config(),
        ("serve", "--host", "0.0.0.0", "--token", SPACES),
        2,
        "the token must not hold spaces",
    ),
]


@pytest.mark.parametrize("item", CASES, ids=[c.name for c in CASES])
def test_a_hostile_input_is_one_line_with_the_right_code(
    workspace: Workspace, server: FakeLLMServer, item: Case
) -> None:
    item.setup(workspace, server)
    before = set(workspace.debate_ids())
    result = run_capped(workspace, *item.args)
    assert_one_error(result, item.code, item.needle)
    assert server.requests == []
    assert set(workspace.debate_ids()) == before


# --- what still runs, under the same cap -------------------------------------------------------------------


def test_a_batch_with_a_large_k_runs_one_worker_per_problem(workspace: Workspace, server: FakeLLMServer) -> None:
    config()(workspace, server)
    (workspace.root / "p.jsonl").write_text(PROBLEMS, encoding="utf-8")
    result = run_capped(workspace, "batch", "p.jsonl", "-k", "1000", "-o", "out.jsonl")
    assert result.returncode == 0, result.stderr
    assert "2 problems (0 finished), 2 at a time" in result.stderr
    lines = [json.loads(line) for line in (workspace.root / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted((line["id"], line["status"]) for line in lines) == [("a", "completed"), ("b", "completed")]


def test_lenient_keeps_the_warnings_and_runs(workspace: Workspace, server: FakeLLMServer) -> None:
    config(set_in(["debate", "round"], 2))(workspace, server)
    strict = run_capped(workspace, *DEBATE)
    assert_one_error(strict, 4, "`debate.round`: unknown key — did you mean `debate.rounds`?")
    for args in ((*DEBATE, "--lenient"),):
        result = run_capped(workspace, *args)
        assert result.returncode == 0, result.stderr
        assert "warning: debate-config.json: `debate.round`: unknown key — did you mean `debate.rounds`?" in (
            result.stderr
        )
    config(lambda d: d.update(strict=False, debate={"round": 2, "rounds": 1}))(workspace, server)
    result = run_capped(workspace, *DEBATE)
    assert result.returncode == 0 and "did you mean `debate.rounds`?" in result.stderr, result.stderr


def test_a_bad_turn_file_is_refused_as_a_bad_mcp_turn_is(workspace: Workspace, server: FakeLLMServer) -> None:
    """The turn file's rules and ``submit_turn``'s are one (``check_turn_text``): no NUL byte, at most 256 KB."""
    path = workspace.write_config(server, ("architect",), format="free-form")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["agents"].append({"id": "agent-alice", "name": "Alice", "role": "security", "provider": "human"})
    path.write_text(json.dumps(data), encoding="utf-8")
    started = run_capped(workspace, *DEBATE)
    match = re.search(rf"Debate ({ID}) is waiting for a human turn", started.stderr)
    assert started.returncode == 0 and match is not None, started.stderr
    debate_id = match.group(1)
    (workspace.root / "nul.txt").write_bytes(b"A turn\x00with a NUL")
    (workspace.root / "big.txt").write_text("x" * (256 * 1024 + 1), encoding="utf-8")
    before = workspace.export(debate_id)
    for name, needle in (("nul.txt", "turn file nul.txt is not a UTF-8 text file"), ("big.txt", "larger than 256 KB")):
        result = run_capped(workspace, "resume", debate_id, "--turn-file", name)
        assert_one_error(result, 2, needle)
    assert workspace.export(debate_id) == before
    replayed = run_capped(workspace, "replay", debate_id, "--judge-provider", "opneai")
    assert_one_error(replayed, 4, "did you mean `openai`?")
