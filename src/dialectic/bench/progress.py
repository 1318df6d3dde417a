"""The progress display on stderr: one bar per arm, items done and the running accuracy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn


class RichProgress:
    """A :class:`~dialectic.bench.runner.ProgressSink` drawn with Rich (plain lines when not a terminal)."""

    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            TextColumn("{task.description:<22}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("accuracy {task.fields[accuracy]}"),
            TimeElapsedColumn(),
            console=console,
        )
        self._tasks: dict[str, TaskID] = {}
        self._counts: dict[str, tuple[int, int]] = {}

    def begin(self, arms: Sequence[str], total: int, done: Mapping[str, tuple[int, int]]) -> None:
        for arm in arms:
            finished, correct = done.get(arm, (0, 0))
            self._counts[arm] = (finished, correct)
            self._tasks[arm] = self._progress.add_task(
                arm, total=total, completed=finished, accuracy=_accuracy(finished, correct)
            )

    def advance(self, arm: str, correct: bool) -> None:
        finished, right = self._counts[arm]
        finished, right = finished + 1, right + int(correct)
        self._counts[arm] = (finished, right)
        self._progress.update(self._tasks[arm], advance=1, accuracy=_accuracy(finished, right))

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()


def _accuracy(finished: int, correct: int) -> str:
    return f"{100 * correct / finished:5.1f}%" if finished else "    –"
