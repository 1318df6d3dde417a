"""The judge's summary of the final round: what it reads instead of the whole debate when that is long.

Made before the synthesis once the debate's text passes the judge's summarization threshold, or
sooner, when a prompt of the judge's outgrows its context window (``debate.contextStrategy:
summarize``); saved once and read by the synthesis and the verdict.
"""

from __future__ import annotations

from dialectic.context.history import POSITION_KINDS, debate_text, final_round_text, participant_names, rounds_text
from dialectic.core.changes import JudgeSummaryRecorded
from dialectic.core.domain import DebateSummary
from dialectic.core.errors import ProviderError, WindowFull
from dialectic.engine.fitting import fitted
from dialectic.engine.run_state import RunState
from dialectic.engine.summaries import summary_from
from dialectic.engine.window_shapes import cut_rounds, cut_shapes


async def judge_summary(ctx: RunState, *, forced: bool = False) -> DebateSummary | None:
    """The judge's saved summary; else, when the debate is long (or ``forced``), a new one, saved.

    ``None`` when there is none to be had: summarization is off, there is no final round, or the
    judge could not write it (a warning says so; it then reads the debate itself).
    """
    judge = ctx.roster.judge
    if ctx.state.judge_summary is not None:
        return ctx.state.judge_summary
    if not judge.summarization.enabled:
        return None
    text = final_round_text(ctx.state)
    if not text or (not forced and len(debate_text(ctx.state)) < judge.summarization.threshold):
        return None
    warnings: list[str] = []
    try:
        completion = await ctx.announce(
            judge,
            "summarizing",
            fitted(
                ctx,
                judge,
                "summarizing",
                cut_shapes(text, lambda share: _final_round_cut(ctx, share)),
                lambda debate: judge.summarize(
                    problem=ctx.problem, debate=debate, warnings=warnings, on_retry=ctx.retry_hook(judge, "summarizing")
                ),
            ),
            kind="judge_summary",
        )
    except (ProviderError, WindowFull) as exc:  # a summary too large for the window is a summary not had
        ctx.flush_warnings(warnings)
        ctx.warn(f"the judge could not summarize the final round ({exc}); it reads the full debate")
        return None
    ctx.flush_warnings(warnings)
    summary = summary_from(judge, judge.summarization, completion, before_chars=len(text))
    ctx.record(JudgeSummaryRecorded(summary=summary))
    return summary


def _final_round_cut(ctx: RunState, share: float) -> str:
    """The final round's positions, each cut to ``share`` of its length, to fit the judge's window."""
    last = ctx.state.rounds[-1:]
    return rounds_text(cut_rounds(last, share), participant_names(ctx.state), kinds=POSITION_KINDS)
