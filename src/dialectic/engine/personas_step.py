"""Positions and personas: configured per agent, or assigned by the judge before round 1.

With ``debate.personas: auto`` the judge gives every participant a position and a persona
for this problem, following ``debate.personaStrategy`` (``binary``, ``spectrum``,
``multi-perspective``). The assignment is saved once and used on resume without asking
again; every agent's system prompt then carries its stance.
"""

from __future__ import annotations

from dialectic.agents.deliberation import LabelledRole, assign_personas
from dialectic.agents.labels import numbered_labels, resolve
from dialectic.core import events as ev
from dialectic.core.changes import PersonasAssigned, Stance
from dialectic.core.domain import DebateState
from dialectic.core.errors import ProviderError
from dialectic.engine.attempts import with_second_chance
from dialectic.engine.fitting import gated
from dialectic.engine.roster import Roster
from dialectic.engine.run_state import RunState


def apply_stances(roster: Roster, state: DebateState) -> None:
    """Give each agent the position and persona the state holds (configured or assigned)."""
    by_id = {p.id: p for p in state.agents}
    for agent in roster.agents:
        participant = by_id.get(agent.id)
        if participant is not None:
            agent.set_stance(participant.position, participant.persona)


async def assign_if_asked(ctx: RunState) -> None:
    settings = ctx.roster.settings
    if settings.personas != "auto" or ctx.state.personas_assigned:
        return
    judge = ctx.roster.judge
    labels = numbered_labels([a.id for a in ctx.roster.agents], word="Agent")
    shown = [LabelledRole(labels[a.id], a.role_title) for a in ctx.roster.agents]
    try:
        result = await with_second_chance(
            lambda: ctx.announce(
                judge,
                "assigning positions and personas",
                gated(
                    ctx,
                    judge,
                    "assigning personas",
                    lambda: assign_personas(
                        judge,
                        problem=ctx.problem,
                        participants=shown,
                        strategy=settings.persona_strategy,
                        on_retry=ctx.retry_hook(judge, "assigning personas"),
                    ),
                ),
                kind="personas",
            )
        )
    except ProviderError as exc:
        ctx.warn(f"the judge could not assign personas ({exc}); the agents argue without them")
        return
    if result.value is None:
        ctx.warn(f"the judge's persona assignment did not parse ({result.error}); the agents argue without them")
        return
    stances: list[Stance] = []
    for item in result.value.assignments:
        agent_id = resolve(item.participant, labels)
        if agent_id is not None and all(s.agent_id != agent_id for s in stances):
            stances.append(Stance(agent_id=agent_id, position=item.position.strip(), persona=item.persona.strip()))
    missing = [a.name for a in ctx.roster.agents if all(s.agent_id != a.id for s in stances)]
    if missing:
        ctx.warn(f"the judge gave no position to {', '.join(missing)}; they keep their configured stance")
    ctx.record(PersonasAssigned(stances=stances))
    apply_stances(ctx.roster, ctx.state)
    ctx.emit(ev.PersonasGiven(ctx.debate_id, tuple(ctx.state.agents)))
