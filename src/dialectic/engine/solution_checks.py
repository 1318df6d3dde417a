"""Last checks on a judge's solution before it is recorded: no restated problem presented as a solution, and no
stated confidence shown that has not earned it.

A small judge sometimes writes the problem back ("Design a cache"), or a line of its own instructions, as its
solution. Such a text is never recorded as the solution: the participant's final position that says the most
beyond the problem takes its place, under a line that says so; when every position restates the problem too,
the solution says plainly that the debate produced none.
"""

from __future__ import annotations

import re
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


_HEADING = re.compile(r"^\s*(?:#{1,6}\s*|\*\*)?([A-Za-z][A-Za-z ]{2,40}?)(?:\*\*)?\s*:?\s*$")
_OTHER_FIELDS = frozenset(
    {"tradeoffs", "trade offs", "trade-offs", "recommendations", "unfulfilled major requirements",
     "open questions", "confidence"}
)  # fmt: skip
_OWN_TITLES = frozenset({"final solution", "solution", "description"})
_STATED_CONFIDENCE = re.compile(
    r"^\s*(?:#{1,6}\s*|\*\*)?confidence(?:\*\*)?\s*:?\s*(?:\*\*)?\s*\d{1,3}\s*(?:%|/\s*100)?\s*$", re.I
)


def description_only(text: str) -> str:
    """The solution's description without the other fields a judge wrote into it as sections.

    The embedded 1.5B judge put its whole answer in ``description``: under "Final Solution" and
    "Description" headings, then "Tradeoffs", "Recommendations", "Open Questions" and "Confidence 85"
    sections. Those fields have their own places (filled, or empty as the judge left them); a confidence
    left inside the text would also be shown where :func:`gate_confidence` withholds it. The text is cut
    at the first heading that names another field, and leading headings that only title it are dropped.
    Plain text without such headings is returned as it is."""
    lines = text.strip().splitlines()
    kept: list[str] = []
    for line in lines:
        heading = _HEADING.match(line.replace("-", " ") if line.lstrip().startswith("#") else line)
        title = heading.group(1).strip().lower() if heading else ""
        if (title in _OTHER_FIELDS and (line.lstrip().startswith(("#", "**")) or kept)) or _STATED_CONFIDENCE.match(
            line
        ):
            break
        if title in _OWN_TITLES and not any(k.strip() for k in kept):
            continue
        kept.append(line)
    described = "\n".join(kept).strip()
    return described or text.strip()


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
