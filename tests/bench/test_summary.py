"""The summary's counts on hand-built results, its McNemar tests, and the words and cells the report puts on a
difference."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from dialectic.bench.arms import parse_arms
from dialectic.bench.records import ItemResult, Outcome, Reply, RunSpec
from dialectic.bench.report import comparison, comparison_table, p_value, standing, to_json, to_markdown
from dialectic.bench.stats import Interval, McNemar, mcnemar_exact_p
from dialectic.bench.summary import Decisions, decisions, summarize, transitions


def reply(who: str, answer: str | None) -> Reply:
    return Reply(who=who, text=f"Answer: {answer}", answer=answer, method="final-answer")


def item(index: int, stages: list[list[str | None]], final: str | None, truth: str = "7") -> ItemResult:
    outcome: Outcome = "correct" if final == truth else "wrong"
    return ItemResult(
        arm="format:free-form",
        item_id=f"arith-{index:04d}",
        index=index,
        question="3 + 4",
        truth=truth,
        match="numeric",
        stages=[f"round {i + 1}" for i in range(len(stages))],
        rounds=[[reply(f"agent-{n + 1}", a) for n, a in enumerate(stage)] for stage in stages],
        final=final,
        outcome=outcome,
        calls=len(stages) * 2 + 1,
        input_tokens=0,
        output_tokens=0,
        wall_s=0.0,
    )


def test_decisions_split_the_items_by_their_last_replies_and_the_final_answer() -> None:
    results = [
        item(1, [["7", "7"]], "7"),  # all right, kept
        item(2, [["7", "7"]], "8"),  # all right, lost by the deciding step
        item(3, [["7", "9"]], "7"),  # split, the right one picked
        item(4, [["7", "9"]], "9"),  # split, the wrong one picked
        item(5, [["7", "9"]], "9"),
        item(6, [["8", None]], "7"),  # none right (no answer counts as wrong), fixed
        item(7, [["8", "9"]], "8"),  # none right, stayed wrong
        item(8, [["8", "9"], ["7", "7"]], "7"),  # only the last stage counts
    ]
    assert decisions(results) == Decisions(
        all_right_kept=2,
        all_right_lost=1,
        split_picked_right=1,
        split_picked_wrong=2,
        none_right_fixed=1,
        none_right_stayed=1,
    )


def test_no_decisions_without_two_replies_in_the_last_stage() -> None:
    assert decisions([item(1, [["7"]], "7"), item(2, [["8"]], "8")]) is None
    assert decisions([]) is None


def test_transitions_count_changes_of_mind_per_stage_change() -> None:
    results = [item(1, [["7", "8"], ["8", "7"]], "7"), item(2, [["8", "8"], ["7", "8"]], "7")]
    (change,) = transitions(results)
    assert (change.label, change.wrong_to_right, change.right_to_wrong) == ("round 1 → round 2", 2, 1)


@pytest.mark.parametrize(
    ("estimate", "low", "high", "words"),
    [
        (-0.2, -0.4, -0.05, "loses"),
        (0.2, 0.05, 0.4, "wins"),
        (-0.033, -0.1, 0.0, "behind (CI includes 0)"),
        (0.1, -0.05, 0.25, "ahead (CI includes 0)"),
        (0.0, 0.0, 0.0, "level"),
    ],
)
def test_standing_is_a_loss_or_a_win_only_when_the_interval_is_on_one_side(
    estimate: float, low: float, high: float, words: str
) -> None:
    assert standing(Interval(estimate, low, high, 30)) == words


def test_no_standing_without_a_reference() -> None:
    assert standing(None) == "—"


def spec_of(arms: str) -> RunSpec:
    return RunSpec(
        id="bench-test",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        task="arithmetic",
        n=12,
        arms=[a.name for a in parse_arms(arms)],
        temperature=0.7,
        agents=[{"provider": "scripted", "model": "m"}],
        dialectic_config={},
        config_dir=".",
        fingerprint="f",
    )


def outcome_of(arm: str, index: int, right: bool, calls: int = 1, tokens: int = 10) -> ItemResult:
    answer = "7" if right else "8"
    return ItemResult(
        arm=arm,
        item_id=f"arith-{index:04d}",
        index=index,
        question="3 + 4",
        truth="7",
        match="numeric",
        stages=["greedy"],
        rounds=[[reply("greedy", answer)]],
        final=answer,
        outcome="correct" if right else "wrong",
        calls=calls,
        input_tokens=tokens,
        output_tokens=tokens,
        wall_s=0.0,
    )


def test_summary_carries_the_discordant_counts_and_the_mcnemar_p_value() -> None:
    arms = "single,self-consistency:3,majority:3"
    # single right on items 0–1; self-consistency on 0–9 (b=8, c=0); majority on 2–11 against single (10/2).
    single = [outcome_of("single", i, i < 2) for i in range(12)]
    sc = [outcome_of("self-consistency:3", i, i < 10, calls=3) for i in range(12)]
    majority = [outcome_of("majority:3", i, 2 <= i, calls=3) for i in range(12)]
    summary = summarize(spec_of(arms), "arithmetic", 12, parse_arms(arms), single + sc + majority, resamples=200)
    by_arm = {a.arm: a for a in summary.arms}

    assert by_arm["single"].vs_single_mcnemar is None and by_arm["single"].vs_single is None
    assert by_arm["majority:3"].vs_single_mcnemar == McNemar(10, 2, mcnemar_exact_p(10, 2))
    assert by_arm["majority:3"].vs_self_consistency_mcnemar == McNemar(2, 2, 1.0)
    assert by_arm["self-consistency:3"].vs_self_consistency_mcnemar is None
    sc_test = by_arm["self-consistency:3"].vs_single_mcnemar
    assert sc_test is not None and (sc_test.only_this, sc_test.only_reference) == (8, 0)

    row = next(line for line in to_markdown(summary).splitlines() if line.startswith("| majority:3 | 12 "))
    assert "| +66.7 pp [" in row and "· 10/2 · p=0.039 |" in row
    assert "· 2/2 · p=1 |" in row
    assert "McNemar" in to_markdown(summary)
    document = json.loads(to_json(summary, single + sc + majority))
    majority_json = next(a for a in document["arms"] if a["arm"] == "majority:3")
    assert majority_json["vs_single_mcnemar"] == {
        "only_this": 10,
        "only_reference": 2,
        "p_value": pytest.approx(0.0386, abs=1e-4),
    }
    assert majority_json["vs_self_consistency_mcnemar"]["p_value"] == 1.0


def test_no_comparison_without_a_common_item() -> None:
    arms = "single,majority:3"
    results = [outcome_of("single", 0, True), outcome_of("majority:3", 1, True)]
    summary = summarize(spec_of(arms), "arithmetic", 2, parse_arms(arms), results, resamples=50)
    majority = summary.arms[1]
    assert majority.vs_single is None and majority.vs_single_mcnemar is None


def test_comparison_cells_and_p_values() -> None:
    interval = Interval(0.038, -0.019, 0.096, 50)
    assert comparison(interval, McNemar(7, 3, 0.34375)) == "+3.8 pp [−1.9, +9.6] · 7/3 · p=0.34"
    assert comparison(interval, None) == "+3.8 pp [−1.9, +9.6]"
    assert comparison(None, None) == "—"
    assert p_value(0.0004) == "p<0.001" and p_value(1.0) == "p=1" and p_value(0.03125) == "p=0.031"


def test_comparison_table_has_the_costs_per_item() -> None:
    arms = "single,self-consistency:3"
    results = [outcome_of("single", i, i % 2 == 0, calls=1, tokens=50) for i in range(4)]
    results += [outcome_of("self-consistency:3", i, True, calls=3, tokens=600) for i in range(4)]
    summary = summarize(spec_of(arms), "arithmetic", 4, parse_arms(arms), results, resamples=50)
    header, rule, single, sc = comparison_table(summary)
    assert header.startswith("| Arm | n | Accuracy [95% CI] | Δ vs single | Δ vs self-consistency:3 |")
    assert single.startswith("| single | 4 | 50.0% [") and single.endswith("| 1.0 | 100 |")
    assert "· 2/0 · p=0.5 | — | 3.0 | 1,200 |" in sc


def scored_item(index: int, arm: str, final: str, score: float, stated: float | None = None) -> ItemResult:
    judge = Reply(who="judge", text=final, answer=final, method="tagged", score=score, stated=stated)
    return ItemResult(
        arm=arm,
        item_id=f"countdown-{index:04d}",
        index=index,
        question="Make 10 from 2, 5.",
        truth="2 * 5",
        match="scored",
        stages=["answers", "critiques"],
        rounds=[[Reply(who="m1", text="x", answer=final, method="tagged", score=score)], []],
        judge=judge,
        final=final,
        outcome="correct" if score == 1 else "wrong",
        score=score,
        calls=3,
        input_tokens=0,
        output_tokens=0,
        wall_s=0.0,
    )


def test_scores_partial_credit_and_the_judges_brier_score() -> None:
    arms = parse_arms("best-of:4,dialectic")
    results = [
        scored_item(0, "best-of:4", "5 * 2", 1.0),
        scored_item(1, "best-of:4", "5 + 2", 0.05),
        scored_item(0, "dialectic", "2 * 5", 1.0, stated=0.9),
        scored_item(1, "dialectic", "2 + 5", 0.05, stated=0.7),
    ]
    spec = RunSpec(
        id="r",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        task="rg:countdown",
        arms=[a.name for a in arms],
        temperature=0.7,
        agents=[],
        dialectic_config={},
        config_dir=".",
        fingerprint="f",
    )
    summary = summarize(spec, "countdown", 2, arms, results)
    best, debate = summary.arms
    assert summary.self_consistency_arm == "best-of:4"  # the reference arm where there is no vote
    assert (best.partial, best.mean_score) == (1, pytest.approx(0.525))
    assert debate.judge_forecasts == 2 and debate.judge_brier == pytest.approx((0.1**2 + 0.7**2) / 2)
    assert best.judge_brier is None
    text = to_markdown(summary)
    assert "### Scores" in text and "| best-of:4 | 0.525 | 1 |" in text
    assert "### The judge's stated confidence" in text and "| dialectic | 2 | 0.250 | 0.250 |" in text
    assert "critiques" not in "".join(t.label for t in debate.transitions)
