"""``benchmarks/results_split.py``: arms moved to a results file of their own; both files still read back."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dialectic.bench.results_file import read_results

from .conftest import benchmark_script

ROOT = Path(__file__).parents[2]
COMMITTED = ROOT / "benchmarks" / "results" / "defects" / "dates-0.5b-one-agent-gpu.json"


def split(argv: list[str]) -> int:
    return int(benchmark_script("results_split").main(argv))


def test_the_moved_arms_leave_the_file_and_both_files_read_back(tmp_path: Path) -> None:
    source = tmp_path / "run.json"
    shutil.copy(COMMITTED, source)
    before = read_results(source)
    assert split([str(source), "--arms", "dialectic", "-o", str(tmp_path / "moved.json")]) == 0
    stays, moved = read_results(source), read_results(tmp_path / "moved.json")
    assert stays.spec.arms == ["format:vote"] and moved.spec.arms == ["dialectic"]
    assert {r.arm for r in stays.results} == {"format:vote"} and {r.arm for r in moved.results} == {"dialectic"}
    assert len(stays.results) + len(moved.results) == len(before.results)
    assert stays.spec.id == moved.spec.id == before.spec.id  # the same run, its items still paired by question


@pytest.mark.parametrize(
    ("arms", "message"), [("format:vote,dialectic", "every arm would move"), ("single", "the run has no arm single")]
)
def test_a_split_that_cannot_be_made_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arms: str, message: str
) -> None:
    source = tmp_path / "run.json"
    shutil.copy(COMMITTED, source)
    assert split([str(source), "--arms", arms, "-o", str(tmp_path / "moved.json")]) == 2
    assert message in capsys.readouterr().err
    assert source.read_bytes() == COMMITTED.read_bytes() and not (tmp_path / "moved.json").exists()
