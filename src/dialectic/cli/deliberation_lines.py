"""One-line descriptions of what the protocols publish: round assessments, votes, verdicts, the council's
count and the correction-biased critique's decision."""

from __future__ import annotations

from collections.abc import Mapping

from dialectic.core import events as ev
from dialectic.core.domain import CorrectionOutcome, CouncilOutcome, Verdict, VoteOutcome

SHOWN_ANSWER = 40
"""Characters of an answer a line shows."""


def assessment_line(event: ev.AssessmentAdded, names: Mapping[str, str]) -> str:
    a = event.assessment
    parts = [f"assessment: round {event.round_number}"]
    if a.structured:
        parts.append(f"quality {a.quality:.1f}/10 ({a.quality_trend})")
        best = max(a.participants, key=lambda p: p.score, default=None)
        if best is not None:
            parts.append(f"best {names.get(best.agent_id, best.agent_id)} {best.score:.1f}")
    if a.similarity is not None:
        parts.append(f"similarity {a.similarity:.0%}")
    flags = [name.replace("_", " ") for name, on in a.flags.model_dump().items() if on]
    if flags:
        parts.append("flags: " + ", ".join(flags))
    parts.append(("stopping: " if event.stop else "") + event.reason)
    return ", ".join(parts)


def vote_line(outcome: VoteOutcome, names: Mapping[str, str]) -> str:
    tally = ", ".join(f"{names.get(agent, agent)} {support:g}" for agent, support in outcome.tally.items())
    if outcome.winner_id is None:
        result = "a tie" if outcome.tie else "no winner"
    else:
        result = f"{names.get(outcome.winner_id, outcome.winner_id)} wins" + (
            " with consensus" if outcome.consensus else " without consensus"
        )
    return f"vote ({outcome.rule}): {tally} — {result}"


def verdict_line(verdict: Verdict, names: Mapping[str, str]) -> str:
    winner = names.get(verdict.winner_id, verdict.winner_id) if verdict.winner_id else "no winner"
    line = f"verdict: {winner}, debate quality {verdict.quality}/100"
    if verdict.judge_shares_model_with:
        shared = ", ".join(names.get(a, a) for a in verdict.judge_shares_model_with)
        line += f" (the judge runs on the same model as {shared}: self-preference is possible)"
    return line


def council_line(outcome: CouncilOutcome, names: Mapping[str, str]) -> str:
    """``council (Borda): Alice 4, Bob 2, Carol 0 — the chair is given Alice, Bob``."""
    standings = ", ".join(f"{names.get(s.agent_id, s.agent_id)} {s.points}" for s in outcome.standings)
    chosen = ", ".join(names.get(agent, agent) for agent in outcome.chosen)
    return f"council (Borda): {standings} — the chair is given {chosen}"


def council_lines(outcome: CouncilOutcome, names: Mapping[str, str]) -> list[str]:
    """The count, then each ranker's order, best first."""
    lines = [council_line(outcome, names)]
    for ranking in outcome.rankings:
        ranker = names.get(ranking.ranker_id, ranking.ranker_id)
        order = " > ".join(names.get(agent, agent) for agent in ranking.order)
        lines.append(f"  {ranker} ranked: {order}" if order else f"  {ranker}'s ranking named no answer")
    return lines


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SHOWN_ANSWER else flat[: SHOWN_ANSWER - 1] + "…"


def correction_line(outcome: CorrectionOutcome, names: Mapping[str, str]) -> str:
    """``correction: 1 of 3 checks corrected; points 55 3, 54 0.5 — 55 wins (Alice)``."""
    corrected = sum(1 for check in outcome.checks if check.corrects)
    points = ", ".join(f"{_short(answer)} {value:g}" for answer, value in outcome.points.items())
    if outcome.winner is None:
        result = "no answer was stated"
    else:
        result = f"{_short(outcome.winner)} wins{_holder(outcome, names)}"
    return f"correction: {corrected} of {len(outcome.checks)} checks corrected; points {points or 'none'} — {result}"


def _holder(outcome: CorrectionOutcome, names: Mapping[str, str]) -> str:
    """`` (Alice)``: whose the winning answer is, unless the winner already names it (on a design)."""
    if outcome.winner_id is None or outcome.winner is None:
        return ""
    holder = names.get(outcome.winner_id, outcome.winner_id)
    return "" if outcome.winner.startswith(holder) else f" ({holder})"


def correction_lines(outcome: CorrectionOutcome, names: Mapping[str, str]) -> list[str]:
    """The decision, then each check's verdict (with the violation and the evidence of a correcting one)."""
    lines = [correction_line(outcome, names)]
    for check in outcome.checks:
        pair = f"{names.get(check.critic_id, check.critic_id)} → {names.get(check.target_id, check.target_id)}"
        if check.corrects:
            lines.append(f"  {pair}: corrects — violation: {check.violation}; evidence: “{check.evidence}”")
        else:
            lines.append(f"  {pair}: holds")
    return lines
