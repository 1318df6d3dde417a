"""The work of each step of the debate (:mod:`dialectic.engine.work`): what one task does once its inputs exist.

A proposal, a critique, a refinement, an agent's summary of its own history and the judge's
evaluation of a round: each first looks in the state for its saved result, then waits for its
inputs (other tasks of :mod:`dialectic.engine.work_table`), asks the model, and saves what it got
once its round is sure to happen. An agent whose proposal or refinement keeps failing is dropped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Literal

from dialectic.agents.participants import DebateAgent
from dialectic.agents.tool_loop import AgentReply
from dialectic.context.history import participant_names, perspective, rounds_text, summary_basis
from dialectic.core import events as ev
from dialectic.core.changes import SummaryRecorded
from dialectic.core.config import DebateSettings
from dialectic.core.domain import Contribution, ContributionMetadata, ContributionType, DebateSummary
from dialectic.core.errors import ProviderError
from dialectic.engine.assessment import Decision, assess
from dialectic.engine.attempts import with_second_chance
from dialectic.engine.dropping import active_agents, drop_agent
from dialectic.engine.files_access import with_tools_fallback
from dialectic.engine.fitting import Shapes, fitted
from dialectic.engine.memory import round_memories
from dialectic.engine.run_state import RunState, contribution_from, failed_contribution
from dialectic.engine.summaries import summarized, summary_from
from dialectic.engine.window_shapes import History, history_shapes
from dialectic.engine.work_keys import WorkKey, refinement_keys
from dialectic.engine.work_table import WorkTable


class DebateSteps:
    """The body of every kind of task: proposal, critique, refinement, summary and evaluation."""

    def __init__(self, ctx: RunState, table: WorkTable) -> None:
        self.ctx = ctx
        self.table = table

    @property
    def settings(self) -> DebateSettings:
        return self.ctx.roster.settings

    def body(self, key: WorkKey) -> Coroutine[Any, Any, Any]:
        """The work ``key`` names, as a coroutine."""
        kind, number = key.kind, key.round
        if kind == "evaluation":
            return self._evaluation(number)
        agent = self._agent(key.agent, key)
        if kind == "proposal":
            return self._proposal(number, agent)
        if kind == "critique":
            return self._critique(number, agent, self._agent(key.target, key))
        if kind == "refinement":
            return self._refinement(number, agent)
        if kind == "summary":
            return self._summary(number, agent)
        if kind == "window_summary":
            return self._summary(number, agent, forced=True)
        raise ValueError(f"unknown work {key!r}")

    def _agent(self, agent_id: str | None, key: WorkKey) -> DebateAgent:
        if agent_id is None:
            raise ValueError(f"work without its agent: {key!r}")
        return self.ctx.roster.agent(agent_id)

    # -- who is still in -------------------------------------------------------------------------

    def _out(self, *agents: DebateAgent) -> bool:
        dropped = self.ctx.state.dropped_ids()
        return any(a.id in dropped for a in agents)

    def _drop(
        self, agent: DebateAgent, number: int, kind: ContributionType, error: ProviderError, key: WorkKey
    ) -> None:
        """Take ``agent`` out (see :mod:`dialectic.engine.dropping`) and cancel its pending work."""
        drop_agent(self.ctx, agent, number, kind, error)
        self.table.cancel_work_of(agent.id, but=key)

    # -- the kinds of work ------------------------------------------------------------------------

    def _saved(self, number: int, kind: str, agent_id: str, target_id: str | None = None) -> Contribution | None:
        rnd = self.ctx.state.find_round(number)
        return rnd.find(kind, agent_id, target_id) if rnd is not None else None  # type: ignore[arg-type]

    async def _history_ready(self, number: int, agent: DebateAgent) -> None:
        """Wait until ``agent``'s own history for round ``number`` is final (and summarized if due)."""
        if number > 1:
            await self.table.input(WorkKey("refinement", number - 1, agent.id))
            await self.table.input(WorkKey("summary", number, agent.id))

    def _history(self, number: int, agent: DebateAgent) -> Shapes[History]:
        """``agent``'s history in round ``number``, in the shapes that may fit its window.

        See :mod:`dialectic.engine.fitting`; its summary for the window is one task per agent and
        round, however many of its calls need it.
        """

        async def summarize() -> str | None:
            summary = await self.table.input(WorkKey("window_summary", number, agent.id))
            return summary.summary if summary is not None else None

        return history_shapes(
            self.ctx.state,
            agent.id,
            number,
            strategy=self.settings.context_strategy,
            full_history=self.settings.include_full_history,
            summarize=summarize if agent.summarization.enabled and number > 1 else None,
        )

    def _summarized_before(self, number: int, agent: DebateAgent) -> bool:
        """Whether ``agent`` summarized its history in an earlier round: that summary is out of date now."""
        return any(agent.id in r.summaries for r in self.ctx.state.rounds if r.round_number < number)

    async def _proposal(self, number: int, agent: DebateAgent) -> Contribution | None:
        ctx = self.ctx
        saved = self._saved(number, "proposal", agent.id)
        if saved is not None and saved.ok:
            return saved
        if self._out(agent):
            return None
        if number > 1:
            previous = await self.table.input(WorkKey("refinement", number - 1, agent.id))
            if self._out(agent):
                return None
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
                # No call: critiques of it may start at once, even ahead of the judge's decision.
                self.table.save_when_decided(number, lambda: ctx.add_contribution(number, agent, carried))
                return carried
            ctx.warn(f"{agent.name} has no refinement from round {number - 1}; asking for a new proposal")
            await self._history_ready(number, agent)
        return await self._own_contribution(
            number,
            agent,
            "proposal",
            "proposing",
            lambda: fitted(
                ctx,
                agent,
                "proposing",
                self._history(number, agent),
                lambda history: agent.propose(
                    problem=ctx.problem_for(agent),
                    context="",
                    clarifications=ctx.clarifications_text(),
                    history=history.text,
                    history_is_summary=history.is_summary,
                    memories=round_memories(ctx.state, number),
                    tools=ctx.files.tools_for(agent),
                    on_retry=ctx.retry_hook(agent, "proposing"),
                ),
            ),
        )

    async def _own_contribution(
        self,
        number: int,
        agent: DebateAgent,
        kind: Literal["proposal", "refinement"],
        activity: str,
        make_call: Callable[[], Awaitable[AgentReply]],
    ) -> Contribution | None:
        """An agent's proposal or refinement: asked for (with a second chance), saved once its round is
        sure to happen — or, when it keeps failing, recorded as failed and the agent dropped."""
        key = WorkKey(kind, number, agent.id)
        ctx = self.ctx
        try:
            reply = await with_tools_fallback(
                ctx.files,
                agent,
                ctx.warn,
                lambda: with_second_chance(lambda: self.table.call(key, agent, activity, make_call())),
            )
        except ProviderError as exc:
            await self.table.save_or_discard(number, None)
            self._drop(agent, number, kind, exc, key)
            return None
        await self.table.save_or_discard(number, reply.completion)
        contribution = contribution_from(agent, kind, reply.completion, tool_calls=reply.tool_calls)
        return ctx.add_contribution(number, agent, contribution)

    async def _critique(self, number: int, critic: DebateAgent, target: DebateAgent) -> Contribution | None:
        ctx = self.ctx
        saved = self._saved(number, "critique", critic.id, target.id)
        if saved is not None:
            return saved
        proposal = await self.table.input(WorkKey("proposal", number, target.id))
        await self._history_ready(number, critic)
        if proposal is None or not proposal.ok or self._out(critic, target):
            return None
        activity = f"critiquing {target.name}"
        key = WorkKey("critique", number, critic.id, target.id)
        try:
            completion = await with_second_chance(
                lambda: self.table.call(
                    key,
                    critic,
                    activity,
                    fitted(
                        ctx,
                        critic,
                        activity,
                        self._history(number, critic),
                        lambda history: critic.critique(
                            problem=ctx.problem_for(critic),
                            clarifications=ctx.clarifications_text(),
                            history=history.text,
                            history_is_summary=history.is_summary,
                            target=target,
                            proposal=proposal,
                            on_retry=ctx.retry_hook(critic, activity),
                        ),
                    ),
                )
            )
        except ProviderError as exc:
            # A critique that cannot be had is recorded as failed; its author stays in the debate.
            await self.table.save_or_discard(number, None)
            failed = failed_contribution(critic, "critique", exc, target_agent_id=target.id, attempts=_attempts(exc))
            return ctx.add_contribution(number, critic, failed)
        await self.table.save_or_discard(number, completion)
        contribution = contribution_from(critic, "critique", completion, target_agent_id=target.id)
        return ctx.add_contribution(number, critic, contribution)

    async def _refinement(self, number: int, agent: DebateAgent) -> Contribution | None:
        ctx = self.ctx
        saved = self._saved(number, "refinement", agent.id)
        if saved is not None and saved.ok:
            return saved
        original = await self.table.input(WorkKey("proposal", number, agent.id))
        critics = [a for a in ctx.roster.agents if a.id != agent.id]
        received = [await self.table.input(WorkKey("critique", number, c.id, agent.id)) for c in critics]
        await self._history_ready(number, agent)
        if original is None or not original.ok or self._out(agent):
            return None
        critiques = [
            {"author_name": ctx.roster.agent(c.agent_id).name, "author_role": c.agent_role, "content": c.content}
            for c in received
            if c is not None and c.ok
        ]
        return await self._own_contribution(
            number,
            agent,
            "refinement",
            "refining",
            lambda: fitted(
                ctx,
                agent,
                "refining",
                self._history(number, agent),
                lambda history: agent.refine(
                    problem=ctx.problem_for(agent),
                    clarifications=ctx.clarifications_text(),
                    history=history.text,
                    history_is_summary=history.is_summary,
                    original=original,
                    critiques=critiques,
                    tools=ctx.files.tools_for(agent),
                    on_retry=ctx.retry_hook(agent, "refining"),
                ),
            ),
        )

    async def _summary(self, number: int, agent: DebateAgent, *, forced: bool = False) -> DebateSummary | None:
        """``agent``'s summary of its own history before round ``number``, when that history is long.

        It is also due when ``agent`` summarized an earlier round (that summary is out of date), and,
        ``forced``, when its prompt outgrew its context window (``debate.contextStrategy: summarize``).
        A forced summary is asked for while a call of the agent waits for it, so it never waits for
        its round to be decided: it is saved once the round is sure to happen, and never if it does not.
        """
        ctx = self.ctx
        rnd = ctx.state.find_round(number)
        if rnd is not None and agent.id in rnd.summaries:
            return rnd.summaries[agent.id]
        if not agent.summarization.enabled or self._out(agent):
            return None
        await self.table.input(WorkKey("refinement", number - 1, agent.id))
        views = perspective(ctx.state, agent.id, number)
        names = participant_names(ctx.state)
        history = rounds_text(views, names)
        due = forced or len(history) >= agent.summarization.threshold or self._summarized_before(number, agent)
        if self._out(agent) or not history or not due:
            return None
        # Incremental: an earlier summary (of the rounds before its own) plus the rounds since it.
        basis = summary_basis(ctx.state, agent.id, number - 1)
        previous, fresh = (
            ("", views) if basis is None else (basis[1].summary, [v for v in views if v.round_number >= basis[0]])
        )
        warnings: list[str] = []
        try:
            completion = await self.table.call(
                WorkKey("summary", number, agent.id),
                agent,
                "summarizing",
                summarized(ctx, agent, fresh, previous, warnings),
            )
        except ProviderError as exc:
            if not forced:
                await self.table.save_or_discard(number, None)
            ctx.flush_warnings(warnings)
            ctx.warn(f"{agent.name} could not summarize its history ({exc}); it keeps the full history")
            return None
        summary = summary_from(agent, agent.summarization, completion, before_chars=len(history))
        ctx.flush_warnings(warnings)
        if forced:
            self.table.save_when_decided(number, lambda: self._keep_summary(number, agent, summary))
        else:
            await self.table.save_or_discard(number, completion)
            self._keep_summary(number, agent, summary)
        return summary

    def _keep_summary(self, number: int, agent: DebateAgent, summary: DebateSummary) -> None:
        self.ctx.record(SummaryRecorded(round_number=number, summary=summary))
        self.ctx.emit(ev.SummaryAdded(self.ctx.debate_id, number, agent.name, summary))

    async def _evaluation(self, number: int) -> Decision:
        """Round ``number``'s assessment once its refinements are in; it decides whether the next round happens."""
        if self.table.decides(number):
            gate = self.table.gate(number + 1)
        await self.table.wait(refinement_keys(active_agents(self.ctx), number))
        if number > 1 and self.table.evaluates(number - 1):
            # the judge is shown its assessment of the previous round: wait for it even when the round
            # went on without it (a fixed number of rounds), or the prompt depends on which ends first
            await self.table.wait([WorkKey("evaluation", number - 1)])
        decision = await assess(self.ctx, number, may_stop=self.table.decides(number))
        if self.table.decides(number) and not gate.done():
            gate.set_result(not decision.stop)
        if decision.challenged:
            await self.table.restart_beyond(number)
        return decision


def _attempts(error: ProviderError) -> int:
    return int(getattr(error, "attempts", 1))
