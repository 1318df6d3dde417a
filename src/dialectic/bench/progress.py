"""The progress display on stderr: one bar per arm, items done, the running accuracy and failed items.

A failed item also gets a line saying why (the run goes on without it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from dialectic.bench.records import ItemResult
from dialectic.bench.runner import ArmTally


class RichProgress:
    """A :class:`~dialectic.bench.runner.ProgressSink` drawn with Rich (plain lines when not a terminal)."""

    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            TextColumn("{task.description:<22}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("accuracy {task.fields[accuracy]}"),
            TextColumn("{task.fields[failed]}"),
            TimeElapsedColumn(),
            console=console,
        )
        self._tasks: dict[str, TaskID] = {}
        self._tallies: dict[str, ArmTally] = {}

    def begin(self, arms: Sequence[str], total: int, done: Mapping[str, ArmTally]) -> None:
        for arm in arms:
            tally = done.get(arm, ArmTally())
            self._tallies[arm] = tally
            self._tasks[arm] = self._progress.add_task(
                arm, total=total, completed=tally.done, accuracy=_accuracy(tally), failed=_failed(tally)
            )

    def advance(self, result: ItemResult) -> None:
        tally = self._tallies[result.arm].add(result)
        self._tallies[result.arm] = tally
        self._progress.update(self._tasks[result.arm], advance=1, accuracy=_accuracy(tally), failed=_failed(tally))
        if result.failure is not None:
            self._progress.console.print(f"{result.arm} {result.item_id}: failed ({result.failure}); going on")

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()


def _accuracy(tally: ArmTally) -> str:
    return f"{100 * tally.correct / tally.done:5.1f}%" if tally.done else "    –"


def _failed(tally: ArmTally) -> str:
    return f"{tally.failed} failed" if tally.failed else ""
