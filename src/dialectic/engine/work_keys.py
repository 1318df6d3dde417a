"""The names of the debate's pieces of work (:mod:`dialectic.engine.work`): one key per task.

A key says what the work is (``kind``), for which round, by which agent and, for a critique, of
whom. The round's lists of keys are built here, in the order the tasks are created.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from dialectic.agents.participants import DebateAgent

WorkKind = Literal["proposal", "critique", "refinement", "summary", "window_summary", "evaluation"]


@dataclass(frozen=True, slots=True)
class WorkKey:
    """One task of the debate, e.g. ``WorkKey("critique", 2, "agent-kiss", "agent-architect")``.

    ``agent`` is the author (``None`` for the judge's evaluation); ``target`` the agent a
    critique is of (``None`` for every other kind).
    """

    kind: WorkKind
    round: int
    agent: str | None = None
    target: str | None = None

    def involves(self, agent_id: str) -> bool:
        """Whether ``agent_id`` is this work's author or its target."""
        return agent_id in (self.agent, self.target)


def summary_keys(agents: Sequence[DebateAgent], number: int) -> list[WorkKey]:
    return [WorkKey("summary", number, a.id) for a in agents] if number > 1 else []


def proposal_keys(agents: Sequence[DebateAgent], number: int) -> list[WorkKey]:
    return [WorkKey("proposal", number, a.id) for a in agents]


def critique_keys(agents: Sequence[DebateAgent], number: int) -> list[WorkKey]:
    return [WorkKey("critique", number, c.id, t.id) for c in agents for t in agents if c.id != t.id]


def refinement_keys(agents: Sequence[DebateAgent], number: int) -> list[WorkKey]:
    return [WorkKey("refinement", number, a.id) for a in agents]


def round_keys(agents: Sequence[DebateAgent], number: int) -> list[WorkKey]:
    """Every agent's work of round ``number`` (not the judge's), summaries first."""
    return [
        *summary_keys(agents, number),
        *proposal_keys(agents, number),
        *critique_keys(agents, number),
        *refinement_keys(agents, number),
    ]
