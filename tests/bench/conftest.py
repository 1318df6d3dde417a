"""Bench test helpers: a scripted model whose accuracy is set by design, and an in-process CLI.

The designed model reads the call's tag (``bench/<arm>/<item id>/<who>[/round-r]``) and the
question, computes the right answer ``t`` and answers by the item's class ``i % 5``:

====== ======================= ================================= ==============================
class  greedy (single)         sample k (0-based)                debate agent a, round 1
====== ======================= ================================= ==============================
0      t+1                     t+1                               t+1
1      t+2                     t if k even, else t+10+k          as sample a
2      t                       t+1 if k even, else t             as sample a
3      no number / cut off     t                                 t for agent 1, t+1 for 2 and 3
4      t                       t                                 t
====== ======================= ================================= ==============================

In class 3, ``single`` is unparseable when ``i // 5`` is even and cut off by the token limit
(every continuation too) when it is odd. In debate rounds after the first an agent conforms:
it takes the others' answer when they agree and keeps its own otherwise. The engine's agents
and judge (dialectic arm) answer ``t`` when ``t`` is even and ``t+1`` when it is odd.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
import typer
from typer.testing import CliRunner

from dialectic.bench.tasks import eval_expression
from dialectic.cli import bench_run
from dialectic.cli.bench_command import bench
from dialectic.core.errors import DialecticError
from dialectic.llm.base import FINISH_LENGTH, CompletionRequest
from dialectic.llm.registry import ProviderPool
from dialectic.llm.scripted import Responder, Script, ScriptedProvider, ScriptedReply

QUESTION = re.compile(r"What is the result of ([0-9+*\-]+)\?")
BOXED = re.compile(r"\\boxed\{(-?\d+)\}")
SCRIPTED_ARGS = ["--provider", "scripted", "--model", "m"]


BENCHMARKS = Path(__file__).parents[2] / "benchmarks"


def benchmark_script(name: str) -> ModuleType:
    """``benchmarks/NAME.py`` loaded as a module (registered as an import would: its dataclasses look it up)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def truth_of(request: CompletionRequest) -> int:
    for message in request.messages:
        found = QUESTION.search(message.content)
        if found:
            return eval_expression(found.group(1))
    raise AssertionError(f"no question in the request tagged {request.tag}")


def boxed(value: int) -> str:
    return f"Working it out step by step, the result is \\boxed{{{value}}}."


def parity_answer(truth: int) -> int:
    return truth if truth % 2 == 0 else truth + 1


def engine_reply(request: CompletionRequest, value: int) -> Script:
    """Replies for the engine's calls: JSON for the judge's structured requests, text otherwise."""
    if request.json_schema is not None:
        if request.json_schema.name == "SynthesisOutput":
            data = {"description": f"The debate settles it: \\boxed{{{value}}}", "confidence": 90}
        else:
            data = {"confidence": 90, "reasoning": "agreed", "questions": []}
        return ScriptedReply(text=json.dumps(data), structured=data)
    return boxed(value)


def greedy(cls: int, i: int, t: int) -> Script:
    if cls == 3:
        if (i // 5) % 2 == 0:
            return "I cannot tell."
        return ScriptedReply(text="Let me think step by step: 12*3 = 36 and then", finish_reason=FINISH_LENGTH)
    return boxed({0: t + 1, 1: t + 2}.get(cls, t))


def sample(cls: int, k: int, t: int) -> int:
    if cls == 0:
        return t + 1
    if cls == 1:
        return t if k % 2 == 0 else t + 10 + k
    if cls == 2:
        return t + 1 if k % 2 == 0 else t
    return t


def debate_turn(request: CompletionRequest, cls: int, a: int, round_number: int, t: int) -> int:
    if round_number == 1:
        return t + 1 if cls == 3 and a > 0 else sample(cls, a, t)
    others = [int(v) for v in BOXED.findall(request.last_user)]
    own = int(BOXED.findall(request.messages[-2].content)[-1])
    assert len(others) == 2, "every agent sees the two others' previous replies"
    return others[0] if others[0] == others[1] else own


def designed(request: CompletionRequest) -> Script:
    t = truth_of(request)
    if not request.tag.startswith("bench/"):
        return engine_reply(request, parity_answer(t))
    _, _arm, item_id, who, *rest = request.tag.split("/")
    i = int(item_id.rsplit("-", 1)[1])
    cls = i % 5
    if who == "greedy":
        return greedy(cls, i, t)
    number = int(who.rsplit("-", 1)[1]) - 1
    if who.startswith("agent-"):
        return boxed(debate_turn(request, cls, number, int(rest[0].rsplit("-", 1)[1]), t))
    return boxed(sample(cls, number, t))


def parity(request: CompletionRequest) -> Script:
    """For the fake HTTP server (tags do not travel over HTTP): right exactly when the truth is even."""
    return engine_reply(request, parity_answer(truth_of(request)))


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str


Invoke = Callable[..., Outcome]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in a clean directory with the data dir under it (no stray .env, no .dialectic in the repo)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DIALECTIC_HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.fixture
def use_provider(monkeypatch: pytest.MonkeyPatch) -> Callable[[ScriptedProvider], None]:
    def install(provider: ScriptedProvider) -> None:
        monkeypatch.setattr(bench_run, "make_pool", lambda: ProviderPool(overrides={"scripted": provider}))

    return install


@pytest.fixture
def invoke(home: Path) -> Iterator[Invoke]:
    """``invoke(*args)`` runs ``dialectic bench *args`` in-process; a DialecticError gives its exit code."""
    app = typer.Typer()
    app.command("bench")(bench)

    @app.callback()
    def root() -> None:
        """Test app."""

    def run(*args: str) -> Outcome:
        result = CliRunner().invoke(app, ["bench", *args])
        code = result.exit_code
        if isinstance(result.exception, DialecticError):
            code = result.exception.exit_code
        elif result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return Outcome(code, result.stdout, result.stderr)

    yield run


def scripted(responder: Responder = designed) -> ScriptedProvider:
    return ScriptedProvider(responder)
