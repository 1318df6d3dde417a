"""``benchmarks/bench_tables.py``: the tables of committed results files, computed by the bench package."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dialectic.llm.scripted import ScriptedProvider

from .conftest import SCRIPTED_ARGS, Invoke, benchmark_script, designed


def results(invoke: Invoke, name: str, *args: str) -> str:
    out = invoke("arithmetic", *args, "-o", name)
    assert out.code == 0, out.stderr
    return name


def row(report: str, arm: str) -> str:
    return next(line for line in report.splitlines() if line.startswith(f"| {arm} | "))


def test_files_on_the_same_questions_make_one_table_with_paired_differences(
    invoke: Invoke, use_provider: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    use_provider(ScriptedProvider(designed))
    first = results(invoke, "a.json", "-n", "10", "--arms", "single,self-consistency:6", *SCRIPTED_ARGS)
    second = results(invoke, "b.json", "-n", "10", "--arms", "debate:3x2", *SCRIPTED_ARGS)
    other_model = results(invoke, "c.json", "-n", "10", "--arms", "single", "--provider", "scripted", "--model", "x")
    tables = benchmark_script("bench_tables")
    capsys.readouterr()

    assert tables.main([first, second, other_model]) == 0
    report = capsys.readouterr().out
    assert report.count("### arithmetic (6 operands, a+b*c+d-e*f) — ") == 2
    assert "### arithmetic (6 operands, a+b*c+d-e*f) — scripted/m" in report
    assert "### arithmetic (6 operands, a+b*c+d-e*f) — scripted/x" in report
    assert (
        "| Arm | n | Accuracy [95% CI] | Δ vs single | Δ vs self-consistency:6 | Calls / item | Tokens / item |"
        in report
    )
    # The designed model (conftest): single right on 4 of 10, self-consistency on 6, debate on 4.
    assert row(report, "single").startswith("| single | 10 | 40.0% [")
    sc = row(report, "self-consistency:6")
    # Only self-consistency right on classes 1 and 3 (4 items), only single on class 2 (2 items).
    assert "| +20.0 pp [" in sc and "· 4/2 · p=0.69 | — | 6.0 |" in sc
    debate = row(report, "debate:3x2")  # paired across the two files
    assert "| +0.0 pp [" in debate and "· 2/2 · p=1 |" in debate
    assert "| −20.0 pp [" in debate and "· 0/2 · p=0.5 | 6.0 |" in debate
    assert "McNemar" in report

    assert tables.main(["--full", first, second]) == 0
    full = capsys.readouterr().out
    assert "### Belief dynamics" in full and "| debate:3x2 | round 1 → round 2 |" in full


def test_only_the_items_every_arm_finished_count_unless_all_items(
    invoke: Invoke, use_provider: Any, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    use_provider(ScriptedProvider(designed))
    short = results(invoke, "short.json", "-n", "5", "--arms", "single", *SCRIPTED_ARGS)
    long = results(invoke, "long.json", "-n", "10", "--arms", "majority:3", *SCRIPTED_ARGS)
    tables = benchmark_script("bench_tables")
    capsys.readouterr()
    assert tables.main([short, long]) == 0
    assert "| majority:3 | 5 |" in capsys.readouterr().out
    assert tables.main(["--all-items", short, long]) == 0
    assert "| majority:3 | 10 |" in capsys.readouterr().out


def test_doubled_arms_other_questions_and_unreadable_files_are_refused(
    invoke: Invoke, use_provider: Any, home: Path
) -> None:
    use_provider(ScriptedProvider(designed))
    first = results(invoke, "a.json", "-n", "3", "--arms", "single", *SCRIPTED_ARGS)
    again = results(invoke, "b.json", "-n", "3", "--arms", "single", *SCRIPTED_ARGS)
    tables = benchmark_script("bench_tables")
    with pytest.raises(SystemExit, match="arm single is in both a.json and b.json"):
        tables.main([first, again])
    document = json.loads((home / again).read_text())
    document["arms"], document["run"]["arms"] = [], ["majority:3"]
    for item in document["items"]:
        item["question"] = "What is the result of 1+1?"
        item["arms"] = {"majority:3": item["arms"]["single"]}
    (home / "other.json").write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(SystemExit, match="asks another question"):
        tables.main([first, "other.json"])
    (home / "not.json").write_text("[]", encoding="utf-8")
    with pytest.raises(SystemExit, match="not a results file of dialectic bench"):
        tables.main(["not.json"])


def test_the_pareto_figure_is_written_per_table(
    invoke: Invoke, use_provider: Any, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    use_provider(ScriptedProvider(designed))
    first = results(invoke, "a.json", "-n", "4", "--arms", "single,majority:3", *SCRIPTED_ARGS)
    other = results(invoke, "b.json", "-n", "4", "--arms", "single", "--provider", "scripted", "--model", "x")
    tables = benchmark_script("bench_tables")
    assert tables.main([first, "--plot", "figs/pareto.png"]) == 0
    assert (home / "figs" / "pareto.png").read_bytes()[:4] == b"\x89PNG"
    assert tables.main([first, other, "--plot", "figs/two.png"]) == 0
    assert (home / "figs" / "two-1.png").exists() and (home / "figs" / "two-2.png").exists()


def test_a_panel_file_joins_the_table_of_its_questions_under_its_own_names(
    invoke: Invoke, use_provider: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    use_provider(ScriptedProvider(designed))
    one = results(invoke, "one.json", "-n", "10", "--arms", "single,self-consistency:6", *SCRIPTED_ARGS)
    panel = results(
        invoke, "panel.json", "-n", "10", "--arms", "self-consistency:6", "--provider", "scripted", "--model", "x"
    )
    tables = benchmark_script("bench_tables")
    capsys.readouterr()

    assert tables.main([one, panel]) == 0  # without --panel: another model, another table
    assert capsys.readouterr().out.count("### arithmetic") == 2
    assert tables.main([one, "--panel", panel]) == 0
    report = capsys.readouterr().out
    assert report.count("### arithmetic") == 1
    joined = row(report, "self-consistency:6 · on x")  # the same answers as model m's: Δ 0 on 10 paired items
    assert joined.startswith("| self-consistency:6 · on x | 10 | 60.0% [")
    assert "| +0.0 pp [+0.0, +0.0] · 0/0 · p=1 |" in joined
    assert row(report, "single").startswith("| single | 10 | 40.0% [")


def test_a_named_file_joins_the_table_beside_an_arm_of_the_same_name(
    invoke: Invoke, use_provider: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    use_provider(ScriptedProvider(designed))
    first = results(invoke, "first.json", "-n", "10", "--arms", "single,self-consistency:6", *SCRIPTED_ARGS)
    again = results(invoke, "again.json", "-n", "10", "--arms", "self-consistency:6", *SCRIPTED_ARGS)
    tables = benchmark_script("bench_tables")
    capsys.readouterr()

    with pytest.raises(SystemExit, match="in both"):
        tables.main([first, again])
    assert tables.main([first, "--named", f"{again}=second run"]) == 0
    report = capsys.readouterr().out
    assert report.count("### arithmetic") == 1
    assert row(report, "self-consistency:6 · second run").startswith("| self-consistency:6 · second run | 10 | ")
    with pytest.raises(SystemExit, match="RESULTS.json=LABEL"):
        tables.main([first, "--named", again])


def test_pooled_seeds_make_one_table_with_every_item_told_apart_by_its_seed(
    invoke: Invoke, use_provider: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    use_provider(ScriptedProvider(designed))
    arms = ("--arms", "single,self-consistency:6", *SCRIPTED_ARGS)
    first = results(invoke, "s1.json", "-n", "10", "--seed", "1", *arms)
    second = results(invoke, "s2.json", "-n", "8", "--seed", "2", *arms)
    lone = results(invoke, "s3.json", "-n", "5", "--seed", "3", "--arms", "single", *SCRIPTED_ARGS)
    tables = benchmark_script("bench_tables")
    capsys.readouterr()

    assert tables.main([first, second]) == 0  # without --pool: one table per seed
    assert capsys.readouterr().out.count("### arithmetic") == 2
    assert tables.main(["--pool", first, second]) == 0
    report = capsys.readouterr().out
    assert report.count("### arithmetic") == 1 and "18 items · seed 1 + 2 ·" in report
    assert row(report, "single").startswith("| single | 18 |")
    assert row(report, "self-consistency:6").startswith("| self-consistency:6 | 18 |")
    with pytest.raises(SystemExit, match="arm self-consistency:6 has no file on seed 3"):
        tables.main(["--pool", first, lone])


def test_calibration_writes_each_judge_models_brier_score_from_the_files(
    invoke: Invoke, use_provider: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    use_provider(ScriptedProvider(designed))
    run = results(invoke, "judged.json", "-n", "4", "--arms", "single,dialectic", *SCRIPTED_ARGS)
    stated = [
        (item["arms"]["dialectic"]["judge"]["stated"], item["arms"]["dialectic"]["correct"])
        for item in json.loads(Path(run).read_text(encoding="utf-8"))["items"]
    ]
    assert stated and all(p is not None for p, _ in stated)  # the judge's confidence is recorded per item
    tables = benchmark_script("bench_tables")
    out = tmp_path / "calibration.json"
    assert tables.main([run, "--calibration", str(out)]) == 0
    (row,) = json.loads(out.read_text(encoding="utf-8"))["models"]
    rate = sum(right for _, right in stated) / len(stated)
    assert row["forecasts"] == len(stated)
    assert row["brier"] == pytest.approx(sum((p - right) ** 2 for p, right in stated) / len(stated), abs=1e-4)
    assert row["base_rate"] == pytest.approx(rate * (1 - rate), abs=1e-4)
    assert "withheld" in capsys.readouterr().err  # 4 forecasts are too few to earn a shown confidence
