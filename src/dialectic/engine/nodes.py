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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import ClassVar

from dialectic.agents.outputs import SynthesisOutput
from dialectic.agents.participants import Judge
from dialectic.agents.templates import REASONING_KIND
from dialectic.agents.tool_loop import StructuredReply
from dialectic.context.history import (
    POSITION_KINDS,
    debate_text,
    final_round_text,
    participant_names,
    rounds_text,
)
from dialectic.core import events as ev
from dialectic.core.changes import (
    DebateStoppedEarly,
    QuestionsAsked,
    RoundStarted,
    SolutionRecorded,
)
from dialectic.core.domain import (
    AgentClarifications,
    ClarificationItem,
    DebateSummary,
    EarlyStop,
    Phase,
    Solution,
)
from dialectic.core.errors import ProviderError
from dialectic.engine.adaptive import AdaptivePlan
from dialectic.engine.answer_step import run_adaptive, tally_solution, worked_reply
from dialectic.engine.assessment import assess, assessed
from dialectic.engine.attempts import with_second_chance
from dialectic.engine.correction_step import decided_solution, lead_text, run_correction
from dialectic.engine.council_step import chair_solution, chair_text, run_council
from dialectic.engine.files_access import with_tools_fallback
from dialectic.engine.first_answers import reasoning
from dialectic.engine.fitting import Shapes, fitted, gated, only
from dialectic.engine.judge_answer import answered
from dialectic.engine.judge_fallback import stand_ins
from dialectic.engine.judge_summary import judge_summary
from dialectic.engine.memory import recall_if_asked
from dialectic.engine.personas_step import assign_if_asked
from dialectic.engine.protocols import protocol
from dialectic.engine.run_state import RunState, metadata_from
from dialectic.engine.solution_checks import description_only, gate_confidence, unrestated
from dialectic.engine.turns import run_turns
from dialectic.engine.verdict_step import give_final_verdict, verdict_wanted
from dialectic.engine.vote_step import hold_vote, vote_text
from dialectic.engine.window_shapes import History, cut_rounds, debate_shapes
from dialectic.engine.work import DebateWork


class Node(ABC):
    name: ClassVar[str]

    @abstractmethod
    async def run(self, ctx: RunState) -> Node | End | Suspend:
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

    async def run(self, ctx: RunState) -> ClarificationNode:
        ctx.flush_warnings(ctx.roster.warnings)
        return ClarificationNode()


def clarifications_enabled(ctx: RunState) -> bool:
    saved = ctx.state.saved_config()
    return saved is not None and saved.debate.interactive_clarifications


class ClarificationNode(Node):
    """Agents ask questions; the debate suspends until they are answered; follow-ups up to a cap."""

    name = "clarification"

    async def run(self, ctx: RunState) -> PersonasNode | Suspend:
        if not clarifications_enabled(ctx):
            return PersonasNode()
        if ctx.state.pending_questions():
            return Suspend(self, "waiting for answers to clarifying questions")
        settings = ctx.roster.settings
        if ctx.state.clarification_iterations >= settings.clarifications_max_iterations:
            return PersonasNode()
        groups = await self._collect(ctx)
        if not groups:
            return PersonasNode()
        ctx.record(QuestionsAsked(iteration=ctx.state.clarification_iterations + 1, groups=groups))
        return Suspend(self, "waiting for answers to clarifying questions")

    async def _collect(self, ctx: RunState) -> list[AgentClarifications]:
        settings = ctx.roster.settings
        existing = ctx.state.clarification_items()
        warnings: list[str] = []

        async def ask(agent_index: int) -> list[str]:
            agent = ctx.roster.agents[agent_index]
            if agent.config.is_human:
                return []  # a person in a seat asks no clarifying questions: the one who asks the debate answers
            try:
                result = await ctx.announce(
                    agent,
                    "asking questions",
                    gated(
                        ctx,
                        agent,
                        "asking questions",
                        lambda: agent.ask_questions(
                            problem=ctx.problem,
                            context="",
                            existing=existing,
                            max_questions=settings.clarifications_max_per_agent,
                            warnings=warnings,
                            on_retry=ctx.retry_hook(agent, "asking questions"),
                        ),
                    ),
                    kind="clarification",
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


class PersonasNode(Node):
    """Positions and personas for the participants: configured, or assigned by the judge once (``personas: auto``)."""

    name = "personas"

    async def run(self, ctx: RunState) -> RoundManagerNode:
        recall_if_asked(ctx)
        await assign_if_asked(ctx)
        return RoundManagerNode()


ONE_ROUND = {"answer": "answers", "council": "council", "correction": "correction"}
"""The phase of the one round each one-round family holds (see :attr:`Protocol.one_round`)."""


class RoundManagerNode(Node):
    """Starts the next round in the protocol's way, or leads to the vote / the synthesis after the last."""

    name = "round_manager"

    async def run(
        self, ctx: RunState
    ) -> SummarizationNode | TurnsNode | AnswerNode | CouncilNode | CorrectionNode | VoteNode | SynthesisNode:
        settings = ctx.roster.settings
        chosen = protocol(settings.format)
        if chosen.one_round:
            if ctx.state.current_round == 0:
                started = RoundStarted(round_number=1, phase=ONE_ROUND[chosen.family])
                ctx.defer(started, ev.RoundBegan(ctx.debate_id, 1, 1))
            if chosen.family == "council":
                return CouncilNode()
            return CorrectionNode() if chosen.family == "correction" else AnswerNode()
        if ctx.state.current_round >= settings.rounds:
            return VoteNode() if chosen.votes else SynthesisNode()
        number = ctx.state.current_round + 1
        phase = chosen.turn_plan(number, settings.rounds).phase if chosen.family == "turns" else None
        # Saved with the cursor move, so a crash here can never start the same round twice.
        ctx.defer(RoundStarted(round_number=number, phase=phase), ev.RoundBegan(ctx.debate_id, number, settings.rounds))
        return TurnsNode() if chosen.family == "turns" else SummarizationNode()


class TurnsNode(Node):
    """One round of a turn format: every participant takes its turn (see :mod:`dialectic.engine.turns`)."""

    name = "turns"

    async def run(self, ctx: RunState) -> EvaluationNode:
        settings = ctx.roster.settings
        number = ctx.state.current_round
        plan = protocol(settings.format).turn_plan(number, settings.rounds)
        ctx.emit(ev.PhaseStarted(ctx.debate_id, number, plan.kind, len(ctx.state.active_agents())))
        await run_turns(ctx, number, plan)
        ctx.emit(ev.PhaseCompleted(ctx.debate_id, number, plan.kind))
        return EvaluationNode()


def work_for(ctx: RunState) -> DebateWork:
    """The run's task graph, with the work of the current round and every later one scheduled."""
    if isinstance(ctx.work, DebateWork):
        return ctx.work
    work = DebateWork(ctx)
    work.start_rounds(max(1, ctx.state.current_round))
    ctx.work = work
    return work


class SummarizationNode(Node):
    """Each agent's summary of its own earlier rounds, where that history has grown past its threshold.

    A summary starts as soon as its agent's history is final (see :mod:`dialectic.engine.work`);
    this step waits until every agent's is settled.
    """

    name = "summarization"

    async def run(self, ctx: RunState) -> ProposalNode:
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

    async def run(self, ctx: RunState) -> CritiqueNode:
        await _phase(ctx, "proposal")
        return CritiqueNode()


class CritiqueNode(Node):
    name = "critique"

    async def run(self, ctx: RunState) -> RefinementNode:
        await _phase(ctx, "critique")
        return RefinementNode()


class RefinementNode(Node):
    name = "refinement"

    async def run(self, ctx: RunState) -> EvaluationNode:
        await _phase(ctx, "refinement")
        return EvaluationNode()


async def _phase(ctx: RunState, phase: Phase) -> None:
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
    """The round's assessment (judge and detectors, when the protocol or termination needs it) and the stop decision."""

    name = "evaluation"

    async def run(self, ctx: RunState) -> RoundManagerNode | VoteNode | SynthesisNode:
        settings = ctx.roster.settings
        chosen = protocol(settings.format)
        number = ctx.state.current_round
        last = number >= settings.rounds
        if not assessed(settings):
            return RoundManagerNode()
        if chosen.family == "turns":
            may_stop = not last and chosen.turn_plan(number, settings.rounds).may_stop_after
            decision = await assess(ctx, number, may_stop=may_stop)
        else:
            decision = await work_for(ctx).evaluation(number)
        if decision.assessment is not None:
            ctx.emit(ev.AssessmentAdded(ctx.debate_id, number, decision.assessment, decision.stop, decision.reason))
        if not decision.stop or last:
            return RoundManagerNode()
        ctx.defer(DebateStoppedEarly(stop=EarlyStop(round_number=number, reason=decision.reason)))
        if ctx.work is not None:
            await ctx.work.discard_beyond(number)
        return VoteNode() if chosen.votes else SynthesisNode()


class AnswerNode(Node):
    """``format: adaptive``: blind answers, one exchange when contested, the weighted tally (:mod:`.answer_step`).

    A tally with an answer is the solution; with none (an open problem: no reply states one answer)
    the judge synthesizes as usual.
    """

    name = "answer"

    async def run(self, ctx: RunState) -> SynthesisNode | VerdictNode | End:
        tally = await run_adaptive(ctx, AdaptivePlan(most=ctx.roster.settings.answers.max_answers))
        if tally.answer is None:
            return SynthesisNode()
        ctx.defer(SolutionRecorded(solution=tally_solution(tally, worked_reply(ctx, tally.answer))))
        return VerdictNode() if verdict_wanted(ctx) else End()


class CouncilNode(Node):
    """``format: council``: answers, anonymised rankings, the Borda count (:mod:`.council_step`); then the chair
    (on a question with one right answer) or the judge's synthesis of the top answers (on a design)."""

    name = "council"

    async def run(self, ctx: RunState) -> ChairNode | SynthesisNode:
        await run_council(ctx)
        return ChairNode() if reasoning(ctx) else SynthesisNode()


class ChairNode(Node):
    """The judge, as the council's chair, writes the final answer from the top-ranked answers only."""

    name = "chair"

    async def run(self, ctx: RunState) -> VerdictNode | End:
        outcome = ctx.state.council
        assert outcome is not None, "the chair runs after the council's count"
        ctx.emit(ev.SynthesisStarted(ctx.debate_id))
        ctx.defer(SolutionRecorded(solution=await chair_solution(ctx, outcome)))
        return VerdictNode() if verdict_wanted(ctx) else End()


class CorrectionNode(Node):
    """``format: correction``: answers, correction-biased critiques, revisions of the corrected only, and the
    trajectory's decision (:mod:`.correction_step`). A decided question's answer is the solution; a design
    (or a question where no answer was stated) goes to the judge's synthesis."""

    name = "correction"

    async def run(self, ctx: RunState) -> SynthesisNode | VerdictNode | End:
        outcome = await run_correction(ctx)
        if not reasoning(ctx) or outcome.winner is None:
            return SynthesisNode()
        ctx.defer(SolutionRecorded(solution=decided_solution(ctx, outcome)))
        return VerdictNode() if verdict_wanted(ctx) else End()


class VoteNode(Node):
    """Participants vote on the final proposals (``format: vote``); see :mod:`dialectic.engine.vote_step`."""

    name = "vote"

    async def run(self, ctx: RunState) -> SynthesisNode:
        if ctx.state.vote is None:
            ctx.emit(ev.PhaseStarted(ctx.debate_id, ctx.state.current_round, "vote", len(ctx.state.active_agents())))
            await hold_vote(ctx)
            ctx.emit(ev.PhaseCompleted(ctx.debate_id, ctx.state.current_round, "vote"))
        return SynthesisNode()


class SynthesisNode(Node):
    name = "synthesis"

    async def run(self, ctx: RunState) -> VerdictNode | End:
        judge = ctx.roster.judge
        ctx.emit(ev.SynthesisStarted(ctx.debate_id))
        # the council's chair reads the top answers only: the rest of the debate needs no summary
        summary = await judge_summary(ctx) if ctx.state.council is None else None
        failure: str | None = None
        try:
            reply = await _synthesis(ctx, judge, summary)
        except ProviderError as error:
            # the chair must not sink the debate: a participant writes the synthesis (judge.fallback)
            failure = str(error)
            seats = stand_ins(judge, ctx.roster.agents, {a.id for a in ctx.state.active_agents()})
            if not seats:
                raise
            for number, seat in enumerate(seats, 1):
                ctx.warn(
                    f"the judge ({judge.name}) failed after its retries ({failure}); "
                    f"{seat.name} writes the synthesis in its place (judge.fallback)"
                )
                try:
                    reply = await _synthesis(ctx, seat, summary)
                except ProviderError:
                    if number == len(seats):
                        raise
                    continue
                judge = seat
                break
        result = reply.result
        tool_calls = list(reply.tool_calls) if reply.tool_calls is not None else None
        metadata = metadata_from(result.completion)
        if result.value is not None:
            v = result.value
            solution = Solution(
                description=description_only(v.description),
                tradeoffs=v.tradeoffs,
                recommendations=v.recommendations,
                unfulfilled_major_requirements=v.unfulfilled_major_requirements,
                open_questions=v.open_questions,
                confidence=v.confidence,
                synthesized_by=judge.id,
                judge_failure=failure,
                metadata=metadata,
                tool_calls=tool_calls,
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
                judge_failure=failure,
                structured=False,
                metadata=metadata,
                tool_calls=tool_calls,
            )
        if metadata.truncated:
            ctx.warn("the judge's solution was cut off by the token limit")
        solution = gate_confidence(solution, judge.config.model)
        if judge.problem_kind == REASONING_KIND:
            # a judge that states no answer (or copies its instructions' placeholder) yields to the participants' vote
            solution = answered(ctx, solution, judge.synthesis_instructions())
        else:
            # not on a question with one right answer: a restated problem is never recorded as its solution
            solution = unrestated(ctx, solution, judge.synthesis_instructions(), ctx.warn)
        ctx.defer(SolutionRecorded(solution=solution))  # saved with the next cursor move, in one transaction
        return VerdictNode() if verdict_wanted(ctx) else End()


async def _synthesis(ctx: RunState, judge: Judge, summary: DebateSummary | None) -> StructuredReply[SynthesisOutput]:
    """``judge``'s synthesis of the debate (the judge's, or a participant's in its seat: see :mod:`.judge_fallback`),
    with the call's second chance, the window fitted and the tools fallback."""
    names = participant_names(ctx.state)

    async def summarize() -> str | None:
        forced = await judge_summary(ctx, forced=True)
        return forced.summary if forced is not None else None

    return await with_tools_fallback(
        ctx.files,
        judge,
        ctx.warn,
        lambda: with_second_chance(
            lambda: ctx.announce(
                judge,
                "synthesizing",
                fitted(
                    ctx,
                    judge,
                    "synthesizing",
                    _debate_shapes(ctx, summary, names, summarize),
                    lambda debate: judge.synthesize(
                        problem=ctx.problem_for(judge),
                        clarifications=ctx.clarifications_text(),
                        debate=_with_vote(ctx, debate.text),
                        debate_is_summary=debate.is_summary,
                        tools=ctx.files.tools_for(judge),
                        on_retry=ctx.retry_hook(judge, "synthesizing"),
                    ),
                ),
                kind="synthesis",
            )
        ),
    )


def _debate_shapes(
    ctx: RunState, summary: DebateSummary | None, names: dict[str, str], summarize: Callable[[], Awaitable[str | None]]
) -> Shapes[History]:
    """The debate as the judge may read it for the synthesis, fullest first; after a council, only the
    council's top answers (see :mod:`.council_step`)."""
    if ctx.state.council is not None:
        return only(History(chair_text(ctx, ctx.state.council)))
    return debate_shapes(
        History(summary.summary, True) if summary else History(debate_text(ctx.state)),
        ctx.state.rounds,
        lambda rounds: rounds_text(rounds, names),
        strategy=ctx.roster.settings.context_strategy,
        summarize=summarize,
        positions=final_round_text(ctx.state),
        cut_positions=lambda share: rounds_text(cut_rounds(ctx.state.rounds[-1:], share), names, kinds=POSITION_KINDS),
    )


def _with_vote(ctx: RunState, debate: str) -> str:
    """The debate as the judge synthesizes it, with the vote (or the correction-biased critique's decision)
    first when there was one."""
    if ctx.state.correction is not None:
        return f"{lead_text(ctx, ctx.state.correction)}\n\n{debate}"
    outcome = ctx.state.vote
    if outcome is None:
        return debate
    names = {a.id: a.name for a in ctx.state.agents}
    if outcome.consensus and outcome.winner_id is not None:
        lead = (
            f"The participants voted, and {names.get(outcome.winner_id, outcome.winner_id)}'s final proposal won "
            "with consensus: build the solution on it, taking from the others only what it lacks."
        )
    else:
        lead = "The participants voted without reaching consensus: weigh every final proposal."
    return f"## The participants' vote\n{lead}\n{vote_text(ctx, outcome)}\n\n{debate}"


class VerdictNode(Node):
    """The judge's final verdict beside the solution (see :mod:`dialectic.engine.verdict_step`)."""

    name = "verdict"

    async def run(self, ctx: RunState) -> End:
        if ctx.state.verdict is None:
            await give_final_verdict(ctx)
        return End()


NODES: dict[str, type[Node]] = {
    cls.name: cls
    for cls in (
        InitializationNode,
        ClarificationNode,
        PersonasNode,
        RoundManagerNode,
        TurnsNode,
        SummarizationNode,
        ProposalNode,
        CritiqueNode,
        RefinementNode,
        EvaluationNode,
        AnswerNode,
        CouncilNode,
        ChairNode,
        CorrectionNode,
        VoteNode,
        SynthesisNode,
        VerdictNode,
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
