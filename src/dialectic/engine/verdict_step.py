"""The judge's final verdict, beside the solution: summary, key points, agreement, winner, quality.

The judge reads the debate under neutral labels in a shuffled order (``debate.neutralLabels``);
the winner it names is mapped back to an agent. When the judge runs on the same provider and
model as a participant, the verdict says so: self-preference is a known bias of LLM judges.
"""

from __future__ import annotations

from collections.abc import Sequence

from dialectic.agents.deliberation import give_verdict
from dialectic.agents.labels import neutral_labels, resolve
from dialectic.context.history import POSITION_KINDS, rounds_text
from dialectic.core import events as ev
from dialectic.core.changes import VerdictRecorded
from dialectic.core.domain import DebateRound, KeyPoints, Verdict
from dialectic.core.errors import ProviderError
from dialectic.engine.attempts import with_second_chance
from dialectic.engine.fitting import fitted
from dialectic.engine.judge_summary import judge_summary
from dialectic.engine.protocols import protocol
from dialectic.engine.run_state import RunState
from dialectic.engine.vote_step import vote_text
from dialectic.engine.window_shapes import History, cut_rounds, debate_shapes


def verdict_wanted(ctx: RunState) -> bool:
    choice = ctx.roster.settings.verdict
    if choice != "auto":
        return choice == "on"
    return protocol(ctx.roster.settings.format).name not in NO_VERDICT


NO_VERDICT = ("critique-refine", "adaptive", "council", "correction")
"""The formats whose ``verdict: auto`` asks for none: the council's ranking and the correction's points
already say which answer won, and their calls are counted (2N+1 for a council of N)."""


def shares_model(ctx: RunState) -> list[str]:
    judge = ctx.roster.judge.config
    return [a.id for a in ctx.state.agents if (a.provider, a.model) == (judge.provider, judge.model)]


async def give_final_verdict(ctx: RunState) -> Verdict | None:
    """Ask for, save and publish the verdict; None (with a warning) when the judge could not give one."""
    judge = ctx.roster.judge
    ids = [a.id for a in ctx.state.agents]
    labels = neutral_labels(
        ids, word="Participant", seed=f"{ctx.state.shuffle_seed()}/verdict", shuffle=ctx.roster.settings.neutral_labels
    )
    ordered = dict(sorted(labels.items(), key=lambda item: item[1]))
    summary = ctx.state.judge_summary

    def render(rounds: Sequence[DebateRound]) -> str:
        return rounds_text(rounds, ordered, with_roles=False)

    async def summarize() -> str | None:
        forced = await judge_summary(ctx, forced=True)
        return forced.summary if forced is not None else None

    full = History(summary.summary, True) if summary else History(render(ctx.state.rounds))
    last = ctx.state.rounds[-1:]
    positions = rounds_text(last, ordered, kinds=POSITION_KINDS, with_roles=False)
    vote = vote_text(ctx, ctx.state.vote, labels) if ctx.state.vote is not None else ""
    try:
        result = await with_second_chance(
            lambda: ctx.announce(
                judge,
                "giving the verdict",
                fitted(
                    ctx,
                    judge,
                    "giving the verdict",
                    debate_shapes(
                        full,
                        ctx.state.rounds,
                        render,
                        strategy=ctx.roster.settings.context_strategy,
                        summarize=summarize,
                        positions=positions,
                        cut_positions=lambda share: rounds_text(
                            cut_rounds(last, share), ordered, kinds=POSITION_KINDS, with_roles=False
                        ),
                    ),
                    lambda debate: give_verdict(
                        judge,
                        problem=ctx.problem,
                        labels=sorted(labels.values()),
                        debate=debate.text,
                        debate_is_summary=debate.is_summary,
                        vote=vote,
                        on_retry=ctx.retry_hook(judge, "giving the verdict"),
                    ),
                ),
                kind="verdict",
            )
        )
    except ProviderError as exc:
        ctx.warn(f"the judge could not give a verdict ({exc}); the debate is complete without one")
        return None
    if result.value is None:
        ctx.warn(f"the judge's verdict did not parse ({result.error}); the debate is complete without one")
        return None
    v = result.value
    winner = None if v.winner.strip().lower() in ("", "none", "no one", "nobody") else resolve(v.winner, labels)
    key_points = []
    for item in v.key_points:
        agent_id = resolve(item.participant, labels)
        if agent_id is not None:
            key_points.append(KeyPoints(agent_id=agent_id, points=item.main_arguments))
    verdict = Verdict(
        summary=v.summary,
        key_points=key_points,
        agreements=v.areas_of_agreement,
        disagreements=v.areas_of_disagreement,
        winner_id=winner,
        winner_reasoning=v.winner_reasoning,
        quality=v.quality_score,
        insights=v.insights,
        judge_shares_model_with=shares_model(ctx),
    )
    ctx.defer(VerdictRecorded(verdict=verdict), ev.VerdictAdded(ctx.debate_id, verdict))
    return verdict
