"""Taking an agent out of the debate when its calls keep failing (seed ``004_…`` §6.3).

Shared by every protocol: the agent's failed contribution and its leaving are saved in one
append, announced, and the debate fails (resumably) when fewer than ``debate.minAgents``
remain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialectic.core import events as ev
from dialectic.core.changes import ContributionRecorded, ParticipantDropped
from dialectic.core.domain import ContributionType, DroppedParticipant
from dialectic.core.errors import (
    BadRequest,
    ContextWindowExceeded,
    ModelNotFound,
    ProviderAuthError,
    ProviderError,
    TooFewAgentsError,
)
from dialectic.engine.run_state import RunState, failed_contribution

if TYPE_CHECKING:
    from dialectic.agents.participants import DebateAgent


def active_agents(ctx: RunState) -> list[DebateAgent]:
    """The agents still taking part, in configured order."""
    out = ctx.state.dropped_ids()
    return [a for a in ctx.roster.agents if a.id not in out]


def drop_agent(ctx: RunState, agent: DebateAgent, number: int, kind: ContributionType, error: ProviderError) -> None:
    """Save ``agent``'s failed contribution and its leaving; raise ``TooFewAgentsError`` below ``minAgents``."""
    failed = failed_contribution(agent, kind, error, target_agent_id=None, attempts=int(getattr(error, "attempts", 1)))
    dropped = DroppedParticipant(agent_id=agent.id, round_number=number, reason=str(error))
    ctx.record(ContributionRecorded(round_number=number, contribution=failed), ParticipantDropped(dropped=dropped))
    ctx.emit(ev.ContributionAdded(ctx.debate_id, number, agent.name, failed))
    remaining = active_agents(ctx)
    ctx.emit(ev.ParticipantRemoved(ctx.debate_id, agent.name, dropped, len(remaining)))
    needed = min(ctx.roster.settings.min_agents, len(ctx.roster.agents))
    if len(remaining) < needed:
        raise TooFewAgentsError(
            f"{agent.name} failed ({error}) and was dropped: {len(remaining)} of "
            f"{len(ctx.roster.agents)} agents remain, fewer than debate.minAgents ({needed}); {resume_hint(error)}",
            cause=error,
        ) from error


def resume_hint(error: ProviderError) -> str:
    """Whether resuming the debate can help after ``error``, and what must change first: its real cause."""
    if isinstance(error, ContextWindowExceeded):
        return "resuming helps only with a larger context window (contextWindow, or --context-window on resume)"
    if isinstance(error, ProviderAuthError):
        return "resuming helps once the provider's API key is fixed"
    if isinstance(error, ModelNotFound):
        return "resuming helps only once the model exists on the provider (check the model's name)"
    if isinstance(error, BadRequest):
        return "the provider refused the request itself: resuming unchanged will fail the same way"
    return "the debate can be resumed once the provider works again"
