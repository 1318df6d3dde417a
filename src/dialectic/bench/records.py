"""What a benchmark run stores: its specification, and one result per (arm, item)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from dialectic.bench.tasks import TaskName, is_task_name
from dialectic.core.answers import MatchMode, Method

Outcome = Literal["correct", "wrong", "unparsed", "truncated", "failed"]
"""``unparsed``: no answer could be found; ``truncated``: no answer, and a reply that counted was
cut off by the token limit; ``failed``: no answer because the provider failed on this item (its
calls kept failing or timed out, the request was refused, e.g. a debate prompt past the context
window, or the debate failed). All three are scored wrong, and counted apart from plain wrong
answers."""


MERGED_RUN_SEPARATOR = " + "
"""Joins the ids of the runs a merged table was drawn from into one run id."""


def merged_run_id(run_ids: Iterable[str]) -> str:
    """The id of a table merged from several runs: ``A + B``."""
    return MERGED_RUN_SEPARATOR.join(run_ids)


def merged_runs(run_id: str) -> list[str]:
    """The runs a (possibly merged) run id names, each once, in first-seen order."""
    return list(dict.fromkeys(part.strip() for part in run_id.split(MERGED_RUN_SEPARATOR) if part.strip()))


class RunSpec(BaseModel):
    """Everything that decides what a run computes; a resumed run is rebuilt from it."""

    id: str
    created_at: datetime
    task: TaskName
    task_options: dict[str, Any] = Field(default_factory=dict)
    """A reasoning-gym dataset's options (``--task-option key=value``)."""
    dataset: str | None = None
    n: int | None = None
    seed: int = 0
    operands: int = 6
    """The arithmetic task's difficulty (kept when ``difficulty`` is also stored, for older runs)."""
    difficulty: int | None = None
    """The level of a generated task (arithmetic: its operands); ``None`` for jsonl and older runs."""
    match: MatchMode | None = None
    arms: list[str]
    temperature: float
    max_tokens: int | None = None
    agents: list[dict[str, Any]]
    """The bench agents' configurations (camelCase, as in a config file)."""
    dialectic_config: dict[str, Any]
    config_dir: str
    fingerprint: str
    """Hash of the task's items: resuming on different questions is refused."""

    @field_validator("task")
    @classmethod
    def _known_task(cls, value: str) -> str:
        if not is_task_name(value):
            raise ValueError(f"unknown task '{value}'")
        return value

    def models(self) -> list[str]:
        return [f"{a.get('provider', '?')}/{a.get('model', '?')}" for a in self.agents]


class Reply(BaseModel):
    """One model reply and the answer found in it."""

    who: str
    """``greedy``, ``sample-2``, ``agent-3`` or, in the dialectic arm, the agent's id or ``judge``."""
    text: str
    answer: str | None
    method: Method
    finish_reason: str | None = None
    truncated: bool = False
    confidence: float | None = None
    """How sure the model was of this answer (0–1): the answer tokens' probability, else a stated
    confidence; ``None`` when neither is known. The adaptive arm's vote and the correction arm's ties use it."""
    trace_logprob: float | None = None
    """The mean log-probability of the reply's tokens, when the provider returns them: the confidence
    the ``confident`` arm filters replies by."""
    error: str | None = None
    """Why there is no reply: the provider failed or refused the request, the debate failed (the
    judge's reply), or the engine recorded a failed contribution."""
    score: float | None = None
    """The task's scorer's 0–1 for this reply's answer (tasks that bring a scorer); ``None`` elsewhere."""
    stated: float | None = None
    """The confidence the judge stated in its solution (0–1), for calibration; ``None`` for other replies."""

    @property
    def unparsed(self) -> bool:
        return self.answer is None and not self.truncated and self.error is None


class ItemResult(BaseModel):
    """One arm's work on one item: every reply by stage, the final answer and what it cost."""

    arm: str
    item_id: str
    index: int
    question: str
    truth: str
    match: MatchMode
    stages: list[str]
    """Names of the stages: ``greedy``, ``samples``, ``round 1``…, ``round 1 proposals``…"""
    rounds: list[list[Reply]]
    """Replies per stage, in agent (or sample) order; parallel to ``stages``."""
    judge: Reply | None = None
    final: str | None
    votes: dict[str, int] = Field(default_factory=dict)
    tie: bool = False
    outcome: Outcome
    score: float | None = None
    """The final answer's 0–1 from the task's scorer (tasks that bring one): 1 is ``correct``, anything
    between 0 and 1 is partial credit, reported apart."""
    calls: int
    input_tokens: int
    output_tokens: int
    wall_s: float

    @property
    def correct(self) -> bool:
        return self.outcome == "correct"

    def all_replies(self) -> list[Reply]:
        return [r for stage in self.rounds for r in stage] + ([self.judge] if self.judge else [])

    @property
    def failure(self) -> str | None:
        """Why a ``failed`` item has no answer: the deciding reply's error (the judge's, else the first)."""
        if self.outcome != "failed":
            return None
        deciding = [self.judge] if self.judge is not None else (self.rounds[-1] if self.rounds else [])
        return next((r.error for r in deciding if r.error is not None), None)
