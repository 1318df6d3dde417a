"""The summary's counts on hand-built results, and the words the report puts on a difference."""

from __future__ import annotations

import pytest

from dialectic.bench.records import ItemResult, Outcome, Reply
from dialectic.bench.report import standing
from dialectic.bench.stats import Interval
from dialectic.bench.summary import Decisions, decisions, transitions


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
