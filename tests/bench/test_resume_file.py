"""Resuming a run from its results file (``--resume results.json``) in a store that never saw it, and the
results file kept current while the run goes (so that a killed run leaves its finished items on disk)."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest

from dialectic.bench import checkpoint as checkpoint_module
from dialectic.bench.checkpoint import Checkpoint
from dialectic.bench.plan import BenchOptions, resume_from_results
from dialectic.bench.results_file import names_results_file, read_results
from dialectic.cli import bench_run
from dialectic.cli.interruptions import Terminated
from dialectic.core.errors import InvalidArgumentsError, ProviderAuthError
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script, ScriptedProvider, ScriptedReply

from .conftest import SCRIPTED_ARGS, Invoke, designed
from .test_summary import outcome_of

ARMS = "single,majority:3"
CALLS_PER_ITEM = 1 + 3


def item_of(request: CompletionRequest) -> int:
    return int(request.tag.split("/")[2].rsplit("-", 1)[1])


def items_called(provider: ScriptedProvider) -> set[str]:
    return {c.tag.split("/")[2] for c in provider.calls}


def finished(path: Path) -> dict[str, set[str]]:
    """The arms each item of a results file has a result of."""
    return {item["id"]: set(item["arms"]) for item in json.loads(path.read_text())["items"]}


def run_id_of(stderr: str) -> str:
    return stderr.split("bench run ", 1)[1].split(":", 1)[0]


def test_a_run_continues_from_its_committed_results_file_in_an_empty_store(
    invoke: Invoke, use_provider: Any, home: Path
) -> None:
    first = ScriptedProvider(designed)
    use_provider(first)
    args = ("arithmetic", "--arms", ARMS, *SCRIPTED_ARGS)
    started = invoke(*args, "-n", "2", "--store", "machine-a", "-o", "results.json")
    assert started.code == 0, started.stderr
    assert len(first.calls) == 2 * CALLS_PER_ITEM
    assert "on another machine, from the results file: dialectic bench --resume results.json" in started.stderr

    # A fresh machine: the repository (with the committed file) but no store.
    shutil.copy(home / "results.json", home / "committed.json")
    shutil.rmtree(home / "machine-a")
    second = ScriptedProvider(designed)
    use_provider(second)
    resumed = invoke(*args, "-n", "4", "--store", "machine-b", "--resume", "committed.json")
    assert resumed.code == 0, resumed.stderr
    assert "imported 4 finished results" in resumed.stderr
    assert items_called(second) == {"arith-0002", "arith-0003"}
    assert len(second.calls) == 2 * CALLS_PER_ITEM

    # Without -o, the file it came from is the one kept current: it now holds the four items, same run.
    document = json.loads((home / "committed.json").read_text())
    assert document["run"]["id"] == run_id_of(started.stderr) == run_id_of(resumed.stderr)
    assert document["run"]["n"] == 4
    assert finished(home / "committed.json") == {f"arith-{i:04d}": set(ARMS.split(",")) for i in range(4)}
    assert {arm["arm"]: arm["items"] for arm in document["arms"]} == {"single": 4, "majority:3": 4}

    # The same as one uninterrupted run of four items.
    use_provider(ScriptedProvider(designed))
    assert invoke(*args, "-n", "4", "--store", "machine-c", "-o", "whole.json").code == 0
    whole = json.loads((home / "whole.json").read_text())
    finals = lambda doc: [{k: v["final"] for k, v in i["arms"].items()} for i in doc["items"]]  # noqa: E731
    assert finals(document) == finals(whole)
    assert [a["correct"] for a in document["arms"]] == [a["correct"] for a in whole["arms"]]

    # Resumed again (the store now has the run too): nothing is left to do.
    third = ScriptedProvider(designed)
    use_provider(third)
    again = invoke("--resume", "committed.json", "--store", "machine-b", "-o", "again.json")
    assert again.code == 0, again.stderr
    assert third.calls == []
    assert "imported 0 finished results" in again.stderr
    assert finished(home / "again.json") == finished(home / "committed.json")


def failing_from(index: int) -> Any:
    def respond(request: CompletionRequest) -> Script:
        if request.tag.startswith("bench/") and item_of(request) >= index:
            return ProviderAuthError("key revoked", provider="scripted", status_code=401)
        return designed(request)

    return respond


def test_a_stopped_run_leaves_its_finished_items_in_the_results_file(
    invoke: Invoke, use_provider: Any, home: Path
) -> None:
    args = ("arithmetic", "-n", "4", "--arms", ARMS, *SCRIPTED_ARGS, "--concurrency", "1")
    use_provider(ScriptedProvider(failing_from(2)))
    stopped = invoke(*args, "--store", "machine-a", "-o", "results.json")
    assert stopped.code == 3
    assert "stopped with 4 of 8 results saved; results.json holds them" in stopped.stderr
    assert finished(home / "results.json") == {
        "arith-0000": {"single", "majority:3"},
        "arith-0001": {"single", "majority:3"},
    }

    second = ScriptedProvider(designed)
    use_provider(second)
    resumed = invoke(*args, "--store", "machine-b", "--resume", "results.json")
    assert resumed.code == 0, resumed.stderr
    assert items_called(second) == {"arith-0002", "arith-0003"}
    assert len(second.calls) == 2 * CALLS_PER_ITEM
    assert len(finished(home / "results.json")) == 4


def test_the_results_file_is_rewritten_as_items_finish(
    invoke: Invoke, use_provider: Any, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench_run, "CHECKPOINT_INTERVAL_S", 0.0)
    monkeypatch.setattr(checkpoint_module, "WRITE_SHARE", float("inf"))  # however long a write takes
    seen: dict[int, set[str]] = {}

    def respond(request: CompletionRequest) -> Script:
        index = item_of(request)
        if index not in seen:  # what a kill at this moment would leave on disk
            path = home / "results.json"
            seen[index] = set(finished(path)) if path.exists() else set()
        return designed(request)

    use_provider(ScriptedProvider(respond))
    out = invoke(
        "arithmetic", "-n", "4", "--arms", "single", *SCRIPTED_ARGS, "--concurrency", "1", "-o", "results.json"
    )
    assert out.code == 0, out.stderr
    assert seen == {i: {f"arith-{k:04d}" for k in range(i)} for i in range(4)}


def test_sigterm_stops_the_run_and_writes_the_results_file(invoke: Invoke, use_provider: Any, home: Path) -> None:
    def respond(request: CompletionRequest) -> Script:
        reply = designed(request)
        if item_of(request) == 2 and isinstance(reply, str):
            signal.raise_signal(signal.SIGTERM)
            return ScriptedReply(text=reply, delay_s=1e-6)  # one turn of the event loop, which sees the signal
        return reply

    use_provider(ScriptedProvider(respond))
    with pytest.raises(Terminated):
        invoke("arithmetic", "-n", "4", "--arms", "single", *SCRIPTED_ARGS, "--concurrency", "1", "-o", "r.json")
    assert set(finished(home / "r.json")) >= {"arith-0000", "arith-0001"}
    assert "arith-0003" not in finished(home / "r.json")


def write_jsonl(path: Path, n: int) -> None:
    rows = [{"id": f"q{i}", "question": f"What is the result of {i}+{i}?", "answer": 2 * i} for i in range(n)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_a_jsonl_run_resumes_with_its_dataset_at_another_path(invoke: Invoke, use_provider: Any, home: Path) -> None:
    write_jsonl(home / "old" / "data.jsonl", 3)
    use_provider(ScriptedProvider(lambda r: "\\boxed{4}"))
    assert invoke("jsonl", "old/data.jsonl", "-n", "2", "--arms", "single", *SCRIPTED_ARGS, "-o", "r.json").code == 0
    shutil.move(home / "old", home / "new")

    assert invoke("--resume", "r.json", "--store", "elsewhere").code == 2  # the old path is not here
    options = BenchOptions()
    with pytest.raises(InvalidArgumentsError, match="give the dataset: dialectic bench jsonl PATH --resume r.json"):
        resume_from_results(read_results(Path("r.json")), options)

    second = ScriptedProvider(lambda r: "\\boxed{4}")
    use_provider(second)
    out = invoke("jsonl", "new/data.jsonl", "--resume", "r.json", "--store", "elsewhere")
    assert out.code == 0, out.stderr
    assert len(second.calls) == 0  # -n 2 as before: both items are finished
    extended = invoke("jsonl", "new/data.jsonl", "-n", "3", "--resume", "r.json", "--store", "elsewhere")
    assert extended.code == 0, extended.stderr
    assert len(second.calls) == 1
    document = json.loads((home / "r.json").read_text())
    assert document["run"]["dataset"] == str((home / "new" / "data.jsonl").absolute())
    assert [i["arms"]["single"]["correct"] for i in document["items"]] == [False, False, True]


@pytest.fixture
def results_file(invoke: Invoke, use_provider: Any, home: Path) -> Path:
    use_provider(ScriptedProvider(designed))
    out = invoke("arithmetic", "-n", "3", "--arms", ARMS, *SCRIPTED_ARGS, "--store", "a", "-o", "results.json")
    assert out.code == 0, out.stderr
    return home / "results.json"


def edited(path: Path, change: Any) -> Path:
    document = json.loads(path.read_text())
    change(document)
    target = path.with_name("edited.json")
    target.write_text(json.dumps(document), encoding="utf-8")
    return target


def test_a_results_file_that_does_not_fit_is_refused_in_one_line(
    invoke: Invoke, use_provider: Any, results_file: Path
) -> None:
    use_provider(ScriptedProvider(designed))
    loaded = read_results(results_file)

    def refused(options: BenchOptions, match: str, path: Path = results_file) -> None:
        with pytest.raises(InvalidArgumentsError, match=match) as caught:
            resume_from_results(read_results(path), options)
        assert "\n" not in str(caught.value)

    refused(BenchOptions(arms="single"), "was started with --arms single,majority:3")
    refused(BenchOptions(seed=1), "was started with --seed 0")
    refused(BenchOptions(n=2), "has a result for item arith-0002, which this run's 2 items do not include")
    refused(BenchOptions(model="other"), "was started with --provider/--model/-c")

    def other_question(document: dict[str, Any]) -> None:
        document["items"][1]["question"] = "What is the result of 1+1?"

    refused(
        BenchOptions(),
        "item arith-0001 of .* is not the item arith-0001 of these questions",
        edited(results_file, other_question),
    )

    def other_fingerprint(document: dict[str, Any]) -> None:
        document["run"]["fingerprint"] = "0" * 16

    refused(BenchOptions(), "questions of run .* have changed", edited(results_file, other_fingerprint))

    def unknown_arm(document: dict[str, Any]) -> None:
        document["items"][0]["arms"]["debate:3x2"] = document["items"][0]["arms"]["single"]

    refused(
        BenchOptions(), "has results of arm debate:3x2, which run .* does not have", edited(results_file, unknown_arm)
    )

    # The CLI's exit codes, and files that are no results file at all.
    assert invoke("--resume", str(results_file), "--arms", "single", "--store", "b").code == 2
    Path("empty.json").write_text("{}", encoding="utf-8")
    Path("broken.json").write_text("{", encoding="utf-8")
    assert invoke("--resume", "empty.json", "--store", "b").code == 2
    assert invoke("--resume", "broken.json", "--store", "b").code == 2
    assert invoke("--resume", "absent.json", "--store", "b").code == 2

    # A store that already holds another run under the same id.
    def other_temperature(document: dict[str, Any]) -> None:
        document["run"]["temperature"] = 0.9

    assert invoke("--resume", str(edited(results_file, other_temperature)), "--store", "a").code == 2
    assert loaded.spec.n == 3 and len(loaded.results) == 6


def test_resume_tells_run_ids_from_results_files() -> None:
    assert not names_results_file("bench-20260101-120000-AB12")
    assert names_results_file("results.json")
    assert names_results_file("benchmarks/results/run")


def test_checkpoint_writes_at_once_then_at_most_once_per_interval() -> None:
    written: list[int] = []
    now = [0.0]
    checkpoint = Checkpoint(
        None, [outcome_of("single", 0, True)], lambda rs: written.append(len(rs)), interval_s=10, clock=lambda: now[0]
    )
    checkpoint.flush()
    assert written == []  # nothing new since the start
    for i, t in enumerate([100.0, 105.0, 109.0, 110.0, 111.0], start=1):
        now[0] = t
        checkpoint.advance(outcome_of("single", i, True))
    assert written == [2, 5]
    checkpoint.flush()
    checkpoint.flush()
    assert written == [2, 5, 6]
    assert checkpoint.writes == 3


def test_a_result_that_is_not_due_is_written_by_a_timer_on_the_event_loop() -> None:
    written: list[int] = []
    now = [0.0]

    async def run() -> None:
        checkpoint = Checkpoint(None, [], lambda rs: written.append(len(rs)), interval_s=10, clock=lambda: now[0])
        checkpoint.advance(outcome_of("single", 0, True))
        assert written == [1] and not checkpoint.pending
        now[0] = 4.0
        checkpoint.advance(outcome_of("single", 1, True))
        checkpoint.advance(outcome_of("single", 2, True))
        assert written == [1] and checkpoint.pending  # one timer, due 10 s after the last write
        checkpoint._timed_flush()  # what the loop calls when the timer is due
        assert written == [1, 3] and not checkpoint.pending
        now[0] = 20.0
        checkpoint.advance(outcome_of("single", 3, True))
        assert written == [1, 3, 4]

    asyncio.run(run())


def test_a_timed_write_that_fails_stops_the_run_at_the_next_result() -> None:
    def write(results: list[Any]) -> None:
        if len(results) > 1:
            raise InvalidArgumentsError("disk full")

    async def run() -> None:
        checkpoint = Checkpoint(None, [], write, interval_s=10, clock=lambda: 0.0)
        checkpoint.advance(outcome_of("single", 0, True))
        checkpoint.advance(outcome_of("single", 1, True))
        checkpoint._timed_flush()
        with pytest.raises(InvalidArgumentsError, match="disk full"):
            checkpoint.advance(outcome_of("single", 2, True))

    asyncio.run(run())


def test_writes_that_take_long_are_spaced_out() -> None:
    ticks = iter([0.0, 0.0, 1.0, 12.0, 19.0, 21.0, 21.0, 21.5])  # the first write takes a second
    written: list[int] = []
    checkpoint = Checkpoint(None, [], lambda rs: written.append(len(rs)), interval_s=10, clock=lambda: next(ticks))
    checkpoint.advance(outcome_of("single", 0, True))  # clock 0.0: due, written from 0.0 to 1.0
    checkpoint.advance(outcome_of("single", 1, True))  # clock 12.0: 12 s < 20 s (1 s / 5%) → waits
    checkpoint.advance(outcome_of("single", 2, True))  # clock 19.0 → waits
    checkpoint.advance(outcome_of("single", 3, True))  # clock 21.0 → written
    assert written == [1, 4]
