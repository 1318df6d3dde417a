"""Replay recorded `adaptive` runs under today's rules, beside what they recorded.

The adaptive protocol's rules changed after its first full runs, which drew 3 answers at once and
held the correcting exchange whenever the first round ended split (no answer held 60%). Now it
draws 2 at once, so a sample that agrees with the greedy answer ends the sampling, and holds the
exchange only when the split is contested: the two leading answers each given at least twice
(``AdaptivePlan.first`` and ``AdaptivePlan.contest``). Under the new rules an item draws a prefix
of the answers the old ones drew, and holds an exchange only where the old ones held the same one,
so a recorded item can be decided again exactly as the new rules would have decided it, from the
same replies: the answers after the point where the new rules stop are dropped, the exchange is
kept only where it is contested, and the vote over every answer kept decides. No model is called.

Per results file, the table holds the file's arms as recorded and the replayed arm
(``adaptive · replayed``), with the paired differences from ``single`` and from self-consistency
over the same items, computed by the bench's own summary code. The replayed arm's calls are the
recorded calls less one per dropped reply (a retried call counted once, so the saving is a lower
bound); its tokens are the recorded ones less the dropped replies' share, since the files record
tokens per item, not per reply: each dropped answer's prompt counts as the item's `single` prompt,
each dropped review's as the item's input tokens less its answers' prompts, shared among its
reviews, and the output tokens are shared among an item's replies by their length.

    .venv/bin/python benchmarks/adaptive_replay.py benchmarks/results/*-gpu.json
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from dialectic.bench.arms import ArmSpec
from dialectic.bench.records import ItemResult, Outcome, Reply
from dialectic.bench.report import comparison_legend, comparison_table
from dialectic.bench.results_file import ResultsFile, read_results
from dialectic.bench.runner import arms_for
from dialectic.bench.summary import summarize
from dialectic.core.answers import is_correct
from dialectic.core.errors import DialecticError
from dialectic.engine.adaptive import (
    AdaptivePlan,
    Ballot,
    is_contested,
    sampling_done,
    weighted_vote,
)

CHARS_PER_TOKEN = 4
"""A rough size of one token in characters, for an answer's prompt when the file has no `single` arm."""


@dataclass(frozen=True)
class ReplayedArm(ArmSpec):
    """The adaptive arm decided again from its recorded replies."""

    @property
    def name(self) -> str:
        return f"{super().name} · replayed"


@dataclass(frozen=True)
class Counts:
    """What the replay changed over a file's adaptive items."""

    items: int
    drawn: int
    kept_answers: int
    exchanges: int
    kept: int
    gained: int
    """Items right after the replay that were wrong as recorded."""
    lost: int


def replay(result: ItemResult, plan: AdaptivePlan, name: str, *, prompt_tokens: int | None = None) -> ItemResult:
    """``result`` (an adaptive item) decided again under ``plan``; ``prompt_tokens``: one answer's prompt."""
    recorded = result.rounds[0]
    answers = [r.answer for r in recorded]
    drawn = next((k for k in range(1, len(recorded) + 1) if sampling_done(answers[:k], plan)), None)
    if drawn is None:
        raise ValueError(f"{result.item_id}: the rules draw more answers than the recording has")
    samples, answers = recorded[:drawn], answers[:drawn]
    exchange = result.rounds[1] if len(result.rounds) > 1 else []
    keep = bool(exchange) and is_contested(answers, plan)
    if is_contested(answers, plan) and plan.reviewers and not (keep and drawn == len(recorded)):
        raise ValueError(f"{result.item_id}: the rules hold an exchange the recording does not have")
    rounds: list[list[Reply]] = [samples, exchange] if keep else [samples]
    dropped_samples = recorded[drawn:]
    dropped_reviews = [] if keep else exchange
    tally = weighted_vote([Ballot(r.answer, r.confidence) for stage in rounds for r in stage])
    outcome: Outcome
    if tally.winner is None:
        outcome = result.outcome if result.final is None else "unparsed"
    else:
        outcome = "correct" if is_correct(tally.winner, result.truth, result.match) else "wrong"
    asked = prompt_tokens if prompt_tokens is not None else len(result.question) // CHARS_PER_TOKEN
    # the item's input tokens less its answers' prompts were its reviews' prompts (question, options)
    review_prompt = max(0, result.input_tokens - len(recorded) * asked) // len(exchange) if exchange else 0
    dropped_input = len(dropped_samples) * asked + len(dropped_reviews) * review_prompt
    # the item's output tokens shared among its replies by their length
    written = sum(len(r.text) for stage in result.rounds for r in stage)
    dropped_text = sum(len(r.text) for r in [*dropped_samples, *dropped_reviews])
    dropped_output = result.output_tokens * dropped_text // written if written else 0
    return result.model_copy(
        update={
            "arm": name,
            "stages": result.stages[: len(rounds)],
            "rounds": rounds,
            "final": tally.winner,
            "votes": tally.counts,
            "tie": tally.tied,
            "outcome": outcome,
            "calls": result.calls - len(dropped_samples) - len(dropped_reviews),
            "input_tokens": max(0, result.input_tokens - dropped_input),
            "output_tokens": max(0, result.output_tokens - dropped_output),
        }
    )


def replayed_file(loaded: ResultsFile, plan: AdaptivePlan) -> tuple[list[ArmSpec], list[ItemResult], Counts]:
    """The file's arms and results with the replayed adaptive arm added after the recorded one."""
    arms: list[ArmSpec] = []
    results = list(loaded.results)
    counts = Counts(0, 0, 0, 0, 0, 0, 0)
    for arm in arms_for(loaded.spec):
        arms.append(arm)
        if arm.kind != "adaptive":
            continue
        again = ReplayedArm(**vars(arm))
        arms.append(again)
        mine = [r for r in loaded.results if r.arm == arm.name]
        asked = {r.item_id: r.input_tokens // max(1, r.calls) for r in loaded.results if r.arm == "single"}
        rules = replace(plan, most=arm.samples)
        redone = [replay(r, rules, again.name, prompt_tokens=asked.get(r.item_id)) for r in mine]
        results += redone
        counts = Counts(
            items=len(mine),
            drawn=sum(len(r.rounds[0]) for r in mine),
            kept_answers=sum(len(r.rounds[0]) for r in redone),
            exchanges=sum(len(r.rounds) > 1 for r in mine),
            kept=sum(len(r.rounds) > 1 for r in redone),
            gained=sum(r.correct and not old.correct for old, r in zip(mine, redone, strict=True)),
            lost=sum(old.correct and not r.correct for old, r in zip(mine, redone, strict=True)),
        )
    return arms, results, counts


def report(loaded: ResultsFile, plan: AdaptivePlan) -> str:
    arms, results, counts = replayed_file(loaded, plan)
    if not counts.items:
        return f"### {loaded.path.name}\n\nno adaptive items to replay\n"
    finished = [{r.item_id for r in results if r.arm == arm.name} for arm in arms]
    common = set.intersection(*finished)
    summary = summarize(loaded.spec, loaded.task, loaded.total_items, arms, [r for r in results if r.item_id in common])
    models = ", ".join(sorted(set(loaded.spec.models())))
    lines = [
        f"### {loaded.task} — {models}",
        "",
        f"{len(common)} items · seed {loaded.spec.seed} · from `{loaded.path.name}` (`{loaded.spec.id}`)",
        "",
        *comparison_table(summary),
        "",
        f"Answers drawn: {counts.drawn} recorded, {counts.kept_answers} kept. "
        f"Exchanges recorded {counts.exchanges} of {counts.items} items; kept (contested) {counts.kept}; "
        f"items the replay turned right {counts.gained}, turned wrong {counts.lost}.",
        "",
        comparison_legend(summary),
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path, metavar="RESULTS.json")
    parser.add_argument("--first", type=int, default=AdaptivePlan().first, help="answers drawn at once")
    parser.add_argument("--contest", type=int, default=AdaptivePlan().contest, help="the exchange's contest threshold")
    args = parser.parse_args(argv)
    try:
        plan = AdaptivePlan(first=args.first, contest=args.contest)
    except ValueError as exc:
        raise SystemExit(f"adaptive_replay: {exc}") from None
    blocks: list[str] = []
    for path in args.files:
        try:
            loaded = read_results(path)
        except DialecticError as exc:
            raise SystemExit(f"adaptive_replay: {exc}") from None
        try:
            blocks.append(report(loaded, plan))
        except ValueError as exc:
            raise SystemExit(f"adaptive_replay: {path}: {exc}") from None
    print("\n".join(blocks), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
