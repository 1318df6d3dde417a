"""OpenAI's Responses API shapes (``POST /v1/responses``), read as a chat request and written as a response.

A request's ``instructions`` and ``input`` (a text, or message items) become the chat messages
:mod:`dialectic.web.openai_wire` reads (the last user message is the problem, the rest its
context); ``max_output_tokens`` and ``temperature`` are read as a chat request's. A debate keeps
no conversation on the server, so ``previous_response_id`` is refused: send the earlier turns in
``input``. The answer is one ``message`` output item; streamed, it is the event sequence OpenAI
sends for a text reply (``response.created`` … ``response.output_text.delta`` …
``response.completed``), with the debate's progress as SSE comments before the answer.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field, ValidationError

from dialectic.core.ledger import LedgerTotals
from dialectic.loading.config import describe_validation_error
from dialectic.web.errors import ApiError
from dialectic.web.openai_wire import MAX_MESSAGES, ChatMessage, ChatRequest, ContentPart, Lenient, pieces


class InputItem(Lenient):
    """A message item of ``input`` (``{"role": …, "content": …}``, with or without ``"type": "message"``)."""

    type: str = Field(default="message", max_length=64)
    role: str | None = Field(default=None, max_length=64)
    content: str | list[ContentPart] | None = None


class TextFormat(Lenient):
    type: str = Field(default="text", max_length=64)


class TextSettings(Lenient):
    format: TextFormat | None = None


class ResponsesRequest(Lenient):
    """``POST /v1/responses``."""

    model: str = Field(min_length=1, max_length=200)
    input: str | list[InputItem] = Field(max_length=MAX_MESSAGES)
    instructions: str | None = None
    stream: bool = False
    max_output_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    previous_response_id: str | None = None
    text: TextSettings | None = None
    tool_choice: str | dict[str, Any] | None = None


def as_chat(body: ResponsesRequest) -> ChatRequest:
    """``body`` as the chat request it amounts to (refused parameters are 422s naming them)."""
    if body.previous_response_id is not None:
        message = "previous_response_id: a debate keeps no conversation on the server; send the earlier turns in input"
        raise ApiError(422, "unsupported_parameter", message, {"previous_response_id": message})
    if not body.input:
        message = "input: give the problem, as text or as messages (the last one the user's)"
        raise ApiError(422, "invalid_request", message, {"input": message})
    messages: list[ChatMessage] = []
    if body.instructions:
        messages.append(ChatMessage(role="system", content=body.instructions))
    if isinstance(body.input, str):
        messages.append(ChatMessage(role="user", content=body.input))
    else:
        for index, item in enumerate(body.input):
            if item.type != "message" or item.role not in ("user", "assistant", "system", "developer"):
                where = f"input[{index}]"
                message = (
                    f"{where}: only message items are read (user, assistant, system, developer), not '{item.type}'"
                )
                raise ApiError(422, "unsupported_content", message, {where: message})
            messages.append(ChatMessage.model_validate({"role": item.role, "content": item.content}))
    format_type = body.text.format.type if body.text is not None and body.text.format is not None else None
    try:
        return ChatRequest.model_validate(
            {
                "model": body.model,
                "messages": messages,
                "stream": body.stream,
                "max_completion_tokens": body.max_output_tokens,
                "temperature": body.temperature,
                "tool_choice": body.tool_choice,
                "response_format": {"type": format_type} if format_type is not None else None,
            }
        )
    except ValidationError as exc:  # an empty input: no message to debate
        message = f"input: {describe_validation_error(exc)}"
        raise ApiError(422, "invalid_request", message, {"input": message}) from None


def response_usage(totals: LedgerTotals) -> dict[str, Any]:
    return {
        "input_tokens": totals.input_tokens,
        "input_tokens_details": {"cached_tokens": totals.cached_input_tokens},
        "output_tokens": totals.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": totals.total_tokens,
    }


def message_item(debate_id: str, text: str | None) -> dict[str, Any]:
    """The output's one message (``text`` ``None``: still being written)."""
    content = [] if text is None else [output_text(text)]
    status = "in_progress" if text is None else "completed"
    return {"type": "message", "id": f"msg_{debate_id}", "status": status, "role": "assistant", "content": content}


def output_text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": []}


def response_object(
    debate_id: str, model: str, created: int, text: str | None, totals: LedgerTotals | None, status: str = "completed"
) -> dict[str, Any]:
    """A ``response`` whose ``id`` is the debate's."""
    return {
        "id": debate_id,
        "object": "response",
        "created_at": created,
        "status": status,
        "model": model,
        "output": [] if text is None else [message_item(debate_id, text)],
        "usage": response_usage(totals) if totals is not None else None,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "parallel_tool_calls": False,
        "temperature": None,
        "tool_choice": "auto",
        "tools": [],
        "top_p": None,
        "text": {"format": {"type": "text"}},
    }


class ResponseEvents:
    """The events of a streamed response, numbered in order (``sequence_number``)."""

    def __init__(self, debate_id: str, model: str, created: int) -> None:
        self.debate_id, self.model, self.created = debate_id, model, created
        self._number = 0

    def _event(self, kind: str, **fields: Any) -> bytes:
        body = {"type": kind, "sequence_number": self._number, **fields}
        self._number += 1
        return f"event: {kind}\ndata: {json.dumps(body, ensure_ascii=False)}\n\n".encode()

    def opening(self) -> bytes:
        running = response_object(self.debate_id, self.model, self.created, None, None, status="in_progress")
        return self._event("response.created", response=running) + self._event("response.in_progress", response=running)

    def answer(self, text: str, totals: LedgerTotals) -> bytes:
        item_id = f"msg_{self.debate_id}"
        at = {"item_id": item_id, "output_index": 0, "content_index": 0}
        parts = [
            self._event("response.output_item.added", output_index=0, item=message_item(self.debate_id, None)),
            self._event("response.content_part.added", **at, part=output_text("")),
            *(self._event("response.output_text.delta", **at, delta=piece, logprobs=[]) for piece in pieces(text)),
            self._event("response.output_text.done", **at, text=text, logprobs=[]),
            self._event("response.content_part.done", **at, part=output_text(text)),
            self._event("response.output_item.done", output_index=0, item=message_item(self.debate_id, text)),
            self._event(
                "response.completed", response=response_object(self.debate_id, self.model, self.created, text, totals)
            ),
        ]
        return b"".join(parts)

    def failed(self, message: str, code: str) -> bytes:
        """An ``error`` event (the SDKs raise it as an API error)."""
        return self._event("error", code=code, message=message, param=None, error={"message": message, "code": code})
