"""Last checks on a judge's solution before it is recorded: no restated problem presented as a solution, and no
stated confidence shown that has not earned it.

A small judge sometimes writes the problem back ("Design a cache"), or a line of its own instructions, as its
solution. Such a text is never recorded as the solution: the participant's final position that says the most
beyond the problem takes its place, under a line that says so; when every position restates the problem too,
the solution says plainly that the debate produced none.
"""

from __future__ import annotations

from collections.abc import Callable

from dialectic.core.domain import Solution
from dialectic.core.stated_confidence import withheld_reason
from dialectic.engine.assessment import latest_positions
from dialectic.engine.run_state import RunState
from dialectic.similarity.detectors import restatement

NO_SOLUTION = (
    "No solution: the judge's synthesis and every participant's final position restated the problem instead of "
    "solving it. A larger model (or more rounds) is needed for this problem."
)


def gate_confidence(solution: Solution, model: str | None) -> Solution:
    """The solution with its stated confidence withheld unless ``model`` has earned it (see
    :mod:`dialectic.core.stated_confidence`)."""
    return solution.model_copy(update={"confidence_withheld": withheld_reason(model)})


def unrestated(ctx: RunState, solution: Solution, instructions: str, warn: Callable[[str], None]) -> Solution:
    """``solution``, or the participant position that replaces it when it mostly restates the problem."""
    problem = ctx.state.problem
    check = restatement(solution.description, problem, instructions=instructions)
    if not check.restates:
        return solution
    candidates: list[tuple[float, str, str]] = []
    for rnd in ctx.state.rounds:
        for agent_id, text in latest_positions(ctx.state, rnd.round_number).items():
            found = restatement(text, problem, instructions=instructions)
            if not found.restates:
                candidates.append((found.novelty, agent_id, text))
    names = {a.id: a.name for a in ctx.state.agents}
    if not candidates:
        warn("the judge's solution restated the problem, and so did every participant: no solution is recorded")
        return Solution(
            description=NO_SOLUTION,
            confidence=0,
            synthesized_by=solution.synthesized_by,
            structured=False,
            confidence_withheld="there is no solution",
            judge_failure=solution.judge_failure,
            metadata=solution.metadata,
        )
    _, agent_id, text = max(candidates, key=lambda c: c[0])
    warn(
        f"the judge's solution mostly restated the problem (only {check.novelty:.0%} of its content words are new): "
        f"{names.get(agent_id, agent_id)}'s final position is recorded as the solution instead"
    )
    lead = (
        f"_The judge's synthesis restated the problem; this is {names.get(agent_id, agent_id)}'s final position, "
        "the participant's that says the most beyond it._"
    )
    return Solution(
        description=f"{lead}\n\n{text.strip()}",
        confidence=0,
        confidence_withheld="no one stated a confidence in this position",
        synthesized_by=agent_id,
        structured=False,
        judge_failure=solution.judge_failure,  # a fallback's restated synthesis replaced: the judge still failed
        metadata=solution.metadata,
    )
