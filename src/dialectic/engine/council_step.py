"""``format: council``: the council's rules (:mod:`dialectic.engine.council`), run by the engine.

Round 1 holds it all. Every member answers on its own (:mod:`.first_answers`); then every member
ranks every answer, anonymised and in an order of its own (``council_rank.md.j2``), each ranking
saved as it completes; the rankings, read from the saved replies, are combined by Borda count and
the count is saved (:class:`~dialectic.core.changes.CouncilCounted`) with the answers the chair is
given: the top :data:`TOP`, best first. Once a ranking is saved the answers are kept as they are (a
ranking read against other answers would read wrong), so a resumed debate asks only for the missing
rankings.

The chair is the judge, and it writes the result from the top answers only:

* on a question with one right answer, with the council's own chair prompt (``council_chair.md.j2``,
  asked for a boxed answer). That is the prompt the bench's ``council`` arm sends, so the bench
  measures what this format runs; and the engine's synthesis would not do here, since on such a
  question it lets a majority of *all* the participants overrule the judge
  (:mod:`dialectic.engine.judge_answer`), which would bring back answers the council ranked out.
  A chair that states no answer of its own leaves the top-ranked answer standing (the bench's rule);
* on a design, by the judge's usual structured synthesis (``SynthesisNode``), given the top answers
  best first in place of the debate (:func:`chair_text`): the solution keeps its sections (tradeoffs,
  recommendations, open questions), and the synthesis its judge fallback and context tools.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from dialectic.agents.deliberation import BOXED_ANSWER, LabelledAnswer, chair_council, rank_answers
from dialectic.agents.participants import DebateAgent
from dialectic.agents.templates import reasoning_instructions, render
from dialectic.core import events as ev
from dialectic.core.changes import CouncilCounted
from dialectic.core.config import JUDGE_FALLBACK_OFF
from dialectic.core.domain import Contribution, CouncilOutcome, CouncilRanking, CouncilStanding, Solution
from dialectic.core.errors import ProviderError
from dialectic.engine.answer_step import answer_of
from dialectic.engine.attempts import with_second_chance
from dialectic.engine.council import CouncilPlan, borda, chairman_choice, read_ranking, shown_to
from dialectic.engine.dropping import active_agents
from dialectic.engine.first_answers import (
    ROUND,
    answer_round,
    answers_of,
    attempt,
    enough_answers,
    need_two,
    saved,
)
from dialectic.engine.fitting import gated
from dialectic.engine.judge_answer import own_answer
from dialectic.engine.run_state import RunState, metadata_from

TOP = CouncilPlan().top
"""Answers the chair is given, best first."""
CHAIRING = "chairing the council"


def latest_rankings(ctx: RunState) -> dict[str, Contribution]:
    """Ranker id → its saved ranking."""
    return {c.agent_id: c for c in saved(ctx, "ranking")}


async def run_council(ctx: RunState) -> CouncilOutcome:
    """Answer, rank, count; return the saved count (already saved when resuming past it)."""
    if ctx.state.council is not None:
        return ctx.state.council
    members = active_agents(ctx)
    need_two(members, "council")
    failures: list[ProviderError] = []
    if not latest_rankings(ctx):
        await answer_round(ctx, members, failures)
    answers = enough_answers(ctx, failures)
    texts = [answers[m.id].content if m.id in answers else None for m in members]
    todo = [k for k, member in enumerate(members) if member.id not in latest_rankings(ctx)]
    if todo:
        ctx.emit(ev.PhaseStarted(ctx.debate_id, ROUND, "ranking", len(todo)))
        await asyncio.gather(*(_rank(ctx, members, k, texts, failures) for k in todo))
        ctx.emit(ev.PhaseCompleted(ctx.debate_id, ROUND, "ranking"))
    rankings = latest_rankings(ctx)
    if not rankings and failures:
        raise failures[0]  # not one ranking to count: the debate fails, resumably, its answers kept
    outcome = count(members, texts, rankings)
    ctx.record(CouncilCounted(outcome=outcome))
    ctx.emit(ev.CouncilStandings(ctx.debate_id, outcome))
    return outcome


async def _rank(
    ctx: RunState, members: Sequence[DebateAgent], k: int, texts: Sequence[str | None], failures: list[ProviderError]
) -> Contribution | None:
    ranker = members[k]
    shown = [LabelledAnswer(s.label, s.text) for s in shown_to(k, texts)]
    return await attempt(
        ctx,
        ranker,
        "ranking",
        "ranking the answers",
        lambda: rank_answers(
            ranker,
            problem=ctx.problem_for(ranker),
            responses=shown,
            on_retry=ctx.retry_hook(ranker, "ranking the answers"),
        ),
        failures,
    )


def count(
    members: Sequence[DebateAgent], texts: Sequence[str | None], rankings: dict[str, Contribution]
) -> CouncilOutcome:
    """Every saved ranking read against the answers its ranker was shown, and the Borda count over them."""
    ids = [m.id for m in members]
    records: list[CouncilRanking] = []
    orders: list[list[int]] = []
    for k, ranker in enumerate(ids):
        reply = rankings.get(ranker)
        if reply is None:
            continue
        shown = shown_to(k, texts)
        order = read_ranking(reply.content, shown)
        orders.append(order)
        records.append(
            CouncilRanking(
                ranker_id=ranker, order=[ids[m] for m in order], shown={s.label: ids[s.member] for s in shown}
            )
        )
    standings = borda(orders, [k for k, text in enumerate(texts) if text is not None])
    chosen = chairman_choice(standings, CouncilPlan(members=len(ids), top=TOP))
    return CouncilOutcome(
        rankings=records,
        standings=[CouncilStanding(agent_id=ids[s.member], points=s.points) for s in standings],
        chosen=[ids[m] for m in chosen],
    )


def chosen_answers(ctx: RunState, outcome: CouncilOutcome) -> list[Contribution]:
    """The answers the chair is given, best first."""
    answers = answers_of(ctx)
    return [answers[agent_id] for agent_id in outcome.chosen if agent_id in answers]


def chair_text(ctx: RunState, outcome: CouncilOutcome) -> str:
    """What the judge reads in place of the debate on a design: the council's top answers, best first."""
    points = {s.agent_id: s.points for s in outcome.standings}
    top = chosen_answers(ctx, outcome)
    lead = (
        f"## The council's top-ranked answers\nThe council's {len(outcome.standings)} members answered on their "
        f"own, then each ranked every answer without knowing whose it was; by Borda count these {len(top)} came "
        "first, best first. Write the solution from them alone: start from the first, and take from the others "
        "only what it lacks or gets wrong."
    )
    blocks = [
        f"### Ranked {place} ({points.get(c.agent_id, 0)} points)\n{c.content.strip()}"
        for place, c in enumerate(top, 1)
    ]
    return "\n\n".join([lead, *blocks])


async def chair_solution(ctx: RunState, outcome: CouncilOutcome) -> Solution:
    """The chair's final answer, on a question with one right answer (see the module's docstring)."""
    judge = ctx.roster.judge
    top = chosen_answers(ctx, outcome)
    try:
        reply = await with_second_chance(
            lambda: ctx.announce(
                judge,
                CHAIRING,
                gated(
                    ctx,
                    judge,
                    CHAIRING,
                    lambda: chair_council(
                        judge,
                        problem=ctx.problem_for(judge),
                        responses=[c.content for c in top],
                        answer_instruction=BOXED_ANSWER,
                        on_retry=ctx.retry_hook(judge, CHAIRING),
                    ),
                ),
                kind="synthesis",
            )
        )
    except ProviderError as error:
        if judge.config.fallback == JUDGE_FALLBACK_OFF:
            raise
        ctx.warn(f"the chair ({judge.name}) failed after its retries ({error}); the council's top-ranked answer stands")
        return _top_stands(ctx, top, failure=str(error))
    completion = reply.completion
    text = completion.text.strip()
    instructions = "\n".join(
        [judge.system_prompt, render("council_chair.md.j2", problem="", responses=[], answer_instruction=BOXED_ANSWER)]
    )
    answer = own_answer(text, f"{instructions}\n{reasoning_instructions()}")
    if completion.truncated:
        ctx.warn("the chair's answer was cut off by the token limit")
    if answer is None:
        ctx.warn("the chair's reply states no answer of its own: the council's top-ranked answer stands")
        solution = _top_stands(ctx, top, chair=text)
    else:
        agreeing, answered = _agreement(ctx, answer)
        solution = Solution(
            description="\n".join(
                [
                    f"**Answer: {answer}** (the chair's, from the council's top {len(top)} answers; "
                    f"{agreeing} of {answered} answers agree).",
                    "",
                    text,
                ]
            ),
            confidence=round(100 * agreeing / answered) if answered else 0,
            synthesized_by=judge.id,
        )
    solution.metadata = metadata_from(completion)
    return solution


def _agreement(ctx: RunState, answer: str) -> tuple[int, int]:
    """How many members' answers state ``answer``, of those that state one."""
    stated = [answer_of(c) for c in answers_of(ctx).values()]
    given = [a for a in stated if a is not None]
    return sum(1 for a in given if a == answer), len(given)


def _top_stands(ctx: RunState, top: Sequence[Contribution], *, failure: str | None = None, chair: str = "") -> Solution:
    """The solution when the chair gave no answer: the top-ranked answer, as its member wrote it (and so
    ``synthesized_by`` names that member; ``failure``: the chair's error, when it failed)."""
    best = top[0]
    answer = answer_of(best)
    lines = []
    if answer is not None:
        agreeing, answered = _agreement(ctx, answer)
        lines = [f"**Answer: {answer}** (the council's top-ranked answer; {agreeing} of {answered} answers agree).", ""]
        confidence = round(100 * agreeing / answered) if answered else 0
    else:
        confidence = 0
    lines.append(best.content.strip())
    if chair:
        lines += ["", f"The chair's reply, which stated no answer: {' '.join(chair.split())[:240]}"]
    return Solution(
        description="\n".join(lines), confidence=confidence, synthesized_by=best.agent_id, judge_failure=failure
    )
