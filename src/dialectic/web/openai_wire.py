"""OpenAI's Chat Completions shapes, as ``dialectic serve`` reads and writes them: pure functions, no I/O.

A request is read leniently where clients differ (extra sampling parameters are ignored) and
strictly where an answer could not be what the client asked for (several choices, log
probabilities, a JSON reply format, a forced tool call: refused with 422 naming the parameter).
What :mod:`dialectic.web.openai_api` does with the rest is documented in ``docs/web.md``.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dialectic.core.domain import DebateState
from dialectic.core.events import (
    AgentCompleted,
    CallRetrying,
    DebateStarted,
    Event,
    PhaseStarted,
    RoundBegan,
    SynthesisStarted,
    Warning,
)
from dialectic.core.ledger import LedgerTotals
from dialectic.web.errors import ApiError
from dialectic.web.validation import encodable

MODEL_PREFIX = "dialectic/"
"""Every model the server offers is ``dialectic/<format>`` or ``dialectic/<name>``."""
MAX_MESSAGES = 256
"""The most messages a request may carry (the problem's size is held to ``limits.maxProblemChars`` too)."""
CONTEXT_HEADING = "## Earlier in the conversation (context for the problem above)"
CHUNK_CHARS = 200
"""About how many characters of the answer one streamed delta carries (cut at a space)."""

Role = Literal["system", "developer", "user", "assistant", "tool", "function"]


class Lenient(BaseModel):
    """OpenAI's bodies: snake_case, and parameters this server does not use are ignored, not refused."""

    model_config = ConfigDict(extra="ignore")

    @field_validator("*", mode="before")
    @classmethod
    def _utf8_text(cls, value: Any) -> Any:
        return encodable(value)


class ContentPart(Lenient):
    type: str = Field(max_length=64)
    text: str | None = None


class ChatMessage(Lenient):
    role: Role
    content: str | list[ContentPart] | None = None


class StreamOptions(Lenient):
    include_usage: bool = False


class ChatRequest(Lenient):
    """``POST /v1/chat/completions``."""

    model: str = Field(min_length=1, max_length=200)
    messages: list[ChatMessage] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    stream_options: StreamOptions | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    n: int | None = Field(default=None, ge=1)
    logprobs: bool | None = None
    top_logprobs: int | None = None
    response_format: dict[str, Any] | None = None
    tool_choice: str | dict[str, Any] | None = None

    @property
    def reply_limit(self) -> int | None:
        """The most tokens a reply may have: ``max_completion_tokens``, else ``max_tokens``."""
        return self.max_completion_tokens if self.max_completion_tokens is not None else self.max_tokens

    @property
    def usage_wanted(self) -> bool:
        return self.stream_options is not None and self.stream_options.include_usage


def refusals(body: ChatRequest) -> None:
    """A 422 naming the first parameter whose answer a debate cannot give."""
    refused: list[tuple[str, str]] = []
    if body.n is not None and body.n != 1:
        refused.append(("n", "n: a debate gives one answer; send the request again for another (n must be 1)"))
    if body.logprobs or body.top_logprobs:
        refused.append(("logprobs", "logprobs: a debate's answer has no token log probabilities"))
    if body.response_format is not None and body.response_format.get("type", "text") != "text":
        refused.append(("response_format", 'response_format: a debate answers in text only ({"type": "text"})'))
    if body.tool_choice not in (None, "auto", "none"):
        refused.append(("tool_choice", "tool_choice: a debate calls none of the client's tools"))
    if refused:
        param, message = refused[0]
        raise ApiError(422, "unsupported_parameter", message, {param: message})


def message_text(message: ChatMessage, index: int) -> str:
    """A message's text: its content, or its text parts joined; any other part (an image, audio) is refused."""
    if message.content is None:
        return ""
    if isinstance(message.content, str):
        return message.content
    texts: list[str] = []
    for part in message.content:
        if part.type not in ("text", "input_text", "output_text") or part.text is None:
            where = f"messages[{index}].content"
            raise ApiError(
                422,
                "unsupported_content",
                f"{where}: only text parts are read (not '{part.type}')",
                {where: f"only text parts are read (not '{part.type}')"},
            )
        texts.append(part.text)
    return "\n".join(texts)


def problem_of(messages: list[ChatMessage]) -> str:
    """The problem a conversation asks: the last message (the user's), with the earlier ones after it as context."""
    last = messages[-1]
    if last.role != "user":
        where = f"messages[{len(messages) - 1}]"
        message = f"{where}: the last message must be the user's (it is the problem to debate), not '{last.role}'"
        raise ApiError(422, "invalid_request", message, {"messages": message})
    problem = message_text(last, len(messages) - 1).strip()
    earlier = [(m.role, message_text(m, i).strip()) for i, m in enumerate(messages[:-1])]
    context = [f"**{role}:** {text}" for role, text in earlier if text]
    if not context:
        return problem
    return "\n\n".join([problem, CONTEXT_HEADING, *context])


def answer_of(state: DebateState) -> str:
    """What a completed debate answers: the tally's answer when the adaptive vote decided (or the trajectory's
    winner when the correction-biased critique did), else the solution."""
    solution = state.final_solution
    tally = state.answer_tally
    if solution is not None and solution.synthesized_by == "vote" and tally is not None and tally.answer:
        return tally.answer
    decided = state.correction
    if solution is not None and solution.synthesized_by == "correction" and decided is not None and decided.winner:
        return decided.winner
    return solution.description if solution is not None else ""


def usage_of(totals: LedgerTotals) -> dict[str, Any]:
    """The debate's total, every call of it, in OpenAI's ``usage`` shape."""
    return {
        "prompt_tokens": totals.input_tokens,
        "completion_tokens": totals.output_tokens,
        "total_tokens": totals.total_tokens,
        "prompt_tokens_details": {"cached_tokens": totals.cached_input_tokens},
    }


def completion(debate_id: str, model: str, created: int, content: str, totals: LedgerTotals) -> dict[str, Any]:
    """A ``chat.completion`` whose ``id`` is the debate's."""
    return {
        "id": debate_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": usage_of(totals),
        "system_fingerprint": None,
    }


def chunk(
    debate_id: str,
    model: str,
    created: int,
    delta: dict[str, Any] | None = None,
    *,
    finish: str | None = None,
    usage: LedgerTotals | None = None,
) -> bytes:
    """One ``chat.completion.chunk`` as an SSE ``data:`` line; with ``usage``, the closing chunk without choices."""
    body: dict[str, Any] = {"id": debate_id, "object": "chat.completion.chunk", "created": created, "model": model}
    if usage is not None:
        body["choices"] = []
        body["usage"] = usage_of(usage)
    else:
        body["choices"] = [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}]
    return data_line(body)


def data_line(body: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n".encode()


DONE = b"data: [DONE]\n\n"


def comment(text: str) -> bytes:
    """An SSE comment: clients skip it, and it keeps a connection that times out on silence alive."""
    return f": {' '.join(text.split())}\n\n".encode()


def pieces(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """``text`` in deltas of about ``size`` characters, cut after a space; joined they are ``text``."""
    out: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            space = text.rfind(" ", start + 1, end)
            end = space + 1 if space > start else end
        out.append(text[start:end])
        start = end
    return out


def models_list(ids: list[str], created: int) -> dict[str, Any]:
    return {"object": "list", "data": [model_entry(i, created) for i in ids]}


def model_entry(model_id: str, created: int) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": created, "owned_by": "dialectic"}


def progress(event: Event) -> str | None:
    """A line saying what the debate is doing, sent to a streaming client as an SSE comment."""
    match event:
        case DebateStarted():
            return f"debate {event.debate_id}: {len(event.agents)} agents, format {event.format}"
        case RoundBegan():
            return f"round {event.round_number} of {event.total_rounds}"
        case PhaseStarted():
            return f"round {event.round_number}: {event.phase} ({event.expected} calls)"
        case AgentCompleted():
            return f"{event.agent_name}: {event.activity} {'done' if event.ok else 'failed'}"
        case CallRetrying():
            return f"{event.agent_name}: {event.activity}: retrying ({event.error})"
        case SynthesisStarted():
            return "the judge is writing the answer"
        case Warning():
            return f"warning: {event.message}"
    return None
