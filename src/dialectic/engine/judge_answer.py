"""A judge's solution to a question with one right answer that states no answer: the participants' vote decides.

A small model, asked to write the solution as JSON, often fills a field with a line of its own
instructions ("the worked solution in a few short steps, ending with the line 'Answer: <final
answer>'") or with the vote's lead-in ("The participants voted without reaching consensus…")
instead of an answer. The participants each stated one; the judge's reply states none, or only
the placeholder. Then their final answers are counted (:func:`dialectic.engine.adaptive.weighted_vote`)
and the winner is the solution's answer, said to come from the vote and kept beside the judge's
words. When no participant stated an answer either, the judge's solution stands.
"""

from __future__ import annotations

from dialectic.core.answers import canonical_number, normalize_text, stated_answer
from dialectic.core.domain import Solution
from dialectic.engine.adaptive import Ballot, Tally, weighted_vote
from dialectic.engine.run_state import RunState
from dialectic.engine.vote_step import final_proposals

QUOTED = 240
"""Characters of the judge's reply quoted in a solution the vote decided."""


def states_answer(description: str, instructions: str) -> bool:
    """Whether the judge's solution states an answer of its own: not none, and not a phrase copied from
    its instructions (a number is never taken for a copy)."""
    answer = stated_answer(description)
    if answer is None:
        return False
    if canonical_number(answer) is not None:
        return True
    copied = normalize_text(answer)
    return bool(copied) and f" {copied} " not in f" {normalize_text(instructions)} "


def participants_tally(ctx: RunState) -> Tally:
    """The participants' final answers, one ballot each (their final proposal's stated answer)."""
    return weighted_vote([Ballot(stated_answer(text)) for text in final_proposals(ctx).values()])


def decided_by_vote(judged: Solution, tally: Tally) -> Solution:
    """The solution stating the vote's answer, the judge's reply quoted under it."""
    assert tally.winner is not None
    given = ", ".join(f"{answer} ×{count}" for answer, count in tally.counts.items())
    reply = " ".join(judged.description.split())
    quoted = reply if len(reply) <= QUOTED else reply[: QUOTED - 1] + "…"
    description = "\n".join(
        [
            f"The judge's reply stated no answer (it read: “{quoted}”), so the participants' answers decide: "
            f"{given} ({tally.agreement}).",
            "",
            f"Answer: {tally.winner}",
        ]
    )
    # still the judge's solution (its call, its cost): the description says the vote decided
    return judged.model_copy(
        update={"description": description, "confidence": round(100 * tally.agreeing / tally.answered)}
    )


def answered(ctx: RunState, judged: Solution, instructions: str) -> Solution:
    """``judged`` when it states an answer; else the participants' vote's answer when they stated any."""
    if states_answer(judged.description, instructions):
        return judged
    tally = participants_tally(ctx)
    if tally.winner is None:
        ctx.warn("the judge's solution states no answer, and no participant stated one either")
        return judged
    ctx.warn(
        f"the judge's solution states no answer of its own: the participants' answers decide "
        f"({tally.winner}, {tally.agreement})"
    )
    return decided_by_vote(judged, tally)
