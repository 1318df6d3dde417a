"""Turning a summarizing call's reply into a stored summary (shared by agents' and the judge's)."""

from __future__ import annotations

from dialectic.agents.participants import Speaker
from dialectic.core.config import SummarizationConfig
from dialectic.core.domain import DebateSummary, SummaryMetadata
from dialectic.llm.base import Completion


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
