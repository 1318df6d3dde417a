"""Round 1 of ``format: council`` and ``format: correction``: every member answers on its own.

On a question with one right answer (``problemKind: reasoning``) an answer is the adaptive protocol's
blind answer (:func:`~dialectic.agents.deliberation.answer_blind`, at the agent's own temperature, no role);
on a design, the agent's ordinary proposal, with its role. Each call of these formats is saved as it
completes, so a resumed debate asks only for what is missing. A call that keeps failing skips that
member, with a warning (as the adaptive protocol's draws do); fewer than two answers fail the debate,
resumably.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from dialectic.agents.deliberation import answer_blind
from dialectic.agents.participants import DebateAgent
from dialectic.agents.templates import REASONING_KIND
from dialectic.agents.tool_loop import AgentReply
from dialectic.core import events as ev
from dialectic.core.domain import Contribution, ContributionType
from dialectic.core.errors import ConfigError, InvalidResponse, ProviderError
from dialectic.engine.adaptive import confidence
from dialectic.engine.attempts import with_second_chance
from dialectic.engine.files_access import with_tools_fallback
from dialectic.engine.fitting import gated
from dialectic.engine.memory import round_memories
from dialectic.engine.run_state import RunState, contribution_from

ROUND = 1
"""The one round these formats hold: the answers and every call about them."""
LEAST_ANSWERS = 2


def reasoning(ctx: RunState) -> bool:
    """Whether the debate is on a question with one right answer (``problemKind``, as the roster resolved it)."""
    return ctx.roster.judge.problem_kind == REASONING_KIND


def saved(ctx: RunState, kind: ContributionType) -> list[Contribution]:
    """Round 1's saved contributions of ``kind`` that succeeded, in the order saved."""
    found = ctx.state.find_round(ROUND)
    return [c for c in found.contributions if c.type == kind and c.ok] if found is not None else []


def answers_of(ctx: RunState) -> dict[str, Contribution]:
    """Member id → its answer: its latest proposal of round 1 that succeeded and holds text."""
    return {c.agent_id: c for c in saved(ctx, "proposal") if c.content.strip()}


def need_two(members: Sequence[DebateAgent], name: str) -> None:
    """Refuse, before any call, a format that needs two members and has fewer."""
    if len(members) < LEAST_ANSWERS:
        raise ConfigError(f"format {name} needs at least {LEAST_ANSWERS} agents ({len(members)} take part)")


async def attempt(
    ctx: RunState,
    agent: DebateAgent,
    kind: ContributionType,
    activity: str,
    call: Callable[[], Awaitable[AgentReply]],
    failures: list[ProviderError],
    *,
    target_id: str | None = None,
) -> Contribution | None:
    """One call of the format, saved as ``agent``'s contribution; a call that keeps failing is skipped
    (``None``, a warning, the failure kept in ``failures``)."""
    try:
        reply = await with_tools_fallback(
            ctx.files,
            agent,
            ctx.warn,
            lambda: with_second_chance(
                lambda: ctx.announce(
                    agent,
                    activity,
                    gated(ctx, agent, activity, call),
                    round_number=ROUND,
                    kind=kind,
                    target_id=target_id,
                )
            ),
        )
    except ProviderError as exc:
        ctx.warn(f"{agent.name} failed {activity} ({exc}); the debate goes on without it")
        failures.append(exc)
        return None
    completion = reply.completion
    contribution = contribution_from(agent, kind, completion, target_agent_id=target_id, tool_calls=reply.tool_calls)
    if kind == "proposal" and reasoning(ctx):  # how sure the model was of its answer: a tie-break of the decision
        contribution.metadata.confidence = confidence(completion.text, completion.logprobs)
    return ctx.add_contribution(ROUND, agent, contribution)


async def answer_round(ctx: RunState, members: Sequence[DebateAgent], failures: list[ProviderError]) -> None:
    """Ask every member without a saved answer for one, all at once."""
    missing = [agent for agent in members if agent.id not in answers_of(ctx)]
    if not missing:
        return
    ctx.emit(ev.PhaseStarted(ctx.debate_id, ROUND, "proposal", len(missing)))
    await asyncio.gather(*(_answer(ctx, agent, failures) for agent in missing))
    ctx.emit(ev.PhaseCompleted(ctx.debate_id, ROUND, "proposal"))


def _answer(ctx: RunState, agent: DebateAgent, failures: list[ProviderError]) -> Awaitable[Contribution | None]:
    problem = ctx.problem_for(agent)
    memories = round_memories(ctx.state, ROUND)
    if reasoning(ctx):
        return attempt(
            ctx,
            agent,
            "proposal",
            "answering",
            lambda: answer_blind(
                agent,
                problem=problem,
                clarifications=ctx.clarifications_text(),
                greedy=False,
                memories=memories,
                on_retry=ctx.retry_hook(agent, "answering"),
            ),
            failures,
        )
    return attempt(
        ctx,
        agent,
        "proposal",
        "proposing",
        lambda: agent.propose(
            problem=problem,
            context="",
            clarifications=ctx.clarifications_text(),
            history="",
            history_is_summary=False,
            memories=memories,
            tools=ctx.files.tools_for(agent),
            on_retry=ctx.retry_hook(agent, "proposing"),
        ),
        failures,
    )


def enough_answers(ctx: RunState, failures: Sequence[ProviderError]) -> dict[str, Contribution]:
    """The saved answers, when there are two at least; else the debate fails (resumably: the answers saved
    are kept, and resuming asks again for the others)."""
    answers = answers_of(ctx)
    if len(answers) >= LEAST_ANSWERS:
        return answers
    if failures:
        raise failures[0]
    raise InvalidResponse(
        f"only {len(answers)} of the members gave an answer with text, and this format needs "
        f"{LEAST_ANSWERS}; resume the debate to ask the others again"
    )
