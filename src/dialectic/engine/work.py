"""The debate's work as a dataflow graph: each contribution starts the moment its inputs exist.

The unit of scheduling is one piece of work and its inputs, across the whole debate, not a
phase or a round:

* proposal (round 1): no inputs; (round r > 1): the agent's refinement of round r − 1,
  carried over without a call;
* critique of agent *i* by agent *j* in round r: *i*'s proposal of round r and *j*'s own
  history for round r (its refinement of round r − 1, and its summary when one is due);
* refinement of agent *i* in round r: *i*'s proposal, every critique of *i* in round r
  settled, and *i*'s own history for round r;
* summary of agent *i* for round r: *i*'s history final, i.e. its refinement of round r − 1;
* the judge's evaluation of round r (``convergence``/``quality`` termination): every
  refinement of round r.

The graph's nodes (:mod:`dialectic.engine.nodes`) still move the persisted cursor one step at
a time and each waits for its part of this graph, so a reader sees the same map and a
resumed debate starts from the same place. Every task first looks in the state for its
saved result, so nothing saved is asked of a model again.

A round that may not happen (early stop by the judge's evaluation) is worked on ahead too,
but nothing of it is saved until the evaluation says the debate goes on; when it stops, the
work is cancelled and its cost recorded as discarded. When the consensus guard challenges a
round (:mod:`dialectic.engine.consensus_guard`), the work ahead never saw its objection: it is
cancelled the same way and started again.

An agent whose proposal or refinement keeps failing is dropped from the rest of the debate;
the debate goes on while at least ``debate.minAgents`` remain.

A call whose prompt outgrows the agent's context window is shrunk (:mod:`dialectic.engine.fitting`);
under ``debate.contextStrategy: summarize`` that may ask for the agent's summary for round *r* at
once, under its character threshold: one task, ``WorkKey("window_summary", r, agent)``, shared by all the
calls of the agent that need it, saved as the round's summary once the round is sure to happen.

The debate's work is kept in three parts: the keys that name it (:mod:`dialectic.engine.work_keys`),
the task table and its gating (:mod:`dialectic.engine.work_table`), and the work of each step
(:mod:`dialectic.engine.work_steps`). :class:`DebateWork` puts them together for the nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dialectic.agents.participants import DebateAgent
from dialectic.core.config import DebateSettings
from dialectic.engine.assessment import Decision
from dialectic.engine.dropping import active_agents
from dialectic.engine.run_state import RunState
from dialectic.engine.work_keys import WorkKey, critique_keys, proposal_keys, refinement_keys, summary_keys
from dialectic.engine.work_steps import DebateSteps
from dialectic.engine.work_table import WorkTable


class DebateWork:
    """Every task of the debate, created on demand, each awaiting only its own inputs."""

    def __init__(self, ctx: RunState, *, clock: Callable[[], float] | None = None) -> None:
        self.ctx = ctx
        self.table = WorkTable(ctx, lambda key: self.steps.body(key), clock=clock)
        self.steps = DebateSteps(ctx, self.table)

    @property
    def settings(self) -> DebateSettings:
        return self.ctx.roster.settings

    def agents(self) -> list[DebateAgent]:
        """The agents still taking part."""
        return active_agents(self.ctx)

    def summary_keys(self, number: int) -> list[WorkKey]:
        return summary_keys(self.agents(), number)

    def proposal_keys(self, number: int) -> list[WorkKey]:
        return proposal_keys(self.agents(), number)

    def critique_keys(self, number: int) -> list[WorkKey]:
        return critique_keys(self.agents(), number)

    def refinement_keys(self, number: int) -> list[WorkKey]:
        return refinement_keys(self.agents(), number)

    def release(self) -> None:
        """Let go of the tasks once the run has ended: the table reaches its steps (and they it) through the
        body it runs, a reference cycle the garbage collector would free only at a rare full pass."""
        self.table.release()

    def start_rounds(self, first: int) -> None:
        """Create the tasks of round ``first`` and every later round: each waits for its inputs."""
        self.table.start_rounds(first)

    async def wait(self, keys: Sequence[WorkKey]) -> list[Any]:
        """The results of ``keys`` (``None`` for work that was skipped); see :meth:`WorkTable.wait`."""
        return await self.table.wait(keys)

    async def evaluation(self, number: int) -> Decision:
        results = await self.wait([WorkKey("evaluation", number)])
        decision: Decision = results[0]
        return decision

    async def discard_beyond(self, number: int) -> None:
        """Cancel the work of rounds after ``number`` and record what it cost."""
        await self.table.discard_beyond(number)

    async def cancel(self) -> None:
        await self.table.cancel()
