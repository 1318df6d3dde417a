"""Context windows, provider-neutral: how large a model's window is, and how many tokens a prompt takes.

Two optional provider methods carry what a provider knows; a provider without them still works:

* ``async def context_window(self, model: str) -> int | None``: the tokens one request to
  ``model`` may hold (prompt and reply together), or ``None`` when the provider cannot say.
  The OpenAI adapter asks the server (llama-server's ``/props``, a ``/models`` entry, a table of
  hosted models); the local provider answers with its loaded model's ``n_ctx``.
* ``def count_tokens(self, request: CompletionRequest) -> int | None``: the prompt's tokens as
  the model's own tokenizer counts them, or ``None`` when no tokenizer is at hand.

:func:`learn_window` and :func:`count_prompt` call them through ``getattr`` and never raise:
a provider that fails to answer is one that did not say. Without a tokenizer a prompt is
estimated at :data:`CHARS_PER_TOKEN` characters a token, on purpose fewer than the four of
English prose with today's tokenizers, so an estimate errs towards a prompt being larger than
it is (shrinking a prompt early costs less than a refusal).
"""

from __future__ import annotations

import inspect
import json
import logging
import math
from dataclasses import dataclass

from dialectic.llm.base import CompletionRequest, LLMProvider, Message

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 3
"""Characters per token of an estimate: conservative (English prose is about four with BPE tokenizers)."""
MESSAGE_OVERHEAD_TOKENS = 4
"""Tokens a chat template adds around each message (its role markers), in an estimate."""


@dataclass(frozen=True)
class PromptCount:
    """A prompt's size in tokens, and whether the model's tokenizer counted it (else: an estimate)."""

    tokens: int
    exact: bool = False


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` by :data:`CHARS_PER_TOKEN` (conservative; see the module's docstring)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_message(message: Message) -> int:
    calls = sum(len(call.name) + len(call.arguments_text or json.dumps(call.arguments)) for call in message.tool_calls)
    return math.ceil((len(message.content) + calls) / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS


def estimate_prompt(request: CompletionRequest) -> int:
    """The estimated tokens of everything a request sends the model: its messages and the tools it offers."""
    tools = sum(len(t.name) + len(t.description) + len(json.dumps(t.parameters)) for t in request.tools)
    return sum(estimate_message(m) for m in request.messages) + math.ceil(tools / CHARS_PER_TOKEN)


def count_prompt(provider: LLMProvider, request: CompletionRequest) -> PromptCount:
    """The prompt's tokens by the provider's tokenizer (its ``count_tokens``), else an estimate."""
    counter = getattr(provider, "count_tokens", None)
    if callable(counter):
        try:
            counted = counter(request)
        except Exception:  # a tokenizer that fails is one that is not at hand
            log.debug("count_tokens failed on %s", getattr(provider, "name", provider), exc_info=True)
            counted = None
        if isinstance(counted, int) and not isinstance(counted, bool) and counted >= 0:
            return PromptCount(counted, exact=True)
    return PromptCount(estimate_prompt(request))


async def learn_window(provider: LLMProvider, model: str) -> int | None:
    """The context window the provider says ``model`` has (its ``context_window``), or ``None``.

    ``None`` when the provider has no such method, cannot say, answers something that is not a
    positive number of tokens, or fails: never raises (except on cancellation).
    """
    ask = getattr(provider, "context_window", None)
    if not callable(ask):
        return None
    try:
        answer = ask(model)
        if inspect.isawaitable(answer):
            answer = await answer
    except Exception:
        log.debug("context_window failed on %s", getattr(provider, "name", provider), exc_info=True)
        return None
    if isinstance(answer, int) and not isinstance(answer, bool) and answer > 0:
        return answer
    return None
