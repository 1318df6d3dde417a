"""One round of a turn format: every participant takes one turn.

``simultaneous`` turns run at once and see only earlier rounds; ``sequential`` turns run in
the agents' configured order, each seeing the turns before it in the same round. A turn
already saved is never asked for again (resume). An agent whose turn keeps failing is
dropped (see :mod:`dialectic.engine.dropping`).

When the discussion before a turn has grown past the agent's summarization threshold, the
agent first summarizes everything but the last round for itself; its turn then carries that
summary and the last round verbatim. A turn whose prompt outgrows the agent's context window is
shrunk by ``debate.contextStrategy`` (:mod:`dialectic.engine.fitting`): that summary made now,
or only the last rounds that fit.
"""

from __future__ import annotations

import asyncio
import time

from dialectic.agents.deliberation import take_turn
from dialectic.agents.participants import DebateAgent
from dialectic.context.history import participant_names, rounds_text, summary_basis
from dialectic.core import events as ev
from dialectic.core.changes import SummaryRecorded
from dialectic.core.domain import Contribution, DebateRound
from dialectic.core.errors import ProviderError
from dialectic.engine.attempts import with_second_chance
from dialectic.engine.dropping import active_agents, drop_agent
from dialectic.engine.files_access import with_tools_fallback
from dialectic.engine.fitting import Shapes, fitted
from dialectic.engine.memory import round_memories
from dialectic.engine.protocols import TurnPlan
from dialectic.engine.run_state import RunState, contribution_from
from dialectic.engine.summaries import summarized, summary_from
from dialectic.engine.watchdog import wait_while_progressing
from dialectic.engine.window_shapes import Discussion, turn_shapes


async def run_turns(ctx: RunState, number: int, plan: TurnPlan) -> None:
    """Every active agent's turn of round ``number``, as ``plan`` says."""
    settings = ctx.roster.settings
    agents = active_agents(ctx)

    async def watched(tasks: list[asyncio.Task[Contribution | None]]) -> None:
        try:
            await wait_while_progressing(
                tasks,
                last_progress=lambda: ctx.stalled_since(ctx.last_progress, time.monotonic),
                clock=time.monotonic,  # the clock of ctx.last_progress
                limit_ms=settings.timeout_per_round,
                round_number=number,
            )
            for task in tasks:
                task.result()  # a failure (too few agents, a bug) surfaces here
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    if plan.visibility == "simultaneous":
        await watched([asyncio.ensure_future(_turn(ctx, agent, number, plan)) for agent in agents])
    else:
        for agent in agents:
            await watched([asyncio.ensure_future(_turn(ctx, agent, number, plan))])


def _discussion(ctx: RunState, agent: DebateAgent, number: int, plan: TurnPlan) -> tuple[str, list[DebateRound]]:
    """What ``agent`` sees before its turn: the earlier rounds, and this round's earlier turns if sequential."""
    earlier = [r for r in ctx.state.rounds if r.round_number < number]
    if plan.visibility == "sequential":
        current = ctx.state.round(number)
        order = [a.id for a in ctx.roster.agents]
        before = order[: order.index(agent.id)]
        seen = [c for c in current.contributions if c.ok and c.agent_id in before]
        if seen:
            earlier = [*earlier, DebateRound(round_number=number, contributions=seen, timestamp=current.timestamp)]
    return rounds_text(earlier, participant_names(ctx.state)), earlier


async def _summary(ctx: RunState, agent: DebateAgent, number: int, earlier: list[DebateRound]) -> str:
    """The agent's own summary of the rounds before the last one (saved, so asked for once), or ``""``."""
    rnd = ctx.state.round(number)
    if agent.id in rnd.summaries:
        return rnd.summaries[agent.id].summary
    older = [r for r in earlier if r.round_number < number - 1]
    names = participant_names(ctx.state)
    source = rounds_text(older, names)
    if not source:
        return ""
    # Incremental: the agent's summary of round r covers the rounds before r − 1; read only what came after.
    basis = summary_basis(ctx.state, agent.id, number - 1)
    previous = "" if basis is None else basis[1].summary
    fresh = older if basis is None else [r for r in older if r.round_number >= basis[0] - 1]
    warnings: list[str] = []
    try:
        completion = await ctx.announce(
            agent,
            "summarizing",
            summarized(ctx, agent, fresh, previous, warnings),
            round_number=number,
            kind="summary",
        )
    except ProviderError as exc:
        ctx.flush_warnings(warnings)
        ctx.warn(f"{agent.name} could not summarize the discussion ({exc}); it reads it in full")
        return ""
    ctx.flush_warnings(warnings)
    summary = summary_from(agent, agent.summarization, completion, before_chars=len(source))
    ctx.record(SummaryRecorded(round_number=number, summary=summary))
    ctx.emit(ev.SummaryAdded(ctx.debate_id, number, agent.name, summary))
    return summary.summary


async def _turn(ctx: RunState, agent: DebateAgent, number: int, plan: TurnPlan) -> Contribution | None:
    saved = ctx.state.round(number).find(plan.kind, agent.id)
    if (saved is not None and saved.ok) or agent.id in ctx.state.dropped_ids():
        return saved
    discussion, earlier = _discussion(ctx, agent, number, plan)
    names = participant_names(ctx.state)
    recent = [r for r in earlier if r.round_number >= number - 1]
    summary = ""
    settings = agent.summarization
    if settings.enabled and len(discussion) >= settings.threshold and number > 2:
        summary = await _summary(ctx, agent, number, earlier)
        if summary:
            discussion = rounds_text(recent, names)
    activity = {"response": "taking a turn"}.get(plan.kind, f"giving the {plan.phase} statement")

    async def summarize() -> str | None:
        return await _summary(ctx, agent, number, earlier) or None

    def shapes() -> Shapes[Discussion]:
        return turn_shapes(
            Discussion(discussion, summary),
            earlier,
            recent,
            lambda rounds: rounds_text(rounds, names),
            strategy=ctx.roster.settings.context_strategy,
            summarize=summarize if settings.enabled and number > 2 else None,
        )

    try:
        reply = await with_tools_fallback(
            ctx.files,
            agent,
            ctx.warn,
            lambda: with_second_chance(
                lambda: ctx.announce(
                    agent,
                    activity,
                    fitted(
                        ctx,
                        agent,
                        activity,
                        shapes(),
                        lambda seen: take_turn(
                            agent,
                            template=plan.template,
                            kind=plan.kind,
                            problem=ctx.problem_for(agent),
                            clarifications=ctx.clarifications_text(),
                            discussion=seen.text,
                            summary=seen.summary,
                            round_number=number,
                            total_rounds=ctx.roster.settings.rounds,
                            memories=round_memories(ctx.state, number),
                            tools=ctx.files.tools_for(agent),
                            on_retry=ctx.retry_hook(agent, activity),
                        ),
                    ),
                    round_number=number,
                    kind=plan.kind,
                )
            ),
        )
    except ProviderError as exc:
        drop_agent(ctx, agent, number, plan.kind, exc)
        return None
    contribution = contribution_from(agent, plan.kind, reply.completion, tool_calls=reply.tool_calls)
    return ctx.add_contribution(number, agent, contribution)
