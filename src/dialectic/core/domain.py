"""The debate's data: pure Pydantic models, no I/O.

Serialised with camelCase keys (``model_dump(by_alias=True)``) so an exported debate
has the shape of the seed's ``DebateState``: ``id``, ``problem``, ``status``,
``currentRound``, ``rounds[].contributions[]``, ``finalSolution``, ``clarifications``,
``promptSources``, ``createdAt``, ``updatedAt``.
"""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from dialectic.core.config import SystemConfig
from dialectic.core.json_values import JsonObject

CONFIG_DIR_KEY = "configDir"
"""The key the directory of a debate's configuration is saved under, beside the configuration."""


def utc_now() -> datetime:
    return datetime.now(UTC)


def new_debate_id(now: datetime | None = None) -> str:
    """``deb-YYYYMMDD-HHMMSS-`` followed by four random hex digits."""
    moment = now or utc_now()
    return f"deb-{moment:%Y%m%d-%H%M%S}-{secrets.token_hex(2).upper()}"


class Model(BaseModel):
    """Base for every domain model: camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    def to_json_dict(self) -> JsonObject:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def new_trace_id() -> str:
    """A W3C trace id (32 hex digits, not all zero): the one trace a debate's runs are recorded under."""
    while True:
        candidate = secrets.token_hex(16)
        if int(candidate, 16):
            return candidate


class Usage(Model):
    input_tokens: int = 0
    """Every input token, cached ones included."""
    output_tokens: int = 0
    total_tokens: int = 0
    cached_input_tokens: int | None = None
    """Input tokens read from the provider's prompt cache; ``None`` when the provider does not say."""
    cache_write_tokens: int | None = None
    """Input tokens written to the provider's prompt cache (Anthropic reports them, and charges them above the
    input rate); ``None`` when the provider does not say."""
    estimated: bool | None = None
    """True when some of these counts are estimates: the server reported no usage (some omit it in streams)."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cached_input_tokens=_sum_known(self.cached_input_tokens, other.cached_input_tokens),
            cache_write_tokens=_sum_known(self.cache_write_tokens, other.cache_write_tokens),
            estimated=True if self.estimated or other.estimated else None,
        )


def _sum_known(a: int | None, b: int | None) -> int | None:
    """The sum of two counts a provider may not report: unknown only when neither is known."""
    return None if a is None and b is None else (a or 0) + (b or 0)


ContributionType = Literal[
    "proposal", "critique", "refinement", "response", "opening", "rebuttal", "closing", "ranking"
]
"""``proposal``/``critique``/``refinement`` in critique-refine debates; ``response`` is a turn of the turn
formats (free-form, round-limited, convergence-seeking, simultaneous); ``opening``/``rebuttal``/``closing``
are the turns of a structured debate; ``ranking`` is a council member's ranking of the answers
(``format: council``)."""
TURN_KINDS: tuple[ContributionType, ...] = ("response", "opening", "rebuttal", "closing")
ContributionStatus = Literal["ok", "failed"]
DebateStatus = Literal["pending", "running", "suspended", "paused", "interrupted", "completed", "failed"]
"""``suspended``: waiting for answers; ``paused``: stopped between steps on request; ``interrupted``:
cancelled mid-step (Ctrl-C, a signal, a cancel). All three, and ``failed``, can be resumed."""
Phase = Literal[
    "clarification",
    "personas",
    "summarization",
    "proposal",
    "critique",
    "refinement",
    "response",
    "opening",
    "rebuttal",
    "closing",
    "ranking",
    "evaluation",
    "vote",
    "synthesis",
    "verdict",
]


PlayedBy = Literal["person", "fallback"]
"""Who wrote a human seat's turn (see :class:`HumanTurn`)."""


class ContributionMetadata(Model):
    tokens_used: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_ms: int | None = None
    model: str | None = None
    """The model as configured."""
    served_model: str | None = None
    """The model name the server reported, when it differs from :attr:`model` (e.g. a GGUF file's path)."""
    usage_estimated: bool | None = None
    """True when the server reported no usage and the token counts are estimates."""
    finish_reason: str | None = None
    truncated: bool = False
    """True when the reply was still cut off by the token limit after continuing it."""
    carried_over: bool = False
    """True for a round 2+ proposal copied from the previous round's refinement (no LLM call)."""
    attempts: int = 1
    played_by: PlayedBy | None = None
    """A human seat's contribution: written by the ``person``, or by the ``fallback`` model when the seat's
    deadline passed; ``None`` for a seat a model plays."""
    confidence: float | None = None
    """How sure the model was of the answer it gave (0–1; ``format: adaptive``): the answer tokens'
    probability where the provider returns token probabilities, else a confidence the reply states."""


class ToolCallRecord(Model):
    """One tool call an agent made while writing a contribution (see :mod:`dialectic.agents.tool_loop`)."""

    name: str
    arguments: JsonObject = Field(default_factory=dict)
    result_chars: int = 0
    """Characters of the result the model was shown."""
    latency_ms: int = 0
    error: str | None = None
    """Why the call failed (the model was shown ``error: …``); ``None`` when it succeeded."""

    def describe(self) -> str:
        """One line for people: ``file_read(path="a.md", start_line=3) → 120 chars, 2 ms`` (or ``→ error: …``)."""
        arguments = ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in self.arguments.items())
        outcome = f"error: {self.error}" if self.error is not None else f"{self.result_chars:,} chars"
        return f"{self.name}({arguments}) → {outcome}, {self.latency_ms} ms"


class Contribution(Model):
    agent_id: str
    agent_role: str
    type: ContributionType
    content: str
    target_agent_id: str | None = None
    status: ContributionStatus = "ok"
    error: str | None = None
    metadata: ContributionMetadata = Field(default_factory=ContributionMetadata)
    created_at: datetime = Field(default_factory=utc_now)
    tool_calls: list[ToolCallRecord] | None = None
    """The tools the agent called for this contribution, in order; ``None`` when it had no tools."""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class SummaryMetadata(Model):
    before_chars: int
    after_chars: int
    method: str = "length-based"
    timestamp: datetime = Field(default_factory=utc_now)
    latency_ms: int | None = None
    tokens_used: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    model: str | None = None


class DebateSummary(Model):
    agent_id: str
    agent_role: str
    summary: str
    metadata: SummaryMetadata


class RoundEvaluation(Model):
    """The judge's confidence that the debate may stop after this round."""

    confidence: int = Field(ge=0, le=100)
    reasoning: str = ""
    structured: bool = True


RUBRIC: tuple[str, ...] = (
    "logical_consistency",
    "evidence",
    "engagement",
    "novelty",
    "persuasiveness",
    "relevance",
)
"""The judge's rubric for a participant's turn (seed ``004_…`` §4.1), each scored 0–10."""
DEFAULT_RUBRIC_WEIGHTS: dict[str, float] = {
    "logical_consistency": 0.20,
    "evidence": 0.20,
    "engagement": 0.20,
    "novelty": 0.15,
    "persuasiveness": 0.15,
    "relevance": 0.10,
}


class RubricScores(Model):
    logical_consistency: float = Field(ge=0, le=10)
    evidence: float = Field(ge=0, le=10)
    engagement: float = Field(ge=0, le=10)
    novelty: float = Field(ge=0, le=10)
    persuasiveness: float = Field(ge=0, le=10)
    relevance: float = Field(ge=0, le=10)

    def weighted(self, weights: dict[str, float] | None = None) -> float:
        """The weighted mean on 0–10 (weights need not sum to 1)."""
        chosen = weights or DEFAULT_RUBRIC_WEIGHTS
        total = sum(chosen.get(name, 0.0) for name in RUBRIC)
        if total <= 0:
            return 0.0
        return sum(float(getattr(self, name)) * chosen.get(name, 0.0) for name in RUBRIC) / total


class ParticipantAssessment(Model):
    agent_id: str
    scores: RubricScores
    score: float = Field(ge=0, le=10)
    """The rubric's weighted score."""
    strengths: list[str] = Field(default_factory=list)
    weaknesses: list[str] = Field(default_factory=list)


class AssessmentFlags(Model):
    repetitive: bool = False
    drifting: bool = False
    diminishing_returns: bool = False
    convergence_reached: bool = False


QualityTrend = Literal["improving", "stable", "declining"]


class RoundAssessment(Model):
    """The judge's structured view of one round (and what the detectors measured)."""

    round_number: int
    participants: list[ParticipantAssessment] = Field(default_factory=list)
    quality: float = Field(default=0, ge=0, le=10)
    """The round's quality: the mean of the participants' weighted scores."""
    quality_trend: QualityTrend = "stable"
    flags: AssessmentFlags = Field(default_factory=AssessmentFlags)
    should_continue: bool = True
    reason: str = ""
    similarity: float | None = None
    """Semantic similarity between the participants' latest positions (0–1), when measured."""
    repetition: float | None = None
    """Highest similarity between a participant's consecutive turns (0–1), when measured."""
    measured_by: str | None = None
    """What measured the similarities (an embedding model, or the lexical fallback)."""
    structured: bool = True
    """False when the judge's reply did not parse and only the detectors' figures are real."""


class ConsensusGuard(Model):
    """The hollow-consensus guard's turn after a round (``debate.consensusGuard``): the strongest objection
    nobody raised, shown to the participants in the next round, which then happens instead of the debate
    stopping on that convergence."""

    round_number: int
    """The round whose consensus was challenged."""
    reason: str
    """Why the guard fired (the detectors' and the judge's figures)."""
    objection: str
    """The objection, as the guard's speaker wrote it."""
    by: str
    """The speaker's id (the judge's model speaks for the guard)."""
    similarity: float | None = None
    """How alike the participants' positions were when it fired (0–1)."""
    evidence: float | None = None
    """The judge's mean evidence score of the round (0–10), when the judge assessed it."""
    metadata: ContributionMetadata = Field(default_factory=ContributionMetadata)


class DebateRound(Model):
    round_number: int
    contributions: list[Contribution] = Field(default_factory=list)
    summaries: dict[str, DebateSummary] = Field(default_factory=dict)
    evaluation: RoundEvaluation | None = None
    assessment: RoundAssessment | None = None
    guard: ConsensusGuard | None = None
    """The consensus guard's challenge after this round, when it fired."""
    phase: str | None = None
    """The protocol's name for this round (``opening``, ``rebuttal``, ``closing``…), when it has one."""
    timestamp: datetime = Field(default_factory=utc_now)

    def of_type(self, kind: ContributionType, *, include_failed: bool = False) -> list[Contribution]:
        return [c for c in self.contributions if c.type == kind and (include_failed or c.ok)]

    def find(self, kind: ContributionType, agent_id: str, target_agent_id: str | None = None) -> Contribution | None:
        """The latest contribution of ``kind`` by ``agent_id`` (and on ``target_agent_id``), failed ones included.

        The latest, because a proposal or refinement that failed is asked for again when a failed
        debate is resumed; the retry is appended after the failure.
        """
        for c in reversed(self.contributions):
            if c.type == kind and c.agent_id == agent_id and c.target_agent_id == target_agent_id:
                return c
        return None


class ClarificationItem(Model):
    id: str
    question: str
    answer: str | None = None
    iteration: int = 1

    @property
    def answered(self) -> bool:
        return self.answer is not None


class AgentClarifications(Model):
    agent_id: str
    agent_name: str
    role: str
    items: list[ClarificationItem] = Field(default_factory=list)


class TurnMessage(Model):
    """One message of the prompt a human seat's turn shows the person (``system`` or ``user``)."""

    role: str
    content: str


class HumanTurn(Model):
    """A turn of a seat played by a person (``provider: human``), asked while no one could write it.

    The debate suspends until the text comes (``dialectic resume ID --turn-file FILE``, the web page's
    form, the ``submit_turn`` tool); ``messages`` are the prompt the participant would have been sent,
    which is what the person is shown. Once answered the turn stays, with what was written.
    """

    key: str
    """Stable across runs: the seat, what the turn makes, its round and its target
    (``agent-alice:critique:1:agent-kiss``)."""
    agent_id: str
    agent_name: str
    activity: str
    """In words, as the live display says it (``critiquing Simplicity Advocate``)."""
    kind: str | None = None
    round_number: int | None = None
    target_agent_id: str | None = None
    messages: list[TurnMessage] = Field(default_factory=list)
    asked_at: datetime = Field(default_factory=utc_now)
    deadline_ms: int | None = None
    """The seat's deadline: past ``asked_at`` plus this, the fallback model plays the turn."""
    text: str | None = None
    """What was written; ``None`` while the turn waits."""
    played_by: PlayedBy | None = None
    answered_at: datetime | None = None

    @property
    def answered(self) -> bool:
        return self.text is not None

    @property
    def prompt(self) -> str:
        """The turn's instructions as the person reads them: the user messages (the system message is the
        seat's role, shown apart)."""
        return "\n\n".join(m.content for m in self.messages if m.role == "user")

    @property
    def role_prompt(self) -> str:
        return "\n\n".join(m.content for m in self.messages if m.role == "system")

    def deadline_at(self) -> datetime | None:
        """When the fallback model may play it, for a seat with a deadline."""
        if self.deadline_ms is None:
            return None
        return self.asked_at + timedelta(milliseconds=self.deadline_ms)


class Solution(Model):
    description: str
    implementation: str | None = None
    tradeoffs: list[str] = Field(default_factory=list)
    recommendations: list[str] = Field(default_factory=list)
    unfulfilled_major_requirements: list[str] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)
    confidence: int = Field(default=50, ge=0, le=100)
    confidence_withheld: str | None = None
    """Why ``confidence`` is not shown: the judge stated it, and its model's stated confidences have not earned
    trust on the bench (:mod:`dialectic.core.stated_confidence`). ``None``: it may be shown (a vote's agreement
    is a count, not a claim; a calibrated model's statement)."""
    synthesized_by: str = "judge"
    judge_failure: str | None = None
    """Why the judge did not write it: its error, when a participant wrote the synthesis in its place
    (``judge.fallback``; ``synthesized_by`` names the participant)."""
    structured: bool = True
    """False when the judge's reply did not parse and the raw text was used instead."""
    metadata: ContributionMetadata = Field(default_factory=ContributionMetadata)
    tool_calls: list[ToolCallRecord] | None = None
    """The tools the judge called while writing it (``debate.context.judgeTools``); ``None``: it had none."""

    def confidence_text(self) -> str:
        """``"80/100"``, or why there is no number to show."""
        return (
            f"{self.confidence}/100" if self.confidence_withheld is None else f"not shown ({self.confidence_withheld})"
        )


class PromptSource(Model):
    """Where a prompt came from: the built-in template or a file the user configured."""

    kind: Literal["built-in", "file"] = "built-in"
    path: str | None = None

    def describe(self) -> str:
        return self.path if self.kind == "file" and self.path else "built-in default"


class AgentPromptSources(Model):
    agent_id: str
    role: str
    system_prompt: PromptSource = Field(default_factory=PromptSource)
    summary_prompt: PromptSource = Field(default_factory=PromptSource)
    clarification_prompt: PromptSource = Field(default_factory=PromptSource)


class PromptSources(Model):
    agents: list[AgentPromptSources] = Field(default_factory=list)
    judge: AgentPromptSources | None = None


class Participant(Model):
    """A snapshot of an agent (or the judge) as it took part, for reports and listings."""

    id: str
    name: str
    role: str
    model: str
    provider: str
    temperature: float | None = None
    position: str | None = None
    """The stance the agent argues (``for``, ``against``, or words), when it has one."""
    persona: str | None = None
    """A short character description that colours how the agent argues."""


VoteRule = Literal["majority", "supermajority", "weighted", "confidence"]


class Vote(Model):
    voter_id: str
    choice_id: str
    """The agent whose final proposal the voter chose."""
    label: str = ""
    """The anonymous label the voter saw for it (``Proposal B``)."""
    confidence: int | None = Field(default=None, ge=0, le=100)
    reason: str = ""


class VoteOutcome(Model):
    """The result of a vote on the final proposals."""

    rule: VoteRule
    threshold: float | None = None
    """For ``supermajority``: the share of the (weighted) votes needed."""
    votes: list[Vote] = Field(default_factory=list)
    tally: dict[str, float] = Field(default_factory=dict)
    """Agent id → (weighted) votes received."""
    winner_id: str | None = None
    consensus: bool = False
    """Whether the winner reached the rule's bar (a plurality that falls short is not consensus)."""
    tie: bool = False


class AnswerTally(Model):
    """How the adaptive answer protocol decided (``format: adaptive``): every answer given, and the winner."""

    answer: str | None = None
    """The answer with the most summed confidence; ``None`` when no reply stated one (and then left out of
    the stored JSON, which drops ``None``: a default, so the stored change reads back)."""
    counts: dict[str, int] = Field(default_factory=dict)
    """Answer → how many replies gave it, in the order first given."""
    weights: dict[str, float] = Field(default_factory=dict)
    """Answer → the summed confidence it was chosen by."""
    agreeing: int = 0
    answered: int = 0
    tied: bool = False
    exchanged: bool = False
    """Whether the answers were split, so that one exchange over them followed the first round."""

    @property
    def agreement(self) -> str:
        """``"5 of 7 agree"``."""
        return f"{self.agreeing} of {self.answered} agree"


class CouncilRanking(Model):
    """One member's ranking of the council's answers (``format: council``), read from its saved reply."""

    ranker_id: str
    order: list[str] = Field(default_factory=list)
    """The members whose answers it ranked, best first (the labels its reply named; none when it named none)."""
    shown: dict[str, str] = Field(default_factory=dict)
    """Label → member, as this ranker saw the answers (``A`` → ``agent-kiss``), in its order."""


class CouncilStanding(Model):
    agent_id: str
    points: int
    """Borda points: a ranking of ``n`` answers gives ``n - 1`` to its first, 0 to its last."""


class CouncilOutcome(Model):
    """How the council decided (``format: council``): every ranking, the Borda count, and what the chair got."""

    rankings: list[CouncilRanking] = Field(default_factory=list)
    standings: list[CouncilStanding] = Field(default_factory=list)
    """Every member that answered, best first (a tie keeps the configured order)."""
    chosen: list[str] = Field(default_factory=list)
    """The members whose answers the chair was given, best first: the top of the standings."""


class CorrectionCheck(Model):
    """One critique of the correction-biased critique (``format: correction``), as its rules read it."""

    critic_id: str
    target_id: str
    corrects: bool
    """It named a violated requirement or a wrong step and quoted words the answer holds: only then is the
    answer sent back to its author."""
    violation: str | None = None
    evidence: str | None = None

    @property
    def verdict(self) -> Literal["corrects", "holds"]:
        return "corrects" if self.corrects else "holds"


class CorrectionOutcome(Model):
    """How the correction-biased critique decided (``format: correction``): the checks, the points, the winner."""

    checks: list[CorrectionCheck] = Field(default_factory=list)
    revised: list[str] = Field(default_factory=list)
    """The members asked to revise (their answer was corrected), in configured order."""
    points: dict[str, float] = Field(default_factory=dict)
    """Answer → its points over the whole trajectory, in the order first given. On a question with one right
    answer the keys are the answers stated; on a design, whose text it is (a name, or a name and
    ``(revised)``)."""
    winner: str | None = None
    """The key with the most points; ``None`` when no answer was stated (the judge then synthesizes)."""
    winner_id: str | None = None
    """The member whose trajectory reached the winner (its final text is the one built on, on a design)."""


class KeyPoints(Model):
    agent_id: str
    points: list[str] = Field(default_factory=list)


class Verdict(Model):
    """The judge's final verdict on the debate, beside the synthesized solution."""

    summary: str
    key_points: list[KeyPoints] = Field(default_factory=list)
    agreements: list[str] = Field(default_factory=list)
    disagreements: list[str] = Field(default_factory=list)
    winner_id: str | None = None
    winner_reasoning: str = ""
    quality: int = Field(default=0, ge=0, le=100)
    insights: list[str] = Field(default_factory=list)
    judge_shares_model_with: list[str] = Field(default_factory=list)
    """Agents running on the judge's own model: self-preference is a known bias, so it is said."""
    structured: bool = True


class EarlyStop(Model):
    """The debate ended before its last round: after which round, and why."""

    round_number: int
    reason: str


class DroppedParticipant(Model):
    """An agent taken out of the rest of the debate because its calls kept failing."""

    agent_id: str
    round_number: int
    reason: str
    at: datetime = Field(default_factory=utc_now)


class DiscardedWork(Model):
    """Work started ahead for a round that then did not happen (early stop): not saved, but paid for."""

    round_number: int
    calls: int = 0
    """Calls that completed and whose replies were thrown away."""
    cancelled_calls: int = 0
    """Calls cancelled while in flight (a provider may still bill part of them)."""
    input_tokens: int = 0
    output_tokens: int = 0


WindowSource = Literal["config", "server", "refusal", "remembered"]
"""Where a participant's context window came from: its ``contextWindow``, what its server said,
a refusal of an over-long prompt, or a window learned by an earlier refusal and kept in the store."""
WindowStrategy = Literal["summarize", "slide", "fail"]


class WindowUse(Model):
    """How much of its context window one participant's prompts took, and what was done about it.

    Kept per participant (agents and the judge) by :mod:`dialectic.engine.windows`; every view
    (``--verbose``, ``show``, the report, ``export``, the web page) reads it from the state.
    """

    agent_id: str
    window: int | None = None
    """Tokens one request may hold; ``None`` while unknown."""
    source: WindowSource | None = None
    largest_prompt: int = 0
    """Tokens of the largest prompt sent, as counted before sending."""
    counted_by: Literal["tokenizer", "estimate"] = "estimate"
    """How that prompt was counted: the model's tokenizer, or an estimate from its characters."""
    prompts: int = 0
    """Prompts counted (each call's first request)."""
    warned: bool = False
    """A prompt passed 80% of the window (the warning is given once)."""
    fired: dict[str, int] = Field(default_factory=dict)
    """``debate.contextStrategy`` applied at 90%, by what was done (``summarize``, ``slide``, ``fail``),
    then, when that was not enough, the quotes of other participants cut (``cut``) and the reply's
    ``maxTokens`` lowered (``reply``): how many prompts each shrank (or the one it stopped on)."""
    refusals: int = 0
    """Prompts the server refused as too long for the window."""
    over_sent: int = 0
    """Prompts sent although still over 90%: nothing was left to shrink."""


CallStatus = Literal["ok", "failed", "cancelled"]


class LedgerEntry(Model):
    """One call the debate made, and what it cost: a line of the debate's usage ledger.

    A call is one piece of work asked of a model (a proposal, a summary, a vote, the verdict…);
    it may take several provider requests (retries, a continuation of a cut-off reply, a repair
    of malformed structured output), all counted here.
    """

    kind: str
    """What the call was for: ``proposal``, ``critique``, ``summary``, ``clarification``, ``assessment``…"""
    activity: str = ""
    """In words, as the live display says it (``critiquing Simplicity Advocate``)."""
    agent_id: str
    """Who made it: an agent, or the judge."""
    round_number: int | None = None
    target_agent_id: str | None = None
    provider: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int | None = None
    """Input tokens served from the provider's prompt cache, where the provider reports them."""
    requests: int = 0
    """Provider requests that answered."""
    cached: int = 0
    """Requests answered from the call cache (``debate.cache: read``, ``dialectic replay``): nothing was sent,
    so they add no tokens and no cost (the debate that first asked paid for them)."""
    attempts: int = 0
    """Provider requests made, failed ones included."""
    latency_ms: int = 0
    """From the call's start to its end, waits between retries included."""
    cost_usd: float | None = None
    """``None``: the model has no price (see ``pricing``), so the cost is unknown — never taken as 0."""
    status: CallStatus = "ok"
    error: str | None = None
    discarded: bool = False
    """The reply was paid for but not kept: work ahead of an early stop, or cut short when the debate stopped."""
    at: datetime = Field(default_factory=utc_now)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class Receipt(Model):
    """A finished debate's receipt: a SHA-256 hash chain over its stored changes (see :mod:`dialectic.core.receipts`).

    Saved with the debate when it completes; ``dialectic verify`` recomputes the chain from the store."""

    debate_id: str
    algorithm: str
    count: int
    """How many changes the chain covers: the debate's first ``count`` changes (receipts not counted)."""
    digest: str
    """The last link of the chain (hex): what the receipt vouches for."""
    links: list[str] = Field(default_factory=list)
    """Every link of the chain (hex), in order: they tell which change stopped matching."""
    created_at: datetime = Field(default_factory=utc_now)
    signature: str | None = None
    """Ed25519 signature over the digest's bytes (hex), when the operator gave a signing key."""
    public_key: str | None = None
    """The raw Ed25519 public key that goes with ``signature`` (hex)."""


class RecalledMemory(Model):
    """A past debate whose outcome was given to round 1 (``debate.memory: on``; see ``docs/memory.md``)."""

    debate_id: str
    problem: str
    """The past debate's problem, its first line."""
    created_at: datetime
    """When the past debate was created (the memory's date)."""
    similarity: float
    """How alike its problem is to this debate's (0–1), as ``measured_by`` measured it."""
    measured_by: str = ""
    verdict: str | None = None
    """The judge's verdict (the winner and its summary), when the past debate had one."""
    lessons: str = ""
    """What it concluded: its solution's summary, else the judge's key points."""


RatedAs = Literal["agent", "model", "unrated"]
"""Whose rating a pool agent was scored by: its own id's, its model's (the agent had no rated games), or none."""


class TeamMember(Model):
    """One agent of a pool as the team selection scored it (``debate.team``; see ``docs/team.md``)."""

    agent_id: str
    name: str
    role: str
    model: str
    """``provider/model``."""
    score: float
    """What the pick went by: the conservative rating, the calibration's bonus and the diversity penalty."""
    rating: float
    deviation: float
    """The rating's uncertainty: wide for few rated games."""
    games: int = 0
    """Rated games (pairwise matches) behind the rating."""
    rated_as: RatedAs = "unrated"
    brier: float | None = None
    """Brier score of the confidences it stated (0 best, 0.25 a coin's); ``None``: none recorded."""
    confidences: int = 0
    """Stated confidences behind the Brier score."""
    reasons: list[str] = Field(default_factory=list)
    """Why it scored as it did, in words."""


class TeamChoice(Model):
    """The team picked from a pool before the debate was created (``debate.team``)."""

    pool: str
    """The pool file, as the configuration named it."""
    size: int
    members: list[TeamMember]
    """The agents picked, in the order picked (they take part in that order)."""
    passed_over: list[TeamMember] = Field(default_factory=list)
    """The pool's other agents, best score first, scored as they stood when the last pick was made."""
    debates: int = 0
    """Completed debates in the store the ratings and calibration were computed from."""


class DebateState(Model):
    id: str
    problem: str
    context: str | None = None
    status: DebateStatus = "pending"
    current_round: int = 0
    rounds: list[DebateRound] = Field(default_factory=list)
    final_solution: Solution | None = None
    clarifications: list[AgentClarifications] = Field(default_factory=list)
    clarification_iterations: int = 0
    judge_summary: DebateSummary | None = None
    personas_assigned: bool = False
    """True once the judge assigned positions and personas (``debate.personas: auto``): never asked twice."""
    stopped_early: EarlyStop | None = None
    vote: VoteOutcome | None = None
    answer_tally: AnswerTally | None = None
    """The adaptive protocol's tally (``format: adaptive``); ``None`` in every other format."""
    council: CouncilOutcome | None = None
    """The council's rankings and Borda count (``format: council``); ``None`` in every other format."""
    correction: CorrectionOutcome | None = None
    """The correction-biased critique's checks and decision (``format: correction``); ``None`` otherwise."""
    verdict: Verdict | None = None
    dropped: list[DroppedParticipant] = Field(default_factory=list)
    """Agents out of the debate, in the order they were dropped (a resumed failed debate clears them)."""
    discarded: list[DiscardedWork] = Field(default_factory=list)
    ledger: list[LedgerEntry] = Field(default_factory=list)
    """Every call the debate made, in the order they were saved (see :mod:`dialectic.core.ledger`)."""
    windows: dict[str, WindowUse] = Field(default_factory=dict)
    """Participant id → how much of its context window its prompts took (see :class:`WindowUse`)."""
    human_turns: list[HumanTurn] = Field(default_factory=list)
    """Turns of human seats asked while no one could write them, in the order asked (see :class:`HumanTurn`)."""
    trace_id: str | None = None
    """The trace every run of this debate is recorded under when tracing is on (``None`` for older debates)."""
    replay_of: str | None = None
    """The debate this one replays (``dialectic replay``); ``None`` for a debate of its own."""
    seed: str | None = None
    """What seeds the debate's shuffled orders (neutral labels, the vote's ballot): see :meth:`shuffle_seed`."""
    prompt_sources: PromptSources = Field(default_factory=PromptSources)
    agents: list[Participant] = Field(default_factory=list)
    judge: Participant | None = None
    config: JsonObject = Field(default_factory=dict)
    """The resolved configuration (camelCase, the seed's shape) the debate runs with; resume rebuilds from
    it. Read it through :meth:`saved_config` and :meth:`config_dir`, typed."""
    error: str | None = None
    failure_reason: str | None = None
    """Why a failed debate stopped, when it is a reason a user acts on (``budget``)."""
    next_node: str | None = None
    """The node the runner will execute next; ``None`` once the debate has ended."""
    receipt: Receipt | None = None
    """The receipt saved when the debate completed (``None`` before, and for debates older than receipts)."""
    memories: list[RecalledMemory] | None = None
    """The past debates given to round 1 (``debate.memory: on``), in order of similarity; ``None``: memory off."""
    memory_forgotten_at: datetime | None = None
    """When ``dialectic memory forget`` took this debate out of memory (it is never recalled again)."""
    team: TeamChoice | None = None
    """The team picked from a pool (``debate.team``) and why; ``None``: the configured agents took part."""
    created_at: datetime = Field(default_factory=utc_now)
    updated_at: datetime = Field(default_factory=utc_now)

    def saved_config(self) -> SystemConfig | None:
        """The configuration the debate runs with, typed (``None`` when none was saved)."""
        return SystemConfig.model_validate(self.config) if self.config else None

    def config_or_defaults(self) -> SystemConfig:
        """:meth:`saved_config`, or the built-in defaults when none was saved (as a run reads it)."""
        return SystemConfig.model_validate(self.config)

    def shuffle_seed(self) -> str:
        """The seed of the debate's shuffled orders: its id, or a replayed debate's seed, so that a replay
        shuffles as the original did and sends the same requests."""
        return self.seed or self.id

    def config_dir(self) -> Path:
        """The directory the saved configuration's prompt and context paths resolve in."""
        return Path(str(self.config.get(CONFIG_DIR_KEY, ".")))

    def round(self, number: int) -> DebateRound:
        found = self.find_round(number)
        if found is None:
            raise KeyError(f"round {number} has not started")
        return found

    def find_round(self, number: int) -> DebateRound | None:
        for r in self.rounds:
            if r.round_number == number:
                return r
        return None

    def dropped_ids(self) -> set[str]:
        return {d.agent_id for d in self.dropped}

    def active_agents(self) -> list[Participant]:
        """The agents still taking part, in configured order."""
        out = self.dropped_ids()
        return [a for a in self.agents if a.id not in out]

    @property
    def last_round(self) -> DebateRound | None:
        return self.rounds[-1] if self.rounds else None

    def all_contributions(self) -> list[Contribution]:
        return [c for r in self.rounds for c in r.contributions]

    def clarification_items(self) -> list[ClarificationItem]:
        return [item for group in self.clarifications for item in group.items]

    def pending_questions(self) -> list[ClarificationItem]:
        return [item for item in self.clarification_items() if not item.answered]

    def pending_turns(self) -> list[HumanTurn]:
        """The human seats' turns waiting for their text, in the order asked."""
        return [turn for turn in self.human_turns if not turn.answered]

    def find_turn(self, key: str) -> HumanTurn | None:
        for turn in self.human_turns:
            if turn.key == key:
                return turn
        return None
