"""The arms that pick among independent answers rather than vote on them, or that talk to correct them.

* ``best-of:N`` — N independent answers; one judge call reads them all (numbered) and picks one;
* ``council[:N]`` — N members answer on their own, each ranks all N answers anonymised, the
  rankings are combined by Borda count and the judge, as chair, writes the final answer from the
  top two (:mod:`dialectic.engine.council`, the ``council`` format's rules);
* ``correction[:N]`` — N members answer, each checks the next one's answer and may name a broken
  requirement with a quote as evidence, only a corrected answer is revised, and the whole
  trajectory decides (:mod:`dialectic.engine.correction`, the ``correction`` format's rules);
* ``confident:N`` — N independent answers; the less confident half (by the mean log-probability of
  their tokens, as DeepConf filters traces) is dropped before a majority vote.

The first answers of all four are the run's shared samples (:mod:`dialectic.bench.draws`): answer ``k``
is the same reply self-consistency's sample ``k`` is, so comparing arms on one item compares what
they do with the same answers, and the calls are made once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dialectic.agents.templates import render as render_agents
from dialectic.bench.asking import answer_instruction, ask, first_turn, gather_or_cancel, panel_member
from dialectic.bench.environment import ArmEnv
from dialectic.bench.metering import Meter
from dialectic.bench.records import Reply
from dialectic.bench.tasks import Item
from dialectic.bench.templates import render
from dialectic.bench.vote import majority_vote
from dialectic.engine.correction import Critique, Trajectory, decide, read_critique
from dialectic.engine.council import CouncilPlan, borda, chairman_choice, read_ranking, shown_to
from dialectic.llm.base import Message

GREEDY = 0.0
_CHOICE = re.compile(r"<choice>\s*(\d+)\s*</choice>", re.IGNORECASE)
_CHOICE_LOOSE = re.compile(r"candidate\s+(\d+)", re.IGNORECASE)


@dataclass
class Picked:
    """What a selecting arm did: its stages, the final answer it chose, and how (votes or points)."""

    stages: list[str]
    rounds: list[list[Reply]]
    final: str | None
    judge: Reply | None = None
    votes: dict[str, int] = field(default_factory=dict)
    tie: bool = False


async def answers(env: ArmEnv, meter: Meter, item: Item, arm: str, count: int, who: str = "sample") -> list[Reply]:
    """``count`` independent answers: the run's shared samples 0…count-1."""

    async def one(k: int) -> Reply:
        agent, temperature = panel_member(env, k)
        return await ask(env, meter, item, agent, first_turn(item), temperature, arm, f"{who}-{k + 1}", draw=k)

    return await gather_or_cancel(one(k) for k in range(count))


async def judge_call(env: ArmEnv, meter: Meter, item: Item, arm: str, who: str, prompt: str) -> Reply:
    judge = env.dialectic_config.judge
    return await ask(env, meter, item, judge, (Message("user", prompt),), GREEDY, arm, who)


def read_choice(text: str, count: int) -> int | None:
    """The candidate (0-based) a pick names: its last ``<choice>N</choice>``, else its last "Candidate N"."""
    for pattern in (_CHOICE, _CHOICE_LOOSE):
        for found in reversed(pattern.findall(text)):
            number = int(found)
            if 1 <= number <= count:
                return number - 1
    return None


async def best_of(env: ArmEnv, meter: Meter, item: Item, arm: str, count: int) -> Picked:
    """N answers, then the judge picks one; a pick that names no candidate falls back to the first answer."""
    drawn = await answers(env, meter, item, arm, count)
    usable = [r for r in drawn if r.answer is not None]
    if len({r.answer for r in usable}) <= 1:  # nothing to choose between: no call
        final = usable[0].answer if usable else None
        return Picked(["samples"], [drawn], final, votes=_counts(drawn))
    prompt = render("pick", question=item.question, candidates=[r.text for r in usable])
    pick = await judge_call(env, meter, item, arm, "judge", prompt)
    chosen = read_choice(pick.text, len(usable))
    final = usable[chosen if chosen is not None else 0].answer
    return Picked(["samples"], [drawn], final, judge=pick.model_copy(update={"answer": final}), votes=_counts(drawn))


async def council(env: ArmEnv, meter: Meter, item: Item, arm: str, plan: CouncilPlan) -> Picked:
    drawn = await answers(env, meter, item, arm, plan.members, who="member")
    texts = [r.text if r.error is None and r.text.strip() else None for r in drawn]
    if sum(t is not None for t in texts) == 0:
        return Picked(["answers"], [drawn], None)
    problem = item.question

    async def rank(k: int) -> tuple[Reply, list[int]]:
        shown = shown_to(k, texts)
        prompt = render_agents("council_rank.md.j2", problem=problem, responses=shown)
        agent, temperature = panel_member(env, k)
        reply = await ask(env, meter, item, agent, (Message("user", prompt),), temperature, arm, f"ranker-{k + 1}")
        return reply, read_ranking(reply.text, shown)

    ranked = await gather_or_cancel(rank(k) for k in range(plan.members))
    present = [m for m, t in enumerate(texts) if t is not None]
    standings = borda([ranking for _, ranking in ranked], present)
    top = chairman_choice(standings, plan)
    prompt = render_agents(
        "council_chair.md.j2",
        problem=item.question,
        responses=[texts[m] for m in top],
        answer_instruction=answer_instruction(item),
    )
    chair = await judge_call(env, meter, item, arm, "chair", prompt)
    final = chair.answer if chair.answer is not None else drawn[top[0]].answer
    points = {f"member-{s.member + 1}": s.points for s in standings}
    return Picked(["answers", "rankings"], [drawn, [r for r, _ in ranked]], final, judge=chair, votes=points, tie=False)


async def correction(env: ArmEnv, meter: Meter, item: Item, arm: str, members: int) -> Picked:
    drawn = await answers(env, meter, item, arm, members, who="member")
    problem = item.question

    async def check(k: int) -> tuple[Reply | None, Critique | None]:
        target = drawn[(k + 1) % members]
        if target.error is not None or target.answer is None:
            return None, None
        prompt = render_agents("correction_critique.md.j2", problem=problem, answer=target.text)
        agent, temperature = panel_member(env, k)
        reply = await ask(env, meter, item, agent, (Message("user", prompt),), temperature, arm, f"critic-{k + 1}")
        return reply, read_critique(reply.text, target.text)

    checks = await gather_or_cancel(check(k) for k in range(members))
    critiques: list[Critique | None] = [None] * members
    for k, (_, critique) in enumerate(checks):
        critiques[(k + 1) % members] = critique

    async def revise(k: int) -> Reply | None:
        critique = critiques[k]
        if critique is None or not critique.corrects:
            return None
        prompt = render_agents(
            "correction_revise.md.j2",
            problem=problem,
            answer=drawn[k].text,
            violation=critique.violation or "",
            evidence=critique.evidence or "",
            answer_instruction=answer_instruction(item),
        )
        agent, temperature = panel_member(env, k)
        return await ask(env, meter, item, agent, (Message("user", prompt),), temperature, arm, f"reviser-{k + 1}")

    revisions = await gather_or_cancel(revise(k) for k in range(members))
    paths = [
        Trajectory(
            answer=drawn[k].answer,
            critique=critiques[k],
            revised=revision.answer if revision is not None else None,
            confidence=drawn[k].confidence,
        )
        for k, revision in enumerate(revisions)
    ]
    decision = decide(paths)
    stages, rounds = ["answers", "critiques"], [drawn, [reply for reply, _ in checks if reply is not None]]
    revised = [r for r in revisions if r is not None]
    if revised:
        stages.append("revisions")
        rounds.append(revised)
    votes = {answer: round(points) for answer, points in decision.points.items()}
    return Picked(stages, rounds, decision.winner, votes=votes)


async def confident(env: ArmEnv, meter: Meter, item: Item, arm: str, count: int) -> Picked:
    """N answers; keep the more confident half by mean token log-probability (all when unknown), then vote."""
    drawn = await answers(env, meter, item, arm, count)
    scored = [r for r in drawn if r.answer is not None]
    known = [r for r in scored if r.trace_logprob is not None]
    kept = scored
    if len(known) == len(scored) and len(scored) > 1:
        ranked = sorted(scored, key=lambda r: -(r.trace_logprob or 0.0))
        kept = ranked[: max(1, (len(ranked) + 1) // 2)]
    vote = majority_vote([r.answer for r in kept])
    return Picked(["samples"], [drawn], vote.winner, votes=vote.counts, tie=vote.tied)


def _counts(replies: list[Reply]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for reply in replies:
        if reply.answer is not None:
            counts[reply.answer] = counts.get(reply.answer, 0) + 1
    return counts
