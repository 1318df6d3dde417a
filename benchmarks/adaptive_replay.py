"""Replay recorded `adaptive` runs under today's exchange rule, beside what they recorded.

The adaptive protocol's rules changed after its first full runs: they held the correcting exchange
whenever the first round ended split (no answer held 60%); now it is held only when the split is
contested, the two leading answers each given at least twice (``AdaptivePlan.contest``). Every
exchange the new rule holds, the old one held too, and the first round is unchanged, so a recorded
item can be decided again exactly as the new rule would have decided it, from the same replies:
the exchange's reviews are kept where the split was contested and dropped where it was not, and
the vote over every answer kept decides. No model is called.

Per results file, the table holds the file's arms as recorded and the replayed arm
(``adaptive · replayed``), with the paired differences from ``single`` and from self-consistency
over the same items, computed by the bench's own summary code. The replayed arm's calls are the
recorded calls less one per dropped review (a retried review counted once, so the saving is a lower
bound); its tokens are the recorded ones less the dropped reviews' prompts and replies, estimated at
four characters a token, since the files record tokens per item, not per reply.

    .venv/bin/python benchmarks/adaptive_replay.py benchmarks/results/*-gpu.json
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dialectic.bench.arms import ArmSpec
from dialectic.bench.records import ItemResult, Outcome, Reply
from dialectic.bench.report import comparison_legend, comparison_table
from dialectic.bench.results_file import ResultsFile, read_results
from dialectic.bench.runner import arms_for
from dialectic.bench.summary import summarize
from dialectic.core.answers import is_correct
from dialectic.core.errors import DialecticError
from dialectic.engine.adaptive import AdaptivePlan, Ballot, exchange_options, is_contested, is_split, weighted_vote

CHARS_PER_TOKEN = 4
"""A rough size of one token in characters, for the dropped reviews' tokens (not recorded per reply)."""


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
    exchanges: int
    kept: int
    gained: int
    """Items right after the replay that were wrong as recorded."""
    lost: int


def replay(result: ItemResult, plan: AdaptivePlan, name: str) -> ItemResult:
    """``result`` (an adaptive item) decided again under ``plan``: the exchange kept only if contested."""
    samples = result.rounds[0]
    answers = [r.answer for r in samples]
    if len(result.rounds) > 1 and not is_split(answers, AdaptivePlan(**{**vars(plan), "contest": 1})):
        raise ValueError(f"{result.item_id}: an exchange on an unsplit first round is not the recorded protocol")
    if is_contested(answers, plan) and len(result.rounds) < 2 and plan.reviewers:
        raise ValueError(f"{result.item_id}: the rule holds an exchange the recording does not have")
    keep = len(result.rounds) > 1 and is_contested(answers, plan)
    rounds: list[list[Reply]] = [samples, result.rounds[1]] if keep else [samples]
    dropped = [] if keep else [r for stage in result.rounds[1:] for r in stage]
    tally = weighted_vote([Ballot(r.answer, r.confidence) for stage in rounds for r in stage])
    outcome: Outcome
    if tally.winner is None:
        outcome = result.outcome if result.final is None else "unparsed"
    else:
        outcome = "correct" if is_correct(tally.winner, result.truth, result.match) else "wrong"
    # a review's prompt carries the question and one worked solution per distinct answer
    shown = len(result.question) + sum(len(o.working) for o in exchange_options(answers, [r.text for r in samples]))
    dropped_input = len(dropped) * shown // CHARS_PER_TOKEN
    dropped_output = sum(len(r.text) for r in dropped) // CHARS_PER_TOKEN
    return result.model_copy(
        update={
            "arm": name,
            "stages": result.stages[: len(rounds)],
            "rounds": rounds,
            "final": tally.winner,
            "votes": tally.counts,
            "tie": tally.tied,
            "outcome": outcome,
            "calls": result.calls - len(dropped),
            "input_tokens": max(0, result.input_tokens - dropped_input),
            "output_tokens": max(0, result.output_tokens - dropped_output),
        }
    )


def replayed_file(loaded: ResultsFile, plan: AdaptivePlan) -> tuple[list[ArmSpec], list[ItemResult], Counts]:
    """The file's arms and results with the replayed adaptive arm added after the recorded one."""
    arms: list[ArmSpec] = []
    results = list(loaded.results)
    counts = Counts(0, 0, 0, 0, 0)
    for arm in arms_for(loaded.spec):
        arms.append(arm)
        if arm.kind != "adaptive":
            continue
        again = ReplayedArm(**vars(arm))
        arms.append(again)
        mine = [r for r in loaded.results if r.arm == arm.name]
        redone = [replay(r, plan, again.name) for r in mine]
        results += redone
        counts = Counts(
            items=len(mine),
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
        f"Exchanges recorded {counts.exchanges} of {counts.items} items; kept (contested) {counts.kept}; "
        f"items the replay turned right {counts.gained}, turned wrong {counts.lost}.",
        "",
        comparison_legend(summary),
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path, metavar="RESULTS.json")
    parser.add_argument("--contest", type=int, default=AdaptivePlan().contest, help="the rule's contest threshold")
    args = parser.parse_args(argv)
    if args.contest < 1:
        raise SystemExit("adaptive_replay: --contest is at least 1")
    plan = AdaptivePlan(contest=args.contest)
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
