"""The vote after the last round (``format: vote``): participants vote on the final proposals.

Each active agent sees every final proposal under an anonymous label (``Proposal A``…, in a
shuffled order seeded by the debate's id) — its own left out when ``debate.vote.excludeOwn``
— and votes with a confidence. A vote that fails or names no proposal is an abstention,
with a warning. The votes are counted by :func:`dialectic.engine.voting.count_votes` under the
configured rule; the outcome is saved and published.
"""

from __future__ import annotations

import asyncio

from dialectic.agents.deliberation import LabelledText, cast_vote
from dialectic.agents.labels import neutral_labels, resolve
from dialectic.agents.participants import DebateAgent
from dialectic.core import events as ev
from dialectic.core.changes import VoteRecorded
from dialectic.core.domain import Vote, VoteOutcome
from dialectic.core.errors import ProviderError
from dialectic.engine.assessment import latest_positions
from dialectic.engine.attempts import with_second_chance
from dialectic.engine.dropping import active_agents
from dialectic.engine.fitting import gated
from dialectic.engine.run_state import RunState
from dialectic.engine.voting import count_votes


def final_proposals(ctx: RunState) -> dict[str, str]:
    """Each active agent's final position: its latest refinement (or turn, or proposal) across the rounds."""
    finals: dict[str, str] = {}
    for rnd in ctx.state.rounds:
        finals.update(latest_positions(ctx.state, rnd.round_number))
    active = {a.id for a in active_agents(ctx)}
    return {agent_id: text for agent_id, text in finals.items() if agent_id in active}


async def hold_vote(ctx: RunState) -> VoteOutcome:
    settings = ctx.roster.settings.vote
    proposals = final_proposals(ctx)
    labels = neutral_labels(list(proposals), word="Proposal", seed=f"{ctx.state.shuffle_seed()}/vote")
    voters = [a for a in active_agents(ctx) if a.id in proposals]
    if settings.exclude_own and len(proposals) == 2 and settings.rule in ("majority", "supermajority"):
        ctx.warn(
            f"two proposals with vote.excludeOwn: each ballot holds only the other's proposal, so a {settings.rule} "
            "vote can only tie and the judge decides from both; add agents, or use the confidence or weighted rule"
        )

    async def ballot(voter: DebateAgent) -> Vote | None:
        shown = [
            LabelledText(labels[agent_id], text)
            for agent_id, text in sorted(proposals.items(), key=lambda item: labels[item[0]])
            if not (settings.exclude_own and agent_id == voter.id)
        ]
        if not shown:
            return None
        try:
            result = await with_second_chance(
                lambda: ctx.announce(
                    voter,
                    "voting",
                    gated(
                        ctx,
                        voter,
                        "voting",
                        lambda: cast_vote(
                            voter, problem=ctx.problem, proposals=shown, on_retry=ctx.retry_hook(voter, "voting")
                        ),
                    ),
                    kind="vote",
                )
            )
        except ProviderError as exc:
            ctx.warn(f"{voter.name} could not vote ({exc}); counted as an abstention")
            return None
        allowed = {agent_id: labels[agent_id] for agent_id in proposals if labels[agent_id] in {p.label for p in shown}}
        choice = resolve(result.value.choice, allowed) if result.value is not None else None
        if result.value is None or choice is None:
            written = result.value.choice if result.value is not None else result.error
            ctx.warn(f"{voter.name}'s vote named no proposal on its ballot ({written}); counted as an abstention")
            return None
        return Vote(
            voter_id=voter.id,
            choice_id=choice,
            label=labels[choice],
            confidence=result.value.confidence,
            reason=result.value.reason,
        )

    cast = [v for v in await asyncio.gather(*(ballot(v) for v in voters)) if v is not None]
    weights = {a.id: a.config.vote_weight for a in voters} if settings.rule == "weighted" else None
    outcome = count_votes(
        cast,
        settings.rule,
        threshold=settings.threshold if settings.rule == "supermajority" else None,
        weights=weights,
        candidates=list(proposals),
        voters=[v.id for v in voters],
    )
    ctx.record(VoteRecorded(outcome=outcome))
    ctx.emit(ev.VoteCompleted(ctx.debate_id, outcome))
    return outcome


def vote_text(ctx: RunState, outcome: VoteOutcome, labels: dict[str, str] | None = None) -> str:
    """The vote as the judge reads it: the tally under ``labels`` (or the agents' names), and the winner."""
    names = labels or {a.id: a.name for a in ctx.state.agents}
    lines = [f"Rule: {outcome.rule}; votes cast: {len(outcome.votes)}."]
    lines += [f"- {names.get(agent_id, agent_id)}: {support:g}" for agent_id, support in outcome.tally.items()]
    if outcome.winner_id is not None:
        verdict = "with consensus" if outcome.consensus else "without reaching the rule's bar"
        lines.append(f"Winner: {names.get(outcome.winner_id, outcome.winner_id)}, {verdict}.")
    else:
        lines.append("No winner (a tie, or no votes).")
    return "\n".join(lines)
