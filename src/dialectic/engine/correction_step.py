"""``format: correction``: the correction-biased critique's rules (:mod:`dialectic.engine.correction`), run by
the engine.

Round 1 holds it all. Every member answers on its own (:mod:`.first_answers`). Member ``k`` then checks
member ``k + 1``'s answer (``correction_critique.md.j2``), saved as a critique aimed at it; whether a
critique corrects is read from its saved text (:func:`~dialectic.engine.correction.read_critique`), so
a resumed debate reads it the same. Only a corrected member is asked to revise
(``correction_revise.md.j2``, with the violation and the evidence), saved as its refinement; the others
keep their answer without a call. The whole trajectory then decides
(:func:`~dialectic.engine.correction.decide`), not the last round's majority, and the decision is saved
(:class:`~dialectic.core.changes.CorrectionDecided`).

On a question with one right answer the winning answer is the solution, as the adaptive tally's is: no
judge call (when no answer was stated at all, the judge synthesizes). On a design the trajectory picks
the member whose final text won, and the judge builds the solution on it (:func:`lead_text`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from dialectic.agents.deliberation import BOXED_ANSWER, check_answer, revise_answer
from dialectic.agents.participants import DebateAgent
from dialectic.core import events as ev
from dialectic.core.changes import CorrectionDecided
from dialectic.core.domain import Contribution, CorrectionCheck, CorrectionOutcome, Participant, Solution
from dialectic.core.errors import ProviderError
from dialectic.engine.answer_step import answer_of
from dialectic.engine.correction import Critique, Trajectory, decide, read_critique
from dialectic.engine.dropping import active_agents
from dialectic.engine.first_answers import (
    ROUND,
    answer_round,
    attempt,
    enough_answers,
    need_two,
    reasoning,
    saved,
)
from dialectic.engine.run_state import RunState

REVISED = " (revised)"
"""On a design, the key of a member's revision that changed its text: the member's name and this."""


def pairs(members: Sequence[DebateAgent]) -> list[tuple[DebateAgent, DebateAgent]]:
    """(critic, the member whose answer it checks): each member checks the next one's, the last the first's."""
    return [(critic, members[(k + 1) % len(members)]) for k, critic in enumerate(members)]


async def run_correction(ctx: RunState) -> CorrectionOutcome:
    """Answer, check, revise the corrected, decide; return the saved decision (already saved on resume past it)."""
    if ctx.state.correction is not None:
        return ctx.state.correction
    members = active_agents(ctx)
    need_two(members, "correction")
    failures: list[ProviderError] = []
    await answer_round(ctx, members, failures)
    answers = enough_answers(ctx, failures)
    checks = [(critic, target) for critic, target in pairs(members) if _checkable(ctx, answers.get(target.id))]
    todo = [(critic, target) for critic, target in checks if _critique(ctx, critic.id, target.id) is None]
    if todo:
        ctx.emit(ev.PhaseStarted(ctx.debate_id, ROUND, "critique", len(todo)))
        await asyncio.gather(*(_check(ctx, critic, target, answers[target.id], failures) for critic, target in todo))
        ctx.emit(ev.PhaseCompleted(ctx.debate_id, ROUND, "critique"))
    critiques = {t.id: c for critic, t in checks if (c := _critique(ctx, critic.id, t.id)) is not None}
    if not critiques and failures:
        raise failures[0]  # not one answer was checked: the debate fails, resumably, its answers kept
    read = {target: read_critique(c.content, answers[target].content) for target, c in critiques.items()}
    corrected = [m for m in members if m.id in read and read[m.id].corrects]
    revisions = _revisions(ctx)
    waiting = [m for m in corrected if m.id not in revisions]
    if waiting:
        ctx.emit(ev.PhaseStarted(ctx.debate_id, ROUND, "refinement", len(waiting)))
        await asyncio.gather(*(_revise(ctx, m, answers[m.id], read[m.id], failures) for m in waiting))
        ctx.emit(ev.PhaseCompleted(ctx.debate_id, ROUND, "refinement"))
        revisions = _revisions(ctx)
    points, winner, winner_id = _decision(ctx, members, answers, read, revisions)
    outcome = CorrectionOutcome(
        checks=[
            CorrectionCheck(
                critic_id=c.agent_id,
                target_id=target,
                corrects=read[target].corrects,
                violation=read[target].violation,
                evidence=read[target].evidence,
            )
            for target, c in critiques.items()
        ],
        revised=[m.id for m in corrected],
        points=points,
        winner=winner,
        winner_id=winner_id,
    )
    ctx.record(CorrectionDecided(outcome=outcome))
    ctx.emit(ev.TrajectoryDecided(ctx.debate_id, outcome))
    return outcome


def _checkable(ctx: RunState, answer: Contribution | None) -> bool:
    """Whether an answer is checked: one was given, and on a question with one right answer it states one
    (an answer that states none earns no points whatever is said of it, so the bench's arm skips it too)."""
    return answer is not None and (not reasoning(ctx) or answer_of(answer) is not None)


def _critique(ctx: RunState, critic_id: str, target_id: str) -> Contribution | None:
    found = [c for c in saved(ctx, "critique") if (c.agent_id, c.target_agent_id) == (critic_id, target_id)]
    return found[-1] if found else None


def _revisions(ctx: RunState) -> dict[str, Contribution]:
    return {c.agent_id: c for c in saved(ctx, "refinement")}


async def _check(
    ctx: RunState, critic: DebateAgent, target: DebateAgent, answer: Contribution, failures: list[ProviderError]
) -> Contribution | None:
    activity = f"checking {target.name}'s answer"
    return await attempt(
        ctx,
        critic,
        "critique",
        activity,
        lambda: check_answer(
            critic, problem=ctx.problem_for(critic), answer=answer.content, on_retry=ctx.retry_hook(critic, activity)
        ),
        failures,
        target_id=target.id,
    )


async def _revise(
    ctx: RunState, member: DebateAgent, answer: Contribution, critique: Critique, failures: list[ProviderError]
) -> Contribution | None:
    return await attempt(
        ctx,
        member,
        "refinement",
        "revising",
        lambda: revise_answer(
            member,
            problem=ctx.problem_for(member),
            answer=answer.content,
            violation=critique.violation or "",
            evidence=critique.evidence or "",
            answer_instruction=BOXED_ANSWER if reasoning(ctx) else "",
            on_retry=ctx.retry_hook(member, "revising"),
        ),
        failures,
    )


def _decision(
    ctx: RunState,
    members: Sequence[DebateAgent],
    answers: dict[str, Contribution],
    read: dict[str, Critique],
    revisions: dict[str, Contribution],
) -> tuple[dict[str, float], str | None, str | None]:
    """The trajectory's decision: the points per answer, the winner, and the member whose it is. On a question
    with one right answer the points go to the answers stated; on a design, to whose text each is (a revision
    that changed the text is a text of its own)."""
    paths: list[Trajectory] = []
    finals: dict[str, str] = {}
    firsts: dict[str, str] = {}
    """Key → the first member whose final text (its revision, else its answer) it is; and whose answer."""
    labels = _labels(ctx.state.agents)
    by_answer = reasoning(ctx)
    for member in members:
        answer = answers.get(member.id)
        if answer is None:
            continue
        revision = revisions.get(member.id)
        if by_answer:
            given, revised = answer_of(answer), answer_of(revision) if revision is not None else None
        else:
            given = labels[member.id]
            changed = revision is not None and revision.content.strip() != answer.content.strip()
            revised = (given + REVISED if changed else given) if revision is not None else None
        paths.append(Trajectory(given, read.get(member.id), revised, answer.metadata.confidence))
        final = revised if revised is not None else given
        if final is not None:
            finals.setdefault(final, member.id)
        if given is not None:
            firsts.setdefault(given, member.id)
    decision = decide(paths)
    winner = decision.winner
    winner_id = (finals.get(winner) or firsts.get(winner)) if winner is not None else None
    return decision.points, winner, winner_id


def _labels(agents: Sequence[Participant]) -> dict[str, str]:
    """Member id → its name, or its id where two share a name (the points must not add up across members)."""
    names = [a.name for a in agents]
    return {a.id: a.name if names.count(a.name) == 1 else a.id for a in agents}


def winning_text(ctx: RunState, outcome: CorrectionOutcome) -> Contribution | None:
    """The winner's worked text: the winning member's revision when it reached the winner, else its answer."""
    if outcome.winner_id is None:
        return None
    found = ctx.state.find_round(ROUND)
    own = [c for c in found.contributions if c.agent_id == outcome.winner_id and c.ok] if found is not None else []
    revision = next((c for c in reversed(own) if c.type == "refinement"), None)
    answer = next((c for c in reversed(own) if c.type == "proposal" and c.content.strip()), None)
    if revision is None:
        return answer
    winner = outcome.winner or ""
    reached = answer_of(revision) == winner if reasoning(ctx) else winner.endswith(REVISED)
    return revision if reached else answer


def decided_solution(ctx: RunState, outcome: CorrectionOutcome) -> Solution:
    """The solution of a decided question: the answer, its points, and the worked text that reached it."""
    assert outcome.winner is not None
    others = ", ".join(f"{a} {p:g}" for a, p in outcome.points.items() if a != outcome.winner)
    lines = [
        f"**Answer: {outcome.winner}** ({outcome.points[outcome.winner]:g} points over the whole trajectory"
        + (f"; the others: {others}" if others else "")
        + ")."
    ]
    worked = winning_text(ctx, outcome)
    if worked is not None:
        lines += ["", worked.content.strip()]
    positive = sum(p for p in outcome.points.values() if p > 0)
    return Solution(
        description="\n".join(lines),
        confidence=round(100 * max(0.0, outcome.points[outcome.winner]) / positive) if positive else 0,
        synthesized_by="correction",
    )


def lead_text(ctx: RunState, outcome: CorrectionOutcome) -> str:
    """What the judge reads first on a design: the trajectory's points, and whose final text to build on."""
    names = {a.id: a.name for a in ctx.state.agents}
    points = "\n".join(f"- {key}: {value:g} points" for key, value in outcome.points.items())
    if outcome.winner_id is None:
        lead = "The answers were checked for named errors; no text won: weigh every final text."
    else:
        lead = (
            "Each answer was checked by another participant for a violated requirement or a wrong step, and only "
            "a corrected answer was revised. Over the whole trajectory, "
            f"{names.get(outcome.winner_id, outcome.winner_id)}'s final text won: build the solution on it, taking "
            "from the others only what it lacks."
        )
    return f"## The correction-biased critique\n{lead}\n{points}"
