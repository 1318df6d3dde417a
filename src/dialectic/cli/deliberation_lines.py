"""One-line descriptions of what the protocols publish: round assessments, votes, verdicts."""

from __future__ import annotations

from collections.abc import Mapping

from dialectic.core import events as ev
from dialectic.core.domain import Verdict, VoteOutcome


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
