"""What participants and the judge do in the deliberation protocols beyond critique-refine.

Each function turns one step (a turn, a vote, a round assessment, a verdict, a persona
assignment) into one request to the speaker's client and hands back its reply. Like
:mod:`dialectic.agents.participants`, nothing here decides scheduling, persistence or what a
failure means: the engine does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dialectic.agents.outputs import AssessmentOutput, PersonaAssignmentOutput, VerdictOutput, VoteOutput
from dialectic.agents.participants import PROPOSAL_WORDS, DebateAgent, Judge, files_variables
from dialectic.agents.templates import REASONING_KIND, phase_template, render
from dialectic.agents.tool_loop import AgentReply, ToolAccess
from dialectic.llm.client import RetryHook, StructuredResult
from dialectic.llm.schema_shape import SchemaShape

TURN_WORDS = PROPOSAL_WORDS

REASONING_TURN_TEMPLATE = "reasoning/turn.md.j2"
"""The turn of every turn format on a question with one right answer: work it out, then check the
others' working. The formats' own instructions are for open questions; on the embedded 1.5B
model's arithmetic benchmark, round-1 turns taken with them were right 38 times in 62, against
33 in 39 for critique-refine's reasoning proposals on the same questions."""


ANSWER_TEMPLATE = "reasoning/answer.md.j2"
"""A blind answer of the adaptive protocol: no peers, no role, the working first, the answer boxed."""
EXCHANGE_TEMPLATE = "reasoning/exchange.md.j2"
"""The adaptive protocol's exchange over split answers (see :mod:`dialectic.engine.adaptive`)."""


async def answer_blind(
    agent: DebateAgent,
    *,
    problem: str,
    clarifications: str,
    greedy: bool,
    memories: str = "",
    on_retry: RetryHook | None = None,
) -> AgentReply:
    """One independent answer (``greedy``: at temperature 0), asking for the tokens' probabilities;
    ``memories``: the past debates' section (``debate.memory: on``)."""
    user = render(
        ANSWER_TEMPLATE,
        problem=problem,
        clarifications=clarifications,
        memories=memories,
        word_limit=agent.word_limit(TURN_WORDS),
    )
    request = agent.request(user, "answer").with_changes(logprobs=True)
    if greedy:
        request = request.with_changes(temperature=0.0)
    return AgentReply(await agent.client.complete(request, on_retry=on_retry))


async def review_answers(
    agent: DebateAgent,
    *,
    problem: str,
    options: Sequence[object],
    own: str | None,
    on_retry: RetryHook | None = None,
) -> AgentReply:
    """The exchange: the distinct answers, anonymised, each with one worked solution; correct, don't conform."""
    user = render(EXCHANGE_TEMPLATE, problem=problem, options=options, own=own)
    request = agent.request(user, "review").with_changes(logprobs=True)
    return AgentReply(await agent.client.complete(request, on_retry=on_retry))


BOXED_ANSWER = "End with your final answer, written inside \\boxed{}."
"""How the council's chair and a correction's revision are asked for the answer on a question with one right
answer (the bench's instruction for a boxed answer, word for word)."""


@dataclass(frozen=True)
class LabelledAnswer:
    """An answer as a council's ranker sees it: its label (``A`` for "Response A"…), and the text."""

    label: str
    text: str


async def rank_answers(
    agent: DebateAgent, *, problem: str, responses: Sequence[LabelledAnswer], on_retry: RetryHook | None = None
) -> AgentReply:
    """A council member's ranking of every answer, anonymised (``council_rank.md.j2``)."""
    user = render("council_rank.md.j2", problem=problem, responses=responses)
    return AgentReply(await agent.client.complete(agent.request(user, "ranking"), on_retry=on_retry))


async def chair_council(
    judge: Judge, *, problem: str, responses: Sequence[str], answer_instruction: str, on_retry: RetryHook | None = None
) -> AgentReply:
    """The council's chair writes the final answer from the top-ranked answers, best first (``council_chair.md.j2``)."""
    user = render("council_chair.md.j2", problem=problem, responses=responses, answer_instruction=answer_instruction)
    return AgentReply(await judge.client.complete(judge.request(user, "chair"), on_retry=on_retry))


async def check_answer(
    agent: DebateAgent, *, problem: str, answer: str, on_retry: RetryHook | None = None
) -> AgentReply:
    """A correction-biased critique of one answer: a violation named with evidence, or none
    (``correction_critique.md.j2``)."""
    user = render("correction_critique.md.j2", problem=problem, answer=answer)
    return AgentReply(await agent.client.complete(agent.request(user, "check"), on_retry=on_retry))


async def revise_answer(
    agent: DebateAgent,
    *,
    problem: str,
    answer: str,
    violation: str,
    evidence: str,
    answer_instruction: str,
    on_retry: RetryHook | None = None,
) -> AgentReply:
    """An answer sent back with the violation a critique named: fixed, or kept with a reason
    (``correction_revise.md.j2``)."""
    user = render(
        "correction_revise.md.j2",
        problem=problem,
        answer=answer,
        violation=violation,
        evidence=evidence,
        answer_instruction=answer_instruction,
    )
    return AgentReply(await agent.client.complete(agent.request(user, "revision"), on_retry=on_retry))


@dataclass(frozen=True)
class LabelledText:
    label: str
    content: str


@dataclass(frozen=True)
class LabelledRole:
    label: str
    role: str


async def take_turn(
    agent: DebateAgent,
    *,
    template: str,
    kind: str,
    problem: str,
    clarifications: str,
    discussion: str,
    summary: str,
    round_number: int,
    total_rounds: int,
    memories: str = "",
    tools: ToolAccess | None = None,
    on_retry: RetryHook | None = None,
) -> AgentReply:
    """One turn of a turn format, from its round's template (``turn_*.md.j2``; on a reasoning problem
    :data:`REASONING_TURN_TEMPLATE`); with ``tools``, a tool loop."""
    user = render(
        REASONING_TURN_TEMPLATE if agent.problem_kind == REASONING_KIND else template,
        role_name=agent.role_title,
        problem=problem,
        clarifications=clarifications,
        memories=memories,
        discussion=discussion,
        summary=summary,
        round_number=round_number,
        total_rounds=total_rounds,
        word_limit=agent.word_limit(TURN_WORDS),
        **files_variables(tools),
    )
    return await agent.contribute(agent.request(user, kind), tools, on_retry)


async def cast_vote(
    agent: DebateAgent,
    *,
    problem: str,
    proposals: Sequence[LabelledText],
    on_retry: RetryHook | None = None,
) -> StructuredResult[VoteOutput]:
    user = render("vote.md.j2", role_name=agent.role_title, problem=problem, proposals=proposals)
    shape = SchemaShape(choices={"choice": [p.label for p in proposals]})
    return await agent.client.complete_structured(
        agent.request(user, "vote"), VoteOutput, shape=shape, on_retry=on_retry
    )


async def assess_round(
    judge: Judge,
    *,
    problem: str,
    labels: Sequence[str],
    round_number: int,
    debate: str,
    previous: str,
    may_stop: bool,
    on_retry: RetryHook | None = None,
) -> StructuredResult[AssessmentOutput]:
    user = render(
        "judge_assess.md.j2",
        problem=problem,
        labels=labels,
        round_number=round_number,
        debate=debate,
        previous=previous,
        may_stop=may_stop,
    )
    shape = SchemaShape(choices={"participants.participant": labels}, counts={"participants": len(labels)})
    return await judge.client.complete_structured(
        judge.request(user, "assessment"), AssessmentOutput, shape=shape, on_retry=on_retry
    )


async def give_verdict(
    judge: Judge,
    *,
    problem: str,
    labels: Sequence[str],
    debate: str,
    debate_is_summary: bool,
    vote: str,
    on_retry: RetryHook | None = None,
) -> StructuredResult[VerdictOutput]:
    user = render(
        "judge_verdict.md.j2",
        problem=problem,
        labels=labels,
        debate=debate,
        debate_is_summary=debate_is_summary,
        vote=vote,
    )
    shape = SchemaShape(
        choices={"winner": [*labels, "none"], "keyPoints.participant": labels}, counts={"keyPoints": len(labels)}
    )
    return await judge.client.complete_structured(
        judge.request(user, "verdict"), VerdictOutput, shape=shape, on_retry=on_retry
    )


async def assign_personas(
    judge: Judge,
    *,
    problem: str,
    participants: Sequence[LabelledRole],
    strategy: str,
    on_retry: RetryHook | None = None,
) -> StructuredResult[PersonaAssignmentOutput]:
    user = render("judge_personas.md.j2", problem=problem, participants=participants, strategy=strategy)
    labels = [p.label for p in participants]
    shape = SchemaShape(choices={"assignments.participant": labels}, counts={"assignments": len(labels)})
    return await judge.client.complete_structured(
        judge.request(user, "personas"), PersonaAssignmentOutput, shape=shape, on_retry=on_retry
    )


CONSENSUS_GUARD_PHASE = "consensus_guard"
"""The consensus guard's turn (``debate.consensusGuard``): on a design, the strongest objection nobody
raised; on a question with one right answer, a check of the shared answer's steps (an invented
objection would talk solvers out of a right answer: the correction-biased rule of the adaptive exchange)."""
CONSENSUS_GUARD_WORDS = 200
"""The guard's objection at most: one objection, argued, not a rival design."""


async def challenge_consensus(
    judge: Judge,
    *,
    problem: str,
    round_number: int,
    debate: str,
    reason: str,
    on_retry: RetryHook | None = None,
) -> AgentReply:
    """The guard's objection to a consensus reached too easily (plain text, written by the judge's model)."""
    user = render(
        phase_template(CONSENSUS_GUARD_PHASE, judge.problem_kind),
        problem=problem,
        round_number=round_number,
        debate=debate,
        reason=reason,
        word_limit=CONSENSUS_GUARD_WORDS,
    )
    return AgentReply(await judge.client.complete(judge.request(user, "consensus_guard"), on_retry=on_retry))
