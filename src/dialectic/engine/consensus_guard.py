"""The hollow-consensus guard (``debate.consensusGuard``; aragora's "Trickster").

Participants who agree at once, with near-identical text or little evidence, have not tested
their agreement. After a round is assessed, the guard reads the figures the detectors and the
judge already produced (no extra measurement):

* the positions **converged**: the convergence detector's similarity reached
  :data:`CONVERGED_SIMILARITY`, or the round was flagged ``convergenceReached`` (by the judge, or
  by the detector against a ``convergence`` termination threshold);
* ``auto`` (the default) also wants the consensus **fast** (within the first :data:`FAST_ROUNDS`
  rounds) and **shallow** — the judge's mean evidence score under :data:`LOW_EVIDENCE`, the
  positions near-identical (:data:`ECHO_SIMILARITY`), or a participant repeating its previous turn
  (the ``repetitive`` flag) — and that consensus about to **end the debate**; it challenges a debate
  once. ``on`` challenges every round whose positions converged; ``off`` never.

When it fires, the judge's model writes one guard turn (``consensus_guard.md.j2``): the strongest
objection nobody raised. It is saved as its own change (:class:`~dialectic.core.changes.ConsensusChallenged`)
before the next round's work is saved, shown to the participants in that round (the round's history
carries it, see :func:`dialectic.context.history.rounds_text`), and the debate goes on instead of stopping.
A saved challenge is never asked again: a resumed debate reads it. The guard never speaks after the last
round (there would be no round to answer it in).
"""

from __future__ import annotations

from dialectic.agents.deliberation import challenge_consensus
from dialectic.context.history import participant_names, rounds_text
from dialectic.core import events as ev
from dialectic.core.changes import ConsensusChallenged
from dialectic.core.config import DebateSettings
from dialectic.core.domain import ConsensusGuard, DebateState, RoundAssessment
from dialectic.core.errors import ProviderError
from dialectic.engine.fitting import gated
from dialectic.engine.run_state import RunState, metadata_from

FAST_ROUNDS = 2
"""A consensus reached by this round is fast (``auto``): the participants barely argued before agreeing."""

CONVERGED_SIMILARITY = 0.8
"""The participants' positions this alike (the convergence detector's mean pairwise similarity) have converged.

The scripted model's default replies, which share most of their words, measure 0.90 with the
all-MiniLM-L6-v2 embeddings; independent designs of the same problem by different roles stay below."""

ECHO_SIMILARITY = 0.95
"""Positions this alike are one text said again: the participants merely repeat each other (``auto``).

Above what separately written positions reach: the scripted model's look-alike replies measure 0.90;
the turn formats' near-copies 0.98."""

LOW_EVIDENCE = 5.0
"""A judge's mean ``evidence`` score (0–10) under this is little evidence for a consensus (``auto``)."""


def mean_evidence(assessment: RoundAssessment) -> float | None:
    """The judge's mean evidence score of the round, or ``None`` when the judge did not score it."""
    if not assessment.structured or not assessment.participants:
        return None
    return sum(p.scores.evidence for p in assessment.participants) / len(assessment.participants)


def converged(assessment: RoundAssessment) -> bool:
    """Whether the round's positions converged (see the module's docstring)."""
    similar = assessment.similarity is not None and assessment.similarity >= CONVERGED_SIMILARITY
    return similar or assessment.flags.convergence_reached


def shallow_signs(assessment: RoundAssessment) -> list[str]:
    """What makes a consensus look hollow: little evidence, near-identical positions, repetition."""
    signs: list[str] = []
    evidence = mean_evidence(assessment)
    if evidence is not None and evidence < LOW_EVIDENCE:
        signs.append(f"little evidence (the judge's evidence score {evidence:.1f}/10)")
    if assessment.similarity is not None and assessment.similarity >= ECHO_SIMILARITY:
        signs.append(f"the participants merely repeat each other (similarity {assessment.similarity:.0%})")
    if assessment.flags.repetitive:
        repeated = f" ({assessment.repetition:.0%})" if assessment.repetition is not None else ""
        signs.append(f"a participant repeats its previous turn{repeated}")
    return signs


def guard_reason(
    settings: DebateSettings, state: DebateState, assessment: RoundAssessment, *, stop: bool
) -> str | None:
    """Why the guard challenges round ``assessment.round_number``'s consensus, or ``None`` when it does not.

    ``stop``: whether the round's assessment would end the debate (``auto`` challenges only such a consensus).
    """
    number = assessment.round_number
    mode = settings.consensus_guard
    if mode == "off" or number >= settings.rounds or not converged(assessment):
        return None
    rnd = state.find_round(number)
    if rnd is not None and rnd.guard is not None:
        return None
    similarity = f"similarity {assessment.similarity:.0%}" if assessment.similarity is not None else "judge's flag"
    what = f"the positions converged in round {number} ({similarity})"
    if mode == "on":
        return what
    if not stop or number > FAST_ROUNDS or any(r.guard is not None for r in state.rounds):
        return None
    signs = shallow_signs(assessment)
    if not signs:
        return None
    return f"{what}, with " + " and ".join(signs)


async def challenge(ctx: RunState, assessment: RoundAssessment, reason: str) -> ConsensusGuard | None:
    """The guard's turn after round ``assessment.round_number``, saved and announced; ``None`` (with a
    warning) when the judge's model could not write it: the round's decision then stands."""
    judge = ctx.roster.judge
    number = assessment.round_number
    names = participant_names(ctx.state)
    debate = rounds_text([ctx.state.round(number)], names)
    activity = "challenging the consensus"
    try:
        reply = await ctx.announce(
            judge,
            activity,
            gated(
                ctx,
                judge,
                f"challenging round {number}'s consensus",
                lambda: challenge_consensus(
                    judge,
                    problem=ctx.problem_for(judge),
                    round_number=number,
                    debate=debate,
                    reason=reason,
                    on_retry=ctx.retry_hook(judge, activity),
                ),
            ),
            round_number=number,
            kind="consensus_guard",
        )
    except ProviderError as exc:
        ctx.warn(f"the consensus guard could not challenge round {number} ({exc}); the round's decision stands")
        return None
    objection = reply.completion.text.strip()
    if not objection:
        ctx.warn(f"the consensus guard's objection to round {number} was empty; the round's decision stands")
        return None
    guard = ConsensusGuard(
        round_number=number,
        reason=reason,
        objection=objection,
        by=judge.id,
        similarity=assessment.similarity,
        evidence=mean_evidence(assessment),
        metadata=metadata_from(reply.completion),
    )
    ctx.record(ConsensusChallenged(guard=guard))
    ctx.emit(ev.GuardRaised(ctx.debate_id, guard))
    return guard


def going_on(guard: ConsensusGuard) -> str:
    """The decision's reason once the guard spoke: the debate goes on."""
    return f"the consensus guard challenged the consensus ({guard.reason}); the debate goes on"
