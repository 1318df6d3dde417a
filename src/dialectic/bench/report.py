"""A run's results as JSON (every item, every reply) and as a Markdown summary."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from dialectic.bench.arms import GREEDY_TEMPERATURE
from dialectic.bench.records import ItemResult
from dialectic.bench.results_file import ITEM_KEYS
from dialectic.bench.stats import Interval, McNemar
from dialectic.bench.summary import ArmSummary, BenchSummary, Decisions
from dialectic.bench.vote import TIE_RULE
from dialectic.core.answers import NUMERIC_TOLERANCE


def to_json(summary: BenchSummary, results: Sequence[ItemResult]) -> str:
    items: dict[str, dict[str, Any]] = {}
    for r in sorted(results, key=lambda r: r.index):
        entry = items.setdefault(
            r.item_id,
            {"id": r.item_id, "index": r.index, "question": r.question, "truth": r.truth, "match": r.match, "arms": {}},
        )
        entry["arms"][r.arm] = {"correct": r.correct, **r.model_dump(mode="json", exclude=set(ITEM_KEYS))}
    document = {
        "run": summary.spec.model_dump(mode="json"),
        "task": summary.task,
        "total_items": summary.total_items,
        "method": {
            "tie_rule": TIE_RULE,
            "confidence": summary.confidence,
            "bootstrap_resamples": summary.resamples,
            "bootstrap_seed": summary.spec.seed,
            "greedy_temperature": GREEDY_TEMPERATURE,
            "sampling_temperature": summary.spec.temperature,
        },
        "arms": [asdict(arm) for arm in summary.arms],
        "items": list(items.values()),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def to_markdown(summary: BenchSummary) -> str:
    spec = summary.spec
    sc = summary.self_consistency_arm
    models = ", ".join(sorted(set(spec.models())))
    lines = [
        f"## Bench: {summary.task}",
        "",
        f"Run `{spec.id}` · {summary.total_items} items · seed {spec.seed} · model {models}"
        f" · sampling temperature {spec.temperature:g} (single: greedy, {GREEDY_TEMPERATURE:g})",
        "",
        "| Arm | Items | Accuracy | 95% CI | Δ vs single | Δ vs "
        + (sc or "self-consistency")
        + " | Against "
        + (sc or "self-consistency")
        + " | Wrong | Unparsed | Cut off | Failed | Ties | Calls | Input tokens "
        "| Output tokens | Wall s |",
        "|---|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    lines += [_row(arm) for arm in summary.arms]
    dynamics = [arm for arm in summary.arms if arm.transitions]
    if dynamics:
        lines += ["", "### Belief dynamics", "", "| Arm | Stage change | wrong→right | right→wrong |"]
        lines.append("|---|---|--:|--:|")
        lines += [
            f"| {a.arm} | {t.label} | {t.wrong_to_right} | {t.right_to_wrong} |"
            for a in dynamics
            for t in a.transitions
        ]
    decided = [arm for arm in summary.arms if arm.decisions]
    if decided:
        lines += [
            "",
            "### From the last replies to the final answer",
            "",
            "| Arm | All replies right: final right | final wrong | Some right: final right | final wrong "
            "| None right: final right | final wrong |",
            "|---|--:|--:|--:|--:|--:|--:|",
        ]
        lines += [_decision_row(a.arm, a.decisions) for a in decided if a.decisions]
    scored = [arm for arm in summary.arms if arm.mean_score is not None]
    if scored:
        lines += [
            "",
            "### Scores",
            "",
            "The task's own scorer gives each final answer 0–1; only 1 counts as correct above.",
            "",
            "| Arm | Mean score | Partial credit (items) |",
            "|---|--:|--:|",
        ]
        lines += [f"| {a.arm} | {a.mean_score:.3f} | {a.partial} |" for a in scored if a.mean_score is not None]
    forecast = [arm for arm in summary.arms if arm.judge_brier is not None]
    if forecast:
        lines += [
            "",
            "### The judge's stated confidence",
            "",
            "Brier score of the confidence the judge stated in its solution against the item's outcome (0 is "
            "perfect; always stating the arm's accuracy scores the base rate).",
            "",
            "| Arm | Forecasts | Brier | Base rate |",
            "|---|--:|--:|--:|",
        ]
        lines += [_brier_row(a) for a in forecast]
    lines += ["", "### Replies", "", "| Arm | Replies | Cut off | No answer | Failed | Final agreement |"]
    lines.append("|---|--:|--:|--:|--:|--:|")
    lines += [
        f"| {a.arm} | {a.replies} | {a.truncated_replies} | {a.unparsed_replies} | {a.failed_replies} | "
        f"{_percent(a.agreement) if a.agreement is not None else '—'} |"
        for a in summary.arms
    ]
    lines += ["", *_notes(summary)]
    return "\n".join(lines) + "\n"


def _row(a: ArmSummary) -> str:
    accuracy = a.accuracy
    cells = [
        a.arm,
        str(a.items),
        _percent(accuracy.estimate) if accuracy else "—",
        f"[{_percent(accuracy.low, sign=False, unit='')}, {_percent(accuracy.high, sign=False, unit='')}]"
        if accuracy
        else "—",
        comparison(a.vs_single, a.vs_single_mcnemar),
        comparison(a.vs_self_consistency, a.vs_self_consistency_mcnemar),
        standing(a.vs_self_consistency),
        str(a.wrong),
        str(a.unparsed),
        str(a.truncated),
        str(a.failed),
        str(a.ties),
        str(a.calls),
        str(a.input_tokens),
        str(a.output_tokens),
        f"{a.wall_s:.1f}",
    ]
    return "| " + " | ".join(cells) + " |"


def _brier_row(a: ArmSummary) -> str:
    rate = a.correct / a.items if a.items else 0.0
    return f"| {a.arm} | {a.judge_forecasts} | {a.judge_brier:.3f} | {rate * (1 - rate):.3f} |"


def _decision_row(arm: str, d: Decisions) -> str:
    counts = (
        d.all_right_kept,
        d.all_right_lost,
        d.split_picked_right,
        d.split_picked_wrong,
        d.none_right_fixed,
        d.none_right_stayed,
    )
    return f"| {arm} | " + " | ".join(str(n) for n in counts) + " |"


def standing(difference: Interval | None) -> str:
    """An arm's accuracy difference from a reference arm, in words: a loss or a win only when the whole
    95% interval is on one side of zero."""
    if difference is None:
        return "—"
    if difference.high < 0:
        return "loses"
    if difference.low > 0:
        return "wins"
    if difference.estimate < 0:
        return "behind (CI includes 0)"
    if difference.estimate > 0:
        return "ahead (CI includes 0)"
    return "level"


def comparison(interval: Interval | None, test: McNemar | None) -> str:
    """A Δ cell: ``+3.8 pp [−1.9, +9.6] · 7/3 · p=0.34`` — the paired-bootstrap difference with its
    interval, the items only this arm / only the reference got right, and the exact McNemar p-value."""
    cell = _delta(interval)
    if test is None:
        return cell
    return f"{cell} · {test.only_this}/{test.only_reference} · {p_value(test.p_value)}"


def p_value(p: float) -> str:
    """``p=0.34``, ``p=0.039``, ``p=1``; ``p<0.001`` below a thousandth."""
    return "p<0.001" if p < 0.001 else f"p={p:.2g}"


def _delta(interval: Any) -> str:
    if interval is None:
        return "—"
    low = _percent(interval.low, sign=True, unit="")
    high = _percent(interval.high, sign=True, unit="")
    return f"{_percent(interval.estimate, sign=True, unit=' pp')} [{low}, {high}]"


def comparison_table(summary: BenchSummary) -> list[str]:
    """The compact table of a run (``benchmarks/bench_tables.py``): per arm the items, the accuracy with its
    95% CI, the differences from ``single`` and from self-consistency (paired bootstrap, discordant items,
    McNemar p) and the mean calls and tokens (input + output) per item."""
    sc = summary.self_consistency_arm or "self-consistency"
    lines = [
        f"| Arm | n | Accuracy [95% CI] | Δ vs single | Δ vs {sc} | Calls / item | Tokens / item |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for a in summary.arms:
        accuracy = a.accuracy
        cells = [
            a.arm,
            str(a.items),
            f"{_percent(accuracy.estimate)} [{_percent(accuracy.low, unit='')}, {_percent(accuracy.high, unit='')}]"
            if accuracy
            else "—",
            comparison(a.vs_single, a.vs_single_mcnemar),
            comparison(a.vs_self_consistency, a.vs_self_consistency_mcnemar),
            f"{a.calls / a.items:.1f}" if a.items else "—",
            f"{(a.input_tokens + a.output_tokens) / a.items:,.0f}" if a.items else "—",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def comparison_legend(summary: BenchSummary) -> str:
    """What the cells of :func:`comparison_table` mean, in one paragraph."""
    return (
        f"Accuracy: share of items right, percentile-bootstrap 95% CI ({summary.resamples} resamples, seed "
        f"{summary.spec.seed}). Δ: accuracy difference in percentage points with a paired-bootstrap 95% CI over the "
        "items both arms finished · b/c: items only this arm / only the other arm got right · p: two-sided exact "
        "McNemar test on b and c. Calls and tokens (input + output): means per item, every provider call counted."
    )


def _percent(value: float, *, sign: bool = False, unit: str = "%") -> str:
    number = 100 * value
    text = f"{number:+.1f}" if sign else f"{number:.1f}"
    return text.replace("-", "−") + unit


def _notes(summary: BenchSummary) -> list[str]:
    notes = [
        "Notes:",
        "",
        "- Accuracy is the share of items whose final answer is right. *Unparsed* (no answer found), "
        "*Cut off* (no answer, and a reply that counted was cut off by the token limit) and *Failed* (no answer "
        "because the provider failed on that item: calls that kept failing or timed out, a refused request such as "
        "a prompt past the context window, a debate that failed) items are scored wrong and counted apart from "
        "*Wrong* answers; the run goes on past a failed item. The *Replies* table counts the same at the level "
        "of single replies, where a cut-off reply may still have stated its answer.",
        f"- 95% CI: percentile bootstrap over items ({summary.resamples} resamples, seed {summary.spec.seed}). "
        "Δ: difference in accuracy (percentage points) from a paired bootstrap over the items both arms finished, "
        "then *b*/*c*: of those items, how many only this arm got right and how many only the other arm, and "
        "*p*: the two-sided exact McNemar test on *b* and *c* (the chance of a split at least this uneven if "
        "both arms were equally good; p=1 when no item tells them apart). "
        "*Against* self-consistency: *loses* or *wins* when the whole interval of Δ is below or above zero; "
        "*behind* or *ahead* when Δ is negative or positive but its interval includes zero (these items do not "
        "tell it from chance).",
        f"- Ties: {TIE_RULE}. The *Ties* column counts the items the rule decided.",
        f"- Sampling: `single` is greedy (temperature {GREEDY_TEMPERATURE:g}); every other sample and debate turn "
        f"uses temperature {summary.spec.temperature:g}.",
        "- *From the last replies to the final answer*: items whose last stage had two or more replies, by how "
        "many of those replies were right, against the final answer, which a later step decides (the majority "
        "vote of the samples or of the last round; in `dialectic` and `format:` arms, the judge, after the "
        "participants' vote in `format:vote`). A wrong final answer where some or all replies were right was lost "
        "by that step, not by the replies.",
        "- Calls and tokens count every provider call, continuations of cut-off replies included; a sample two "
        "arms share (the k-th draw of the same request) counts for each, as if it asked alone. *Wall s* sums "
        "the time of each item (items overlap with `--concurrency`).",
        "- Numeric answers match when equal within a relative tolerance of "
        f"{float(NUMERIC_TOLERANCE):g} (absolute below 1); text answers after normalisation (case, punctuation, "
        "articles).",
    ]
    for arm in summary.arms:
        if arm.kind == "self-consistency" and arm.matched_to:
            notes.append(
                f"- `{arm.arm}` draws {arm.planned_calls} samples per item: the calls `{arm.matched_to}` makes "
                "(compute matched by calls; compare the token columns to judge the match)."
            )
        if arm.kind == "dialectic":
            notes.append(
                "- `dialectic` runs the engine's propose → critique → refine → judge flow with the run's "
                "configuration; its answer is the judge's. Its stages are round 1 proposals, then each round's "
                "refinements."
            )
    return notes
