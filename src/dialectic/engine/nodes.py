"""The debate as a graph of nodes.

Each node's ``run`` returns the next node — its return annotation is the node's list
of edges, which :func:`graph` reads so a test can check the whole graph. Nodes keep no
state of their own: everything lives in the debate state, so the runner can save the
name of the next node after every step and a resumed debate picks up there.
"""

from __future__ import annotations

import asyncio
import typing
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from dialectic import events as ev
from dialectic.changes import (
    JudgeSummaryRecorded,
    QuestionsAsked,
    RoundStarted,
    SolutionRecorded,
)
from dialectic.context.history import (
    debate_text,
    final_round_text,
)
from dialectic.domain import (
    AgentClarifications,
    ClarificationItem,
    Phase,
    Solution,
)
from dialectic.engine.attempts import with_second_chance
from dialectic.engine.context import RunContext, metadata_from
from dialectic.engine.summaries import summary_from
from dialectic.engine.work import DebateWork
from dialectic.errors import ProviderError
from dialectic.text_similarity import restatement


class Node(ABC):
    name: ClassVar[str]

    @abstractmethod
    async def run(self, ctx: RunContext) -> Node | End | Suspend:
        """Do this step's work and return what comes next."""


@dataclass(frozen=True)
class End:
    """The debate is complete."""


@dataclass(frozen=True)
class Suspend:
    """Stop running and wait for a human; ``resume_at`` runs when the debate is resumed."""

    resume_at: Node
    reason: str


class InitializationNode(Node):
    name = "initialization"

    async def run(self, ctx: RunContext) -> ClarificationNode:
        ctx.flush_warnings(ctx.roster.warnings)
        return ClarificationNode()


def clarifications_enabled(ctx: RunContext) -> bool:
    return bool(ctx.state.config.get("debate", {}).get("interactiveClarifications", False))


class ClarificationNode(Node):
    """Agents ask questions; the debate suspends until they are answered; follow-ups up to a cap."""

    name = "clarification"

    async def run(self, ctx: RunContext) -> RoundManagerNode | Suspend:
        if not clarifications_enabled(ctx):
            return RoundManagerNode()
        if ctx.state.pending_questions():
            return Suspend(self, "waiting for answers to clarifying questions")
        settings = ctx.roster.settings
        if ctx.state.clarification_iterations >= settings.clarifications_max_iterations:
            return RoundManagerNode()
        groups = await self._collect(ctx)
        if not groups:
            return RoundManagerNode()
        ctx.record(QuestionsAsked(iteration=ctx.state.clarification_iterations + 1, groups=groups))
        return Suspend(self, "waiting for answers to clarifying questions")

    async def _collect(self, ctx: RunContext) -> list[AgentClarifications]:
        settings = ctx.roster.settings
        existing = ctx.state.clarification_items()
        warnings: list[str] = []

        async def ask(agent_index: int) -> list[str]:
            agent = ctx.roster.agents[agent_index]
            try:
                result = await ctx.announce(
                    agent,
                    "asking questions",
                    agent.ask_questions(
                        problem=ctx.problem,
                        context="",
                        existing=existing,
                        max_questions=settings.clarifications_max_per_agent,
                        warnings=warnings,
                        on_retry=ctx.retry_hook(agent, "asking questions"),
                    ),
                )
            except ProviderError as exc:
                warnings.append(f"{agent.name} could not ask questions ({exc}); continuing without them")
                return []
            if result.value is None:
                warnings.append(f"{agent.name}'s questions did not parse ({result.error}); none taken")
                return []
            questions = [q.text.strip() for q in result.value.questions if q.text.strip()]
            if len(questions) > settings.clarifications_max_per_agent:
                warnings.append(
                    f"{agent.name} asked {len(questions)} questions; keeping the first "
                    f"{settings.clarifications_max_per_agent}"
                )
                questions = questions[: settings.clarifications_max_per_agent]
            return questions

        asked = await asyncio.gather(*(ask(i) for i in range(len(ctx.roster.agents))))
        ctx.flush_warnings(warnings)
        next_id = len(existing) + 1
        iteration = ctx.state.clarification_iterations + 1
        groups: list[AgentClarifications] = []
        for agent, questions in zip(ctx.roster.agents, asked, strict=True):
            if not questions:
                continue
            items = []
            for question in questions:
                items.append(ClarificationItem(id=f"q{next_id}", question=question, iteration=iteration))
                next_id += 1
            groups.append(AgentClarifications(agent_id=agent.id, agent_name=agent.name, role=agent.role, items=items))
        return groups


class RoundManagerNode(Node):
    name = "round_manager"

    async def run(self, ctx: RunContext) -> SummarizationNode | SynthesisNode:
        settings = ctx.roster.settings
        if ctx.state.current_round >= settings.rounds:
            return SynthesisNode()
        number = ctx.state.current_round + 1
        # Saved with the cursor move, so a crash here can never start the same round twice.
        ctx.defer(RoundStarted(round_number=number), ev.RoundStarted(ctx.debate_id, number, settings.rounds))
        return SummarizationNode()


def work_for(ctx: RunContext) -> DebateWork:
    """The run's task graph, with the work of the current round and every later one scheduled."""
    if ctx.work is None:
        ctx.work = DebateWork(ctx)
        ctx.work.start_rounds(max(1, ctx.state.current_round))
    return ctx.work


class SummarizationNode(Node):
    """Each agent's summary of its own earlier rounds, where that history has grown past its threshold.

    A summary starts as soon as its agent's history is final (see :mod:`dialectic.engine.work`);
    this step waits until every agent's is settled.
    """

    name = "summarization"

    async def run(self, ctx: RunContext) -> ProposalNode:
        work = work_for(ctx)
        number = ctx.state.current_round
        keys = work.summary_keys(number)
        if keys:
            ctx.emit(ev.PhaseStarted(ctx.debate_id, number, "summarization", len(keys)))
            await work.wait(keys)
            ctx.emit(ev.PhaseCompleted(ctx.debate_id, number, "summarization"))
        return ProposalNode()


class ProposalNode(Node):
    name = "proposal"

    async def run(self, ctx: RunContext) -> CritiqueNode:
        await _phase(ctx, "proposal")
        return CritiqueNode()


class CritiqueNode(Node):
    name = "critique"

    async def run(self, ctx: RunContext) -> RefinementNode:
        await _phase(ctx, "critique")
        return RefinementNode()


class RefinementNode(Node):
    name = "refinement"

    async def run(self, ctx: RunContext) -> EvaluationNode:
        await _phase(ctx, "refinement")
        return EvaluationNode()


async def _phase(ctx: RunContext, phase: Phase) -> None:
    """Wait for the current round's work of one kind (already under way where its inputs existed)."""
    work = work_for(ctx)
    number = ctx.state.current_round
    keys = {
        "proposal": work.proposal_keys,
        "critique": work.critique_keys,
        "refinement": work.refinement_keys,
    }[phase](number)
    ctx.emit(ev.PhaseStarted(ctx.debate_id, number, phase, len(keys)))
    await work.wait(keys)
    ctx.emit(ev.PhaseCompleted(ctx.debate_id, number, phase))


class EvaluationNode(Node):
    """For ``convergence``/``quality`` termination: the judge's confidence decides whether to stop early."""

    name = "evaluation"

    async def run(self, ctx: RunContext) -> RoundManagerNode | SynthesisNode:
        condition = ctx.roster.settings.termination_condition
        number = ctx.state.current_round
        if condition.type == "fixed" or number >= ctx.roster.settings.rounds:
            return RoundManagerNode()
        work = work_for(ctx)
        evaluation = await work.evaluation(number)
        if evaluation is None:
            return RoundManagerNode()
        stop = evaluation.confidence >= condition.threshold
        ctx.emit(ev.EvaluationCompleted(ctx.debate_id, number, evaluation, condition.threshold, stop))
        if not stop:
            return RoundManagerNode()
        await work.discard_beyond(number)
        return SynthesisNode()


class SynthesisNode(Node):
    name = "synthesis"

    async def run(self, ctx: RunContext) -> End:
        judge = ctx.roster.judge
        ctx.emit(ev.SynthesisStarted(ctx.debate_id))
        await self._summarize_if_long(ctx)
        summary = ctx.state.judge_summary
        result = await with_second_chance(
            lambda: ctx.announce(
                judge,
                "synthesizing",
                judge.synthesize(
                    problem=ctx.problem,
                    clarifications=ctx.clarifications_text(),
                    debate=summary.summary if summary else debate_text(ctx.state),
                    debate_is_summary=summary is not None,
                    on_retry=ctx.retry_hook(judge, "synthesizing"),
                ),
                kind="synthesis",
            )
        )
        metadata = metadata_from(result.completion)
        if result.value is not None:
            v = result.value
            solution = Solution(
                description=v.description,
                tradeoffs=v.tradeoffs,
                recommendations=v.recommendations,
                unfulfilled_major_requirements=v.unfulfilled_major_requirements,
                open_questions=v.open_questions,
                confidence=v.confidence,
                synthesized_by=judge.id,
                metadata=metadata,
            )
        else:
            ctx.warn(
                f"the judge's solution did not match the expected structure ({result.error}); "
                "its reply is used as the solution text"
            )
            solution = Solution(
                description=result.completion.text.strip() or "(the judge returned no text)",
                confidence=0,
                synthesized_by=judge.id,
                structured=False,
                metadata=metadata,
            )
        if metadata.truncated:
            ctx.warn("the judge's solution was cut off by the token limit")
        check = restatement(solution.description, ctx.state.problem)
        if check.restates:
            ctx.warn(
                f"the judge's solution mostly restates the problem (only {check.novelty:.0%} of its content words "
                "are not in the problem): read the agents' proposals in the report, or give the judge a larger model"
            )
        ctx.defer(SolutionRecorded(solution=solution))  # saved with the completion, in one transaction
        return End()

    async def _summarize_if_long(self, ctx: RunContext) -> None:
        judge = ctx.roster.judge
        if ctx.state.judge_summary is not None or not judge.summarization.enabled:
            return
        text = final_round_text(ctx.state)
        if len(debate_text(ctx.state)) < judge.summarization.threshold or not text:
            return
        warnings: list[str] = []
        try:
            completion = await ctx.announce(
                judge,
                "summarizing",
                judge.summarize(
                    problem=ctx.problem, debate=text, warnings=warnings, on_retry=ctx.retry_hook(judge, "summarizing")
                ),
            )
        except ProviderError as exc:
            ctx.flush_warnings(warnings)
            ctx.warn(f"the judge could not summarize the final round ({exc}); it reads the full debate")
            return
        ctx.flush_warnings(warnings)
        summary = summary_from(judge, judge.summarization, completion, before_chars=len(text))
        ctx.record(JudgeSummaryRecorded(summary=summary))


NODES: dict[str, type[Node]] = {
    cls.name: cls
    for cls in (
        InitializationNode,
        ClarificationNode,
        RoundManagerNode,
        SummarizationNode,
        ProposalNode,
        CritiqueNode,
        RefinementNode,
        EvaluationNode,
        SynthesisNode,
    )
}


def graph() -> dict[str, set[str]]:
    """Node name → names it can lead to (``end`` / ``suspend`` for the two ways out), read from annotations."""
    edges: dict[str, set[str]] = {}
    for name, cls in NODES.items():
        returned = typing.get_type_hints(cls.run)["return"]
        options = typing.get_args(returned) or (returned,)
        edges[name] = {
            "end" if option is End else "suspend" if option is Suspend else option.name for option in options
        }
    return edges
