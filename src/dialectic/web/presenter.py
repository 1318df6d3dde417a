"""What the API sends: stored changes and live events as JSON, model text also as sanitised HTML.

A stored change goes out in the shape the store keeps it (camelCase), with its ``seq`` and,
beside every text a model wrote, that text rendered (``contentHtml``, ``summaryHtml``…; see
:mod:`dialectic.web.markdown`). The page puts only those rendered fields into the document
as HTML; every other string it shows as text.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from dialectic.core import events as ev
from dialectic.core.changes import Change
from dialectic.core.domain import DebateState
from dialectic.core.ledger import debate_totals
from dialectic.web.markdown import render_markdown

LIVE_EVENTS: dict[type[ev.Event], str] = {
    ev.TokenDelta: "token",
    ev.AgentStarted: "agent_started",
    ev.AgentCompleted: "agent_completed",
    ev.PhaseStarted: "phase_started",
    ev.PhaseCompleted: "phase_completed",
    ev.CallRetrying: "retrying",
    ev.Warning: "warning",
    ev.SynthesisStarted: "synthesis_started",
    ev.DebateStarted: "debate_started",
    ev.DebatePausing: "pausing",
}
"""Events that announce nothing saved, by the name they have on the stream. Every other event the
engine publishes announces a stored change, and reaches the stream as that change (so it can be
replayed)."""

SOLUTION_LISTS = ("tradeoffs", "recommendations", "unfulfilledMajorRequirements", "openQuestions")
VERDICT_LISTS = ("agreements", "disagreements", "insights")

Json = dict[str, Any]


def dumps(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def change_payload(seq: int, change: Change) -> Json:
    """A stored change as the stream sends it: its fields, its ``seq``, and model text rendered."""
    payload: Json = change.model_dump(mode="json", by_alias=True, exclude_none=True)
    payload["seq"] = seq
    _render_change(payload)
    return payload


def _render_change(payload: Json) -> None:
    kind = payload["kind"]
    if kind == "debate_created":
        render_state(payload["state"])
    elif kind == "contribution_recorded":
        _render_contribution(payload["contribution"])
    elif kind in ("summary_recorded", "judge_summary_recorded"):
        _render_summary(payload["summary"])
    elif kind == "solution_recorded":
        _render_solution(payload["solution"])
    elif kind == "verdict_recorded":
        _render_verdict(payload["verdict"])


def render_state(state: Json) -> Json:
    """A whole debate (camelCase JSON) with its model text rendered beside it, in place."""
    for rnd in state.get("rounds", []):
        for contribution in rnd.get("contributions", []):
            _render_contribution(contribution)
        for summary in rnd.get("summaries", {}).values():
            _render_summary(summary)
    if state.get("judgeSummary"):
        _render_summary(state["judgeSummary"])
    if state.get("finalSolution"):
        _render_solution(state["finalSolution"])
    if state.get("verdict"):
        _render_verdict(state["verdict"])
    return state


def _render_contribution(contribution: Json) -> None:
    contribution["contentHtml"] = render_markdown(contribution.get("content", ""))


def _render_summary(summary: Json) -> None:
    summary["summaryHtml"] = render_markdown(summary.get("summary", ""))


def _render_solution(solution: Json) -> None:
    html: Json = {"description": render_markdown(solution.get("description", ""))}
    if solution.get("implementation"):
        html["implementation"] = render_markdown(solution["implementation"])
    for key in SOLUTION_LISTS:
        html[key] = [render_markdown(item) for item in solution.get(key, [])]
    solution["html"] = html


def _render_verdict(verdict: Json) -> None:
    html: Json = {"summary": render_markdown(verdict.get("summary", ""))}
    for key in VERDICT_LISTS:
        html[key] = [render_markdown(item) for item in verdict.get(key, [])]
    verdict["html"] = html


def live_name(event: ev.Event) -> str | None:
    """The stream's name for a live-only event; ``None`` for one that announces a stored change."""
    return LIVE_EVENTS.get(type(event))


def event_payload(event: ev.Event) -> Json:
    """A live event's fields, camelCase, with models and tuples as JSON."""
    kind = type(event)
    names = _FIELD_NAMES.get(kind)
    if names is None:  # worked out once per class: token deltas come by the thousand
        names = _FIELD_NAMES[kind] = tuple((f.name, to_camel(f.name)) for f in dataclasses.fields(event))
    return {camel: _json_value(getattr(event, name)) for name, camel in names}


_FIELD_NAMES: dict[type[ev.Event], tuple[tuple[str, str], ...]] = {}


def _json_value(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, (tuple, list)):
        return [_json_value(item) for item in value]
    return value


@dataclasses.dataclass(frozen=True)
class TokenTotals:
    """Tokens a debate used, counted over its ledger as the report, ``show`` and the page count them."""

    input: int = 0
    output: int = 0
    total: int = 0

    def to_json(self) -> Json:
        return {"input": self.input, "output": self.output, "total": self.total}


def token_totals(state: DebateState) -> TokenTotals:
    """The tokens of every call in the debate's ledger (:func:`dialectic.core.ledger.debate_totals`): the figure
    the page, ``show`` and the report give."""
    totals = debate_totals(state)
    return TokenTotals(input=totals.input_tokens, output=totals.output_tokens, total=totals.total_tokens)
