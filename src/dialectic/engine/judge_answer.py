"""A judge's solution to a question with one right answer: when the participants' answers decide instead.

A small model, asked to write the solution as JSON, often fills a field with a line of its own
instructions ("the worked solution in a few short steps, ending with the line 'Answer: <final
answer>'") or with the vote's lead-in ("The participants voted without reaching consensus…")
instead of an answer. An answer only counts when it was worked out, not copied: a phrase of the
prompts ("<final answer>", "No error found") is no answer, and neither is a line with none. When
the judge's solution states no answer of its own, each participant's last answer of its own (its
refinement's, else its proposal's) is counted (:func:`dialectic.engine.adaptive.weighted_vote`), and
the winner is the solution's answer, said to come from the vote, the judge's words quoted. When no
participant stated an answer either, the judge's solution stands.

A judge's answer of its own decides where the participants have no majority. Where more than half
of them stated the same answer (all of them, with two), a different one from the judge does not
overrule it. The judge is usually the participants' model, reading their working; measured on the
0.5B (`format:convergence-seeking`, three agents, 332 items of four tasks), it went against a
majority on 17 items: on 16 the majority was right and the judge wrong (4 of them unanimous), on
1 the judge was right. Voting, not a judge's reading, is what the research finds lifts a panel.
"""

from __future__ import annotations

from collections.abc import Iterable

from dialectic.agents.templates import reasoning_instructions
from dialectic.core.answers import canonical_number, normalize_text, stated_answers
from dialectic.core.domain import TURN_KINDS, Contribution, Solution
from dialectic.engine.adaptive import Ballot, Tally, weighted_vote
from dialectic.engine.dropping import active_agents
from dialectic.engine.run_state import RunState

QUOTED = 240
"""Characters of the judge's reply quoted in a solution the vote decided."""
ANSWER_QUOTED = 60
"""Characters of the judge's answer quoted (a sentence after "the final answer" reads as a text answer)."""
POSITIONS = ("proposal", *TURN_KINDS, "refinement")
"""The contributions that state a participant's own answer (a critique states its view of another's)."""


def own_answer(text: str, instructions: str) -> str | None:
    """The deciding answer ``text`` states that is not copied from ``instructions``: a phrase of two
    words or more found there is a copy; a number or a single word ("no", "true") never is."""
    copied_from = f" {normalize_text(instructions)} "
    for answer in reversed(stated_answers(text)):
        words = normalize_text(answer)
        if canonical_number(answer) is not None or " " not in words or f" {words} " not in copied_from:
            return answer
    return None


def last_answers(ctx: RunState, instructions: str) -> dict[str, str | None]:
    """Each active participant's last answer of its own among its positions, round by round."""
    active = {agent.id for agent in active_agents(ctx)}
    last: dict[str, str | None] = dict.fromkeys(sorted(active))
    for rnd in ctx.state.rounds:
        for kind in POSITIONS:
            for c in _positions(rnd.contributions, kind):
                if c.agent_id in active:
                    last[c.agent_id] = own_answer(c.content, instructions) or last[c.agent_id]
    return last


def majority(answers: dict[str, str | None]) -> str | None:
    """The answer more than half of the participants stated, when there are two or more participants."""
    tally = weighted_vote([Ballot(answer) for answer in answers.values()])  # unweighted: the winner is the most given
    return tally.winner if len(answers) >= 2 and 2 * tally.agreeing > len(answers) else None


def _positions(contributions: Iterable[Contribution], kind: str) -> list[Contribution]:
    return [c for c in contributions if c.type == kind and c.ok and c.target_agent_id is None]


def _shortened(text: str, most: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= most else flat[: most - 1] + "…"


def decided_by_vote(judged: Solution, tally: Tally, *, judge_answer: str | None = None) -> Solution:
    """The solution stating the vote's answer, the judge's reply quoted above it (``judge_answer``: the
    answer it stated against the participants' majority)."""
    assert tally.winner is not None
    given = ", ".join(f"{answer} ×{count}" for answer, count in tally.counts.items())
    quoted = _shortened(judged.description, QUOTED)
    if judge_answer is None:
        why = f"The judge's reply stated no answer (it read: “{quoted}”), so the participants' answers decide"
    else:
        said = _shortened(judge_answer, ANSWER_QUOTED)
        why = (
            f"The judge's reply answered {said} (it read: “{quoted}”), against the participants' majority, "
            "so theirs stands"
        )
    description = "\n".join(
        [
            f"{why}: {given} ({tally.agreement}).",
            "",
            f"Answer: {tally.winner}",
        ]
    )
    # still the judge's solution (its call, its cost): the description says the vote decided
    return judged.model_copy(
        update={"description": description, "confidence": round(100 * tally.agreeing / tally.answered)}
    )


def answered(ctx: RunState, judged: Solution, judge_instructions: str) -> Solution:
    """``judged`` when it states an answer of its own, unless a majority of the participants stated another;
    else the participants' vote's answer when they stated any."""
    instructions = f"{judge_instructions}\n{reasoning_instructions()}"
    answers = last_answers(ctx, instructions)
    tally = weighted_vote([Ballot(answer) for answer in answers.values()])
    judge_answer = own_answer(judged.description, instructions)
    if judge_answer is not None:
        agreed = majority(answers)
        if agreed is None or agreed == judge_answer:
            return judged
        said = _shortened(judge_answer, ANSWER_QUOTED)
        ctx.warn(
            f"the judge's solution answers {said}, against the participants' majority: theirs stands "
            f"({agreed}, {tally.agreement})"
        )
        return decided_by_vote(judged, tally, judge_answer=judge_answer)
    if tally.winner is None:
        ctx.warn("the judge's solution states no answer, and no participant stated one either")
        return judged
    ctx.warn(
        f"the judge's solution states no answer of its own: the participants' answers decide "
        f"({tally.winner}, {tally.agreement})"
    )
    return decided_by_vote(judged, tally)
