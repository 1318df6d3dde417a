"""The numbers a run is judged by: per-arm accuracy with CIs, paired differences, costs, dynamics."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dialectic.bench.arms import ArmSpec
from dialectic.bench.records import ItemResult, Reply, RunSpec
from dialectic.bench.stats import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    Interval,
    McNemar,
    bootstrap_ci,
    mcnemar,
    paired_bootstrap,
)
from dialectic.core.answers import is_correct

SINGLE = "single"
REFERENCE_KINDS = ("self-consistency", "best-of")
"""The arm every other is compared with beside ``single``: self-consistency where the run has it (questions with
one right answer), else best-of-N (problems with many, where no vote is defined)."""
NOT_ANSWERS = ("rankings", "critiques", "revisions")
"""Stages whose replies judge or revise others' answers: no agent-by-agent change of mind to count there."""


@dataclass(frozen=True)
class Transition:
    """From one stage to the next, summed over items and agents: how many changed their minds."""

    label: str
    wrong_to_right: int
    right_to_wrong: int


@dataclass(frozen=True)
class Decisions:
    """How an arm's final answers compare with its last stage's replies, counted over the items with two or
    more replies there. The final answer is decided by a step after the replies (a majority vote, or the
    judge), so an item whose replies were all right but whose final answer is wrong was lost by that step."""

    all_right_kept: int
    all_right_lost: int
    split_picked_right: int
    split_picked_wrong: int
    none_right_fixed: int
    none_right_stayed: int


@dataclass(frozen=True)
class ArmSummary:
    arm: str
    kind: str
    planned_calls: int | None
    """Calls per item when nothing is cut off (A×R, K, 1); ``None`` for the dialectic arm."""
    matched_to: str | None
    items: int
    correct: int
    accuracy: Interval | None
    wrong: int
    unparsed: int
    truncated: int
    failed: int
    ties: int
    replies: int
    truncated_replies: int
    unparsed_replies: int
    failed_replies: int
    calls: int
    input_tokens: int
    output_tokens: int
    wall_s: float
    vs_single: Interval | None
    """Accuracy difference from ``single``, paired bootstrap over the items both finished."""
    vs_self_consistency: Interval | None
    vs_single_mcnemar: McNemar | None
    """On the same items as :attr:`vs_single`: the discordant counts and the exact McNemar p-value."""
    vs_self_consistency_mcnemar: McNemar | None
    transitions: tuple[Transition, ...]
    agreement: float | None
    """Share of items whose last stage was unanimous (every agent gave the same answer)."""
    decisions: Decisions | None
    """``None`` when no item had two or more replies in its last stage (``single``)."""
    partial: int = 0
    """Items whose final answer the task's scorer gave partial credit (between 0 and 1)."""
    mean_score: float | None = None
    """The mean of the scorer's 0–1 over the items, partial credit included; ``None`` for tasks without a scorer."""
    judge_brier: float | None = None
    """The Brier score of the judge's stated confidence in its final answer against the item's outcome,
    over the items where the judge stated one; ``None`` when it never did."""
    judge_forecasts: int = 0


@dataclass(frozen=True)
class BenchSummary:
    spec: RunSpec
    task: str
    total_items: int
    arms: tuple[ArmSummary, ...]
    self_consistency_arm: str | None
    """The reference arm: self-consistency, else best-of-N (:data:`REFERENCE_KINDS`)."""
    resamples: int
    confidence: float


def summarize(
    spec: RunSpec,
    task_description: str,
    total_items: int,
    arms: Sequence[ArmSpec],
    results: Sequence[ItemResult],
    *,
    resamples: int = DEFAULT_RESAMPLES,
) -> BenchSummary:
    by_arm: dict[str, dict[str, ItemResult]] = {a.name: {} for a in arms}
    for r in results:
        by_arm.setdefault(r.arm, {})[r.item_id] = r
    sc = next((a.name for kind in REFERENCE_KINDS for a in arms if a.kind == kind), None)
    summaries = tuple(
        _arm_summary(arm, by_arm[arm.name], by_arm, sc, seed=spec.seed, resamples=resamples) for arm in arms
    )
    return BenchSummary(spec, task_description, total_items, summaries, sc, resamples, DEFAULT_CONFIDENCE)


def _arm_summary(
    arm: ArmSpec,
    mine: dict[str, ItemResult],
    by_arm: dict[str, dict[str, ItemResult]],
    sc: str | None,
    *,
    seed: int,
    resamples: int,
) -> ArmSummary:
    ordered = sorted(mine.values(), key=lambda r: r.index)
    outcomes = [r.outcome for r in ordered]
    replies = [reply for r in ordered for reply in r.all_replies()]
    vs_single = _paired(mine, by_arm.get(SINGLE), arm.name == SINGLE, seed, resamples)
    vs_sc = _paired(mine, by_arm.get(sc) if sc else None, arm.name == sc, seed, resamples)
    return ArmSummary(
        arm=arm.name,
        kind=arm.kind,
        planned_calls=arm.planned_calls,
        matched_to=arm.matched_to,
        items=len(ordered),
        correct=outcomes.count("correct"),
        accuracy=bootstrap_ci([float(r.correct) for r in ordered], resamples=resamples, seed=seed),
        wrong=outcomes.count("wrong"),
        unparsed=outcomes.count("unparsed"),
        truncated=outcomes.count("truncated"),
        failed=outcomes.count("failed"),
        ties=sum(r.tie for r in ordered),
        replies=len(replies),
        truncated_replies=sum(reply.truncated for reply in replies),
        unparsed_replies=sum(reply.unparsed for reply in replies),
        failed_replies=sum(reply.error is not None for reply in replies),
        calls=sum(r.calls for r in ordered),
        input_tokens=sum(r.input_tokens for r in ordered),
        output_tokens=sum(r.output_tokens for r in ordered),
        wall_s=round(sum(r.wall_s for r in ordered), 3),
        vs_single=vs_single[0],
        vs_self_consistency=vs_sc[0],
        vs_single_mcnemar=vs_single[1],
        vs_self_consistency_mcnemar=vs_sc[1],
        transitions=transitions(ordered),
        agreement=agreement(ordered),
        decisions=decisions(ordered),
        partial=sum(r.score is not None and 0 < r.score < 1 for r in ordered),
        mean_score=_mean([r.score for r in ordered if r.score is not None]),
        judge_brier=judge_brier(ordered),
        judge_forecasts=sum(r.judge is not None and r.judge.stated is not None for r in ordered),
    )


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def judge_brier(results: Sequence[ItemResult]) -> float | None:
    """Brier score of the judge's stated confidences (0–1) against the items' outcomes (1 right, 0 wrong)."""
    pairs = [(r.judge.stated, r.correct) for r in results if r.judge is not None and r.judge.stated is not None]
    return _mean([(p - float(right)) ** 2 for p, right in pairs])


def reply_right(reply: Reply, result: ItemResult) -> bool:
    """Whether one reply's answer is right: the task's scorer's 1 where it has one, else a match with the truth."""
    if reply.score is not None:
        return reply.score >= 1.0
    return is_correct(reply.answer, result.truth, result.match)


def _paired(
    mine: dict[str, ItemResult],
    reference: dict[str, ItemResult] | None,
    is_reference: bool,
    seed: int,
    resamples: int,
) -> tuple[Interval | None, McNemar | None]:
    """Accuracy difference (this arm − reference) on the items both finished, paired by item, with
    McNemar's test on the same items; ``(None, None)`` without a reference or a common item."""
    if reference is None or is_reference:
        return None, None
    common = sorted(set(mine) & set(reference), key=lambda item_id: mine[item_id].index)
    if not common:
        return None, None
    mine_right = [mine[i].correct for i in common]
    reference_right = [reference[i].correct for i in common]
    interval = paired_bootstrap(
        [float(x) for x in mine_right], [float(x) for x in reference_right], resamples=resamples, seed=seed
    )
    return interval, mcnemar(mine_right, reference_right)


def transitions(results: Sequence[ItemResult]) -> tuple[Transition, ...]:
    """Per stage change, agents that went wrong→right and right→wrong (no answer counts as wrong)."""
    counts: dict[str, list[int]] = {}
    for r in results:
        for i in range(1, len(r.rounds)):
            if r.stages[i - 1] in NOT_ANSWERS or r.stages[i] in NOT_ANSWERS:
                continue
            label = f"{r.stages[i - 1]} → {r.stages[i]}"
            tally = counts.setdefault(label, [0, 0])
            for before, after in zip(r.rounds[i - 1], r.rounds[i], strict=False):
                was = reply_right(before, r)
                now = reply_right(after, r)
                tally[0] += int(not was and now)
                tally[1] += int(was and not now)
    return tuple(Transition(label, up, down) for label, (up, down) in counts.items())


def agreement(results: Sequence[ItemResult]) -> float | None:
    """Share of items whose last stage is unanimous; ``None`` when no item had two or more replies there."""
    groups = [r.rounds[-1] for r in results if r.rounds and len(r.rounds[-1]) > 1]
    if not groups:
        return None
    unanimous = sum(1 for g in groups if g[0].answer is not None and all(x.answer == g[0].answer for x in g))
    return unanimous / len(groups)


def decisions(results: Sequence[ItemResult]) -> Decisions | None:
    """Per item with two or more replies in its last stage: were all, some or none of them right, and was the
    final answer right? (A reply with no answer counts as wrong.)"""
    tally = [0] * 6
    for r in results:
        answering = [stage for name, stage in zip(r.stages, r.rounds, strict=False) if name not in NOT_ANSWERS]
        last = answering[-1] if answering else []
        if len(last) < 2:
            continue
        right = sum(reply_right(reply, r) for reply in last)
        group = 0 if right == len(last) else 2 if right else 4
        tally[group + (0 if r.correct else 1)] += 1
    return Decisions(*tally) if any(tally) else None
