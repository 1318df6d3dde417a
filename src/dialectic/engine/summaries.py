"""An agent's summarizing call, and turning its reply into a stored summary (shared by agents' and the judge's)."""

from __future__ import annotations

from collections.abc import Sequence

from dialectic.agents.participants import DebateAgent, Speaker
from dialectic.context.history import participant_names, rounds_text
from dialectic.core.config import SummarizationConfig
from dialectic.core.domain import DebateRound, DebateSummary, SummaryMetadata
from dialectic.engine.fitting import fitted
from dialectic.engine.run_state import RunState
from dialectic.engine.window_shapes import source_shapes
from dialectic.llm.base import Completion


async def summarized(
    ctx: RunState, agent: DebateAgent, fresh: Sequence[DebateRound], previous: str, warnings: list[str]
) -> Completion:
    """``agent``'s summary of the rounds ``fresh`` on top of its ``previous`` one, fitted to its window
    (the prompt's warnings go to ``warnings``)."""
    names = participant_names(ctx.state)
    return await fitted(
        ctx,
        agent,
        "summarizing",
        source_shapes(list(fresh), lambda rounds: rounds_text(rounds, names)),
        lambda text: agent.summarize(
            problem=ctx.problem,
            history=text,
            previous=previous,
            warnings=warnings,
            on_retry=ctx.retry_hook(agent, "summarizing"),
        ),
    )


def summary_from(
    speaker: Speaker, settings: SummarizationConfig, completion: Completion, *, before_chars: int
) -> DebateSummary:
    """A stored summary: the reply cut to ``maxLength``, with what it cost."""
    text = completion.text.strip()[: settings.max_length]
    return DebateSummary(
        agent_id=speaker.id,
        agent_role=speaker.role,
        summary=text,
        metadata=SummaryMetadata(
            before_chars=before_chars,
            after_chars=len(text),
            method=settings.method,
            latency_ms=completion.latency_ms,
            tokens_used=completion.usage.total_tokens,
            input_tokens=completion.usage.input_tokens,
            output_tokens=completion.usage.output_tokens,
            model=completion.model,
        ),
    )
