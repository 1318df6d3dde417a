"""``format: adaptive``: the answer protocol of :mod:`dialectic.engine.adaptive`, run by the engine.

Round 1 holds the blind answers, drawn from the participants in turn (answer ``k`` from agent
``k`` modulo their number, the first at temperature 0, the others at the agent's own), until
the leading answer cannot lose or holds its share. When the answers stay split between two
answers each given at least twice (contested), round 2 holds the exchange: as many reviews as the
plan asks, each reviewer shown the distinct answers
anonymised. The tally over every answer decides; it is saved (:class:`AnswerTallied`) and the
solution states the answer and how many agree. Answers already saved are kept on resume: the
draws go on from their number.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from dialectic.agents.deliberation import answer_blind, review_answers
from dialectic.agents.participants import DebateAgent
from dialectic.agents.tool_loop import AgentReply
from dialectic.core import events as ev
from dialectic.core.answers import stated_answer
from dialectic.core.changes import AnswerTallied, RoundStarted
from dialectic.core.domain import AnswerTally, Contribution, ContributionType, Solution
from dialectic.core.errors import ProviderError
from dialectic.engine.adaptive import (
    AdaptivePlan,
    Ballot,
    Option,
    confidence,
    exchange_options,
    is_contested,
    sampling_done,
    weighted_vote,
)
from dialectic.engine.attempts import with_second_chance
from dialectic.engine.dropping import active_agents
from dialectic.engine.memory import round_memories
from dialectic.engine.run_state import RunState, contribution_from

ANSWERS_ROUND = 1
EXCHANGE_ROUND = 2


def answer_of(contribution: Contribution) -> str | None:
    """The answer a saved reply states (its last ``\\boxed{}``, else its last explicit answer line)."""
    if not contribution.ok:
        return None
    return stated_answer(contribution.content, truncated=contribution.metadata.truncated)


def _saved(ctx: RunState, number: int, kind: ContributionType) -> list[Contribution]:
    if number > len(ctx.state.rounds):
        return []
    return [c for c in ctx.state.round(number).contributions if c.type == kind and c.ok]


async def _draw(
    ctx: RunState,
    agent: DebateAgent,
    number: int,
    kind: ContributionType,
    activity: str,
    call: Callable[[], Awaitable[AgentReply]],
    failures: list[ProviderError],
) -> Contribution | None:
    """One call of the protocol, saved as ``agent``'s contribution; a call that keeps failing is skipped."""
    try:
        reply = await with_second_chance(lambda: ctx.announce(agent, activity, call(), round_number=number, kind=kind))
    except ProviderError as exc:
        ctx.warn(f"{agent.name} could not answer ({exc}); the vote goes on without that answer")
        failures.append(exc)
        return None
    completion = reply.completion
    contribution = contribution_from(agent, kind, completion)
    contribution.metadata.confidence = confidence(completion.text, completion.logprobs)
    return ctx.add_contribution(number, agent, contribution)


async def run_adaptive(ctx: RunState, plan: AdaptivePlan | None = None) -> AnswerTally:
    """Draw, exchange when contested, tally; return the saved tally (already saved when resuming past it)."""
    if ctx.state.answer_tally is not None:
        return ctx.state.answer_tally
    run = _AdaptiveRun.begin(ctx, plan or AdaptivePlan())
    answers = await run.sample()
    given = [answer_of(c) for c in answers]
    exchanged = is_contested(given, run.plan) and run.plan.reviewers > 0
    reviews = await run.exchange(given, answers) if exchanged else []
    saved = _answer_tally([*answers, *reviews], exchanged)
    ctx.record(AnswerTallied(tally=saved))
    return saved


@dataclass
class _AdaptiveRun:
    """One adaptive run's draws: what every call is shown, and the provider failures met on the way."""

    ctx: RunState
    plan: AdaptivePlan
    agents: list[DebateAgent]
    problem: str
    clarifications: str
    memories: str
    failures: list[ProviderError] = field(default_factory=list)

    @classmethod
    def begin(cls, ctx: RunState, plan: AdaptivePlan) -> _AdaptiveRun:
        agents = active_agents(ctx)
        return cls(
            ctx,
            plan,
            agents,
            problem=ctx.problem_for(agents[0]),
            clarifications=ctx.clarifications_text(),
            memories=round_memories(ctx.state, 1),
        )

    async def sample(self) -> list[Contribution]:
        """Round 1: the plan's first answers at once, then one at a time until sampling is done."""
        ctx, plan = self.ctx, self.plan
        answers = _saved(ctx, ANSWERS_ROUND, "proposal")
        attempts = len(answers)
        if attempts < plan.first:
            ctx.emit(ev.PhaseStarted(ctx.debate_id, ANSWERS_ROUND, "proposal", plan.first - attempts))
            await asyncio.gather(*(self._blind(k) for k in range(attempts, plan.first)))
            attempts = plan.first
        answers = _saved(ctx, ANSWERS_ROUND, "proposal")
        if len(answers) < plan.first and self.failures:
            # Too few answers to vote on: the debate fails (resumable, its answers kept), as one whose calls fail.
            raise self.failures[0]
        while not sampling_done([answer_of(c) for c in answers], plan) and attempts < 2 * plan.most:
            await self._blind(len(answers))
            attempts += 1
            answers = _saved(ctx, ANSWERS_ROUND, "proposal")
        ctx.emit(ev.PhaseCompleted(ctx.debate_id, ANSWERS_ROUND, "proposal"))
        return answers

    async def exchange(self, given: list[str | None], answers: list[Contribution]) -> list[Contribution]:
        """Round 2: the plan's reviews of the distinct answers (anonymised); returns every saved review."""
        ctx = self.ctx
        options = exchange_options(given, [c.content for c in answers])
        if len(ctx.state.rounds) < EXCHANGE_ROUND:
            ctx.record(RoundStarted(round_number=EXCHANGE_ROUND, phase="exchange"))
            ctx.emit(ev.RoundBegan(ctx.debate_id, EXCHANGE_ROUND, EXCHANGE_ROUND))
        done = len(_saved(ctx, EXCHANGE_ROUND, "refinement"))
        ctx.emit(ev.PhaseStarted(ctx.debate_id, EXCHANGE_ROUND, "refinement", self.plan.reviewers - done))
        await asyncio.gather(*(self._review(k, given, options) for k in range(done, self.plan.reviewers)))
        ctx.emit(ev.PhaseCompleted(ctx.debate_id, EXCHANGE_ROUND, "refinement"))
        return _saved(ctx, EXCHANGE_ROUND, "refinement")

    def _blind(self, k: int) -> Awaitable[Contribution | None]:
        """Blind answer ``k``: agent ``k`` modulo their number; the first at temperature 0."""
        agent = self.agents[k % len(self.agents)]
        return _draw(
            self.ctx,
            agent,
            ANSWERS_ROUND,
            "proposal",
            "answering",
            lambda: answer_blind(
                agent,
                problem=self.problem,
                clarifications=self.clarifications,
                greedy=k == 0,
                memories=self.memories,
                on_retry=self.ctx.retry_hook(agent, "answering"),
            ),
            self.failures,
        )

    def _review(self, k: int, given: list[str | None], options: list[Option]) -> Awaitable[Contribution | None]:
        """Review ``k``: agent ``k`` modulo their number, reminded of the answer it gave."""
        agent = self.agents[k % len(self.agents)]
        own = given[k % len(given)] if given else None
        return _draw(
            self.ctx,
            agent,
            EXCHANGE_ROUND,
            "refinement",
            "reviewing the answers",
            lambda: review_answers(
                agent,
                problem=self.problem,
                options=options,
                own=own,
                on_retry=self.ctx.retry_hook(agent, "reviewing the answers"),
            ),
            self.failures,
        )


def _answer_tally(every: list[Contribution], exchanged: bool) -> AnswerTally:
    """The confidence-weighted vote over every answer and review, as it is saved."""
    tally = weighted_vote([Ballot(answer_of(c), c.metadata.confidence) for c in every])
    return AnswerTally(
        answer=tally.winner,
        counts=tally.counts,
        weights=tally.weights,
        agreeing=tally.agreeing,
        answered=tally.answered,
        tied=tally.tied,
        exchanged=exchanged,
    )


def tally_solution(tally: AnswerTally, agreeing_text: Contribution | None) -> Solution:
    """The solution of a decided tally: the answer, how many agree, and one worked reply that reached it."""
    assert tally.answer is not None
    others = ", ".join(f"{answer} ×{count}" for answer, count in tally.counts.items() if answer != tally.answer)
    lines = [f"**Answer: {tally.answer}** ({tally.agreement}{'; also given: ' + others if others else ''})."]
    if agreeing_text is not None:
        lines += ["", agreeing_text.content.strip()]
    return Solution(
        description="\n".join(lines),
        confidence=round(100 * tally.agreeing / tally.answered) if tally.answered else 0,
        synthesized_by="vote",
    )


def worked_reply(ctx: RunState, answer: str) -> Contribution | None:
    """The first saved reply that reached ``answer`` (shown under the answer)."""
    kinds: tuple[ContributionType, ...] = ("proposal", "refinement")
    for number in (ANSWERS_ROUND, EXCHANGE_ROUND):
        for kind in kinds:
            for contribution in _saved(ctx, number, kind):
                if answer_of(contribution) == answer:
                    return contribution
    return None
