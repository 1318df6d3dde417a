"""Assessing a round and deciding whether the debate goes on.

After each round (when the protocol or the termination condition needs it) the round is
assessed by:

* the **detectors** (no model call): how alike the participants' latest positions are
  (convergence), how much each repeated its previous turn (repetition), and whether the
  assessment history shows diminishing returns;
* the **judge** (one structured call), when its view is needed: rubric scores per
  participant, flags, the quality trend and whether to continue. The judge sees the
  participants under neutral labels in a shuffled order (``debate.neutralLabels``).

:func:`decide` then applies ``terminationCondition`` to the assessment.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from dialectic.agents.deliberation import assess_round
from dialectic.agents.labels import neutral_labels, resolve
from dialectic.agents.outputs import AssessmentOutput
from dialectic.context.history import rounds_text
from dialectic.core.changes import AssessmentRecorded
from dialectic.core.config import DebateSettings, TerminationCondition
from dialectic.core.domain import (
    TURN_KINDS,
    AssessmentFlags,
    DebateState,
    ParticipantAssessment,
    RoundAssessment,
    RubricScores,
)
from dialectic.core.errors import ProviderError
from dialectic.engine.consensus_guard import challenge, going_on, guard_reason
from dialectic.engine.fitting import gated
from dialectic.engine.protocols import Protocol, protocol
from dialectic.engine.run_state import RunState
from dialectic.similarity.choice import default_similarity
from dialectic.similarity.detectors import (
    LexicalSimilarity,
    SimilarityModel,
    convergence,
    diminishing_returns,
    repetition,
)

REPETITIVE_SIMILARITY = 0.9
"""A participant whose turn is this similar to its previous one is repeating itself."""


@dataclass(frozen=True)
class Decision:
    assessment: RoundAssessment | None
    stop: bool
    reason: str
    challenged: bool = False
    """True when the consensus guard spoke just now (see :mod:`dialectic.engine.consensus_guard`)."""


def judge_needed(settings: DebateSettings, chosen: Protocol) -> bool:
    """Whether rounds get the judge's structured assessment (one call each)."""
    if settings.assessment != "auto":
        return settings.assessment == "on"
    return chosen.judge_driven or settings.termination().type in ("quality", "judge", "any")


def assessed(settings: DebateSettings) -> bool:
    """Whether rounds are assessed at all (by the judge, the detectors, or both)."""
    chosen = protocol(settings.format)
    return (
        judge_needed(settings, chosen)
        or settings.termination().type != "fixed"
        or chosen.name == "convergence-seeking"
        or settings.consensus_guard == "on"
    )


def latest_positions(state: DebateState, number: int) -> dict[str, str]:
    """Each agent's position at the end of round ``number``: its refinement, else its turn, else its proposal."""
    rnd = state.find_round(number)
    if rnd is None:
        return {}
    positions: dict[str, str] = {}
    for kind in ("proposal", *TURN_KINDS, "refinement"):
        for c in rnd.contributions:
            if c.type == kind and c.ok:
                positions[c.agent_id] = c.content
    return positions


def decide(
    condition: TerminationCondition, assessment: RoundAssessment, *, format_name: str, may_stop: bool
) -> tuple[bool, str]:
    """Whether to stop after this round, and why (the reason also explains going on)."""
    if not may_stop:
        return False, "this round cannot end the debate"
    kind, threshold = condition.type, condition.threshold
    reasons: list[str] = []
    if kind in ("convergence", "any") and assessment.similarity is not None:
        if assessment.similarity * 100 >= threshold:
            reasons.append(f"the positions converged (similarity {assessment.similarity:.0%} ≥ {threshold}%)")
    if kind in ("quality", "any") and assessment.structured and assessment.quality * 10 >= threshold:
        reasons.append(f"the judge rates the round {assessment.quality:.1f}/10 (threshold {threshold / 10:g})")
    if kind in ("judge", "any") and assessment.structured and not assessment.should_continue:
        reasons.append(f"the judge says to stop: {assessment.reason or 'no reason given'}")
    if (kind == "any" or format_name == "convergence-seeking") and assessment.flags.diminishing_returns:
        reasons.append("diminishing returns")
    if reasons:
        return True, "; ".join(reasons)
    return False, "the debate goes on" if kind != "fixed" else "fixed number of rounds"


def _participants(
    output: AssessmentOutput, labels: dict[str, str], weights: dict[str, float] | None
) -> list[ParticipantAssessment]:
    scored: list[ParticipantAssessment] = []
    for item in output.participants:
        agent_id = resolve(item.participant, labels)
        if agent_id is None or any(p.agent_id == agent_id for p in scored):
            continue
        scores = RubricScores.model_validate(item.scores.model_dump())
        scored.append(
            ParticipantAssessment(
                agent_id=agent_id,
                scores=scores,
                score=round(scores.weighted(weights), 2),
                strengths=item.strengths,
                weaknesses=item.weaknesses,
            )
        )
    return scored


def _previous_text(previous: RoundAssessment | None) -> str:
    if previous is None:
        return ""
    flags = [name for name, on in previous.flags.model_dump().items() if on]
    return (
        f"Quality {previous.quality:.1f}/10, trend {previous.quality_trend}"
        + (f", flags: {', '.join(flags)}" if flags else "")
        + (f". {previous.reason}" if previous.reason else "")
    )


async def assess(
    ctx: RunState,
    number: int,
    *,
    may_stop: bool,
    similarity: SimilarityModel | None = None,
) -> Decision:
    """Assess round ``number`` (or read its saved assessment), save it, and decide whether to stop."""
    settings = ctx.roster.settings
    chosen = protocol(settings.format)
    condition = settings.termination()
    rnd = ctx.state.round(number)
    if rnd.assessment is not None:
        stop, reason = decide(condition, rnd.assessment, format_name=chosen.name, may_stop=may_stop)
        return await _guarded(ctx, Decision(rnd.assessment, stop, reason))
    model = similarity or default_similarity()
    current = latest_positions(ctx.state, number)
    previous_positions = latest_positions(ctx.state, number - 1)
    converged, repeated = await _measure(model, current, previous_positions)
    history = [r.assessment for r in ctx.state.rounds if r.assessment is not None and r.round_number < number]
    judged = (
        await _judge(ctx, number, may_stop, history[-1] if history else None)
        if judge_needed(settings, chosen)
        else None
    )
    participants = judged[0] if judged else []
    output = judged[1] if judged else None
    flags = AssessmentFlags.model_validate(output.flags.model_dump()) if output else AssessmentFlags()
    if repeated is not None and repeated >= REPETITIVE_SIMILARITY:
        flags.repetitive = True
    if converged is not None and condition.type in ("convergence", "any") and converged * 100 >= condition.threshold:
        flags.convergence_reached = True
    quality = sum(p.score for p in participants) / len(participants) if participants else 0.0
    assessment = RoundAssessment(
        round_number=number,
        participants=participants,
        quality=round(quality, 2),
        quality_trend=output.quality_trend if output else "stable",
        flags=flags,
        should_continue=output.should_continue if output else True,
        reason=output.reason if output else "",
        similarity=round(converged, 4) if converged is not None else None,
        repetition=round(repeated, 4) if repeated is not None else None,
        measured_by=model.name,
        structured=output is not None,
    )
    words = [_words(ctx.state, n) for n in range(1, number + 1)]
    if diminishing_returns([*history, assessment], words):
        assessment.flags.diminishing_returns = True
    ctx.record(AssessmentRecorded(assessment=assessment))
    stop, reason = decide(condition, assessment, format_name=chosen.name, may_stop=may_stop)
    return await _guarded(ctx, Decision(assessment, stop, reason))


async def _guarded(ctx: RunState, decision: Decision) -> Decision:
    """The decision once the consensus guard had its say: a challenge (saved, or made now) means going on."""
    assessment = decision.assessment
    if assessment is None:
        return decision
    saved = ctx.state.round(assessment.round_number).guard
    if saved is not None:
        return Decision(assessment, False, going_on(saved))
    reason = guard_reason(ctx.roster.settings, ctx.state, assessment, stop=decision.stop)
    if reason is None:
        return decision
    guard = await challenge(ctx, assessment, reason)
    if guard is None:
        return decision
    return Decision(assessment, False, going_on(guard), challenged=True)


async def _measure(
    model: SimilarityModel, current: dict[str, str], previous: dict[str, str]
) -> tuple[float | None, float | None]:
    """Convergence and repetition; an embedding model encodes in a worker thread (seconds of CPU that
    would otherwise hold up every other debate on the event loop, e.g. in ``dialectic serve``)."""

    def measure() -> tuple[float | None, float | None]:
        return convergence(list(current.values()), model), repetition(previous, current, model)

    if isinstance(model, LexicalSimilarity):
        return measure()
    return await asyncio.to_thread(measure)


def _words(state: DebateState, number: int) -> int:
    """Mean words per turn in round ``number`` (shrinking replies are a sign of diminishing returns)."""
    texts = list(latest_positions(state, number).values())
    return sum(len(t.split()) for t in texts) // len(texts) if texts else 0


async def _judge(
    ctx: RunState, number: int, may_stop: bool, previous: RoundAssessment | None
) -> tuple[list[ParticipantAssessment], AssessmentOutput] | None:
    """The judge's view of the round under neutral labels, or None (with a warning) when it failed."""
    settings = ctx.roster.settings
    judge = ctx.roster.judge
    ids = [a.id for a in ctx.state.active_agents()]
    labels = neutral_labels(
        ids, word="Participant", seed=f"{ctx.state.shuffle_seed()}/assess/{number}", shuffle=settings.neutral_labels
    )
    ordered = dict(sorted(labels.items(), key=lambda item: item[1]))
    text = rounds_text([ctx.state.round(number)], ordered, with_roles=False)
    try:
        result = await ctx.announce(
            judge,
            "assessing the round",
            gated(
                ctx,
                judge,
                f"assessing round {number}",
                lambda: assess_round(
                    judge,
                    problem=ctx.problem,
                    labels=sorted(labels.values()),
                    round_number=number,
                    debate=text,
                    previous=_previous_text(previous),
                    may_stop=may_stop,
                    on_retry=ctx.retry_hook(judge, "assessing the round"),
                ),
            ),
            round_number=number,
            kind="assessment",
        )
    except ProviderError as exc:
        ctx.warn(f"the judge could not assess round {number} ({exc}); only the detectors' figures are kept")
        return None
    if result.value is None:
        kept = "only the detectors' figures are kept"
        ctx.warn(f"the judge's assessment of round {number} did not parse ({result.error}); {kept}")
        return None
    return _participants(result.value, labels, settings.rubric_weights), result.value
