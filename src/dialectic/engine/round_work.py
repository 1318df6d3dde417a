"""The work of one round, scheduled by data rather than by phase barriers.

A critique starts the moment its target's proposal exists; a refinement starts the
moment every critique of its author has settled (saved or recorded as failed). The
Proposal, Critique and Refinement nodes each wait for their part of the same task
graph, so the graph's cursor still moves node by node while calls overlap.

Every task first looks in the state for its contribution: after a crash or a Ctrl-C the
work is rebuilt and only what was not saved is asked of the model again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from dialectic.agents.participants import DebateAgent
from dialectic.context.history import history_for
from dialectic.domain import Contribution, ContributionMetadata, ContributionType
from dialectic.engine.context import RunContext, contribution_from, failed_contribution
from dialectic.errors import DebateTimeoutError, ProviderError

CRITIQUE_ATTEMPTS = 2
"""A critique that fails (after the client's own retries) is tried once more, then recorded as failed."""


class RoundWork:
    def __init__(self, ctx: RunContext, round_number: int) -> None:
        self.ctx = ctx
        self.round_number = round_number
        loop = asyncio.get_running_loop()
        self.deadline = loop.time() + ctx.roster.settings.timeout_per_round / 1000
        self._tasks: list[asyncio.Task[Any]] = []
        agents = ctx.roster.agents
        self.proposals = {a.id: self._spawn(self._proposal(a)) for a in agents}
        self.critiques = {
            (critic.id, target.id): self._spawn(self._critique(critic, target))
            for critic in agents
            for target in agents
            if critic.id != target.id
        }
        self.refinements = {a.id: self._spawn(self._refinement(a)) for a in agents}

    def _spawn(self, coro: Coroutine[Any, Any, Contribution]) -> asyncio.Task[Contribution]:
        task = asyncio.ensure_future(coro)
        self._tasks.append(task)
        return task

    async def wait(self, kind: ContributionType) -> list[Contribution]:
        """Wait for every task of ``kind``; raises the first failure or ``DebateTimeoutError``."""
        groups: dict[str, dict[Any, asyncio.Task[Contribution]]] = {
            "proposal": dict(self.proposals),
            "critique": dict(self.critiques),
            "refinement": dict(self.refinements),
        }
        group = groups[kind]
        remaining = self.deadline - asyncio.get_running_loop().time()
        try:
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for returns the result and drops a
            # cancellation (Ctrl-C, SIGTERM) that arrives as the awaited work completes.
            async with asyncio.timeout(max(remaining, 0.001)):
                return await _gather_shielded(list(group.values()))
        except TimeoutError:
            ms = self.ctx.roster.settings.timeout_per_round
            raise DebateTimeoutError(
                f"round {self.round_number} took longer than timeoutPerRound ({ms} ms); "
                "the work saved so far is kept and the debate can be resumed"
            ) from None

    async def cancel(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- the three kinds of task -------------------------------------------------------------

    def _history(self, agent: DebateAgent) -> tuple[str, bool]:
        return history_for(
            self.ctx.state, agent.id, self.round_number, full_history=self.ctx.roster.settings.include_full_history
        )

    async def _proposal(self, agent: DebateAgent) -> Contribution:
        ctx, rnd = self.ctx, self.ctx.state.round(self.round_number)
        saved = rnd.find("proposal", agent.id)
        if saved is not None:
            return saved
        if self.round_number > 1:
            previous = ctx.state.round(self.round_number - 1).find("refinement", agent.id)
            if previous is not None and previous.ok:
                carried = Contribution(
                    agent_id=agent.id,
                    agent_role=agent.role,
                    type="proposal",
                    content=previous.content,
                    metadata=ContributionMetadata(
                        model=previous.metadata.model, truncated=previous.metadata.truncated, carried_over=True
                    ),
                )
                return ctx.add_contribution(self.round_number, agent, carried)
            ctx.warn(f"{agent.name} has no refinement from round {self.round_number - 1}; asking for a new proposal")
        history, is_summary = self._history(agent)
        completion = await ctx.announce(
            agent,
            "proposing",
            agent.propose(
                problem=ctx.problem,
                context="",
                clarifications=ctx.clarifications_text(),
                history=history,
                history_is_summary=is_summary,
                on_retry=ctx.retry_hook(agent, "proposing"),
            ),
        )
        return ctx.add_contribution(self.round_number, agent, contribution_from(agent, "proposal", completion))

    async def _critique(self, critic: DebateAgent, target: DebateAgent) -> Contribution:
        proposal = await self.proposals[target.id]
        ctx, rnd = self.ctx, self.ctx.state.round(self.round_number)
        saved = rnd.find("critique", critic.id, target.id)
        if saved is not None:
            return saved
        activity = f"critiquing {target.name}"
        history, is_summary = self._history(critic)
        last_error: ProviderError | None = None
        for _ in range(CRITIQUE_ATTEMPTS):
            try:
                completion = await ctx.announce(
                    critic,
                    activity,
                    critic.critique(
                        problem=ctx.problem,
                        clarifications=ctx.clarifications_text(),
                        history=history,
                        history_is_summary=is_summary,
                        target=target,
                        proposal=proposal,
                        on_retry=ctx.retry_hook(critic, activity),
                    ),
                )
            except ProviderError as exc:
                last_error = exc
                continue
            contribution = contribution_from(critic, "critique", completion, target_agent_id=target.id)
            return ctx.add_contribution(self.round_number, critic, contribution)
        assert last_error is not None
        failed = failed_contribution(
            critic, "critique", last_error, target_agent_id=target.id, attempts=CRITIQUE_ATTEMPTS
        )
        return ctx.add_contribution(self.round_number, critic, failed)

    async def _refinement(self, agent: DebateAgent) -> Contribution:
        original = await self.proposals[agent.id]
        received = [await task for (critic_id, target_id), task in self.critiques.items() if target_id == agent.id]
        ctx, rnd = self.ctx, self.ctx.state.round(self.round_number)
        saved = rnd.find("refinement", agent.id)
        if saved is not None:
            return saved
        critiques = [
            {"author_name": ctx.roster.agent(c.agent_id).name, "author_role": c.agent_role, "content": c.content}
            for c in received
            if c.ok
        ]
        history, is_summary = self._history(agent)
        completion = await ctx.announce(
            agent,
            "refining",
            agent.refine(
                problem=ctx.problem,
                clarifications=ctx.clarifications_text(),
                history=history,
                history_is_summary=is_summary,
                original=original,
                critiques=critiques,
                on_retry=ctx.retry_hook(agent, "refining"),
            ),
        )
        return ctx.add_contribution(self.round_number, agent, contribution_from(agent, "refinement", completion))


async def _gather_shielded(tasks: list[asyncio.Task[Contribution]]) -> list[Contribution]:
    """Gather without cancelling the shared tasks when the waiter is cancelled (other nodes await them too)."""
    return list(await asyncio.gather(*(asyncio.shield(t) for t in tasks)))
