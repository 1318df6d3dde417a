"""A deterministic fake model that ships in the library, for tests and offline demos.

It answers from a function of the request, or from a queue of prepared replies. With
neither, it writes a short, plausible reply derived from the request (what the call is
for and the first words it was asked), and for structured requests it builds a value
that satisfies the JSON schema. Usage is counted in words, so figures are stable.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass

from dialectic.core.domain import Usage
from dialectic.core.errors import ContextWindowExceeded
from dialectic.core.json_values import JsonObject, JsonValue
from dialectic.llm import scripted_debate
from dialectic.llm.base import (
    FINISH_LENGTH,
    FINISH_STOP,
    FINISH_TOOL_CALLS,
    Completion,
    CompletionRequest,
    Delta,
    ToolCall,
)
from dialectic.llm.json_text import loads_model_json


@dataclass(frozen=True)
class ScriptedReply:
    """A prepared reply. ``structured`` is returned as parsed output when a schema was asked for.

    ``tool_calls`` are the tools the scripted model asks for (the finish reason is then
    ``tool_calls``); they are returned only to a request that offered tools.
    """

    text: str = ""
    structured: JsonValue | None = None
    finish_reason: str = FINISH_STOP
    delay_s: float = 0.0
    tool_calls: tuple[ToolCall, ...] = ()


Script = str | ScriptedReply | Exception
Responder = Callable[[CompletionRequest], Script]


def count_words(text: str) -> int:
    return len(text.split())


def example_for_schema(schema: JsonObject, *, name: str = "value", seed: str = "") -> JsonValue:
    """A small value that satisfies ``schema`` (objects, arrays, strings, numbers, enums)."""
    defs = schema.get("$defs", {})
    return _example(schema, name, seed, defs)


def _example(schema: JsonObject, name: str, seed: str, defs: JsonObject) -> JsonValue:
    if "$ref" in schema:
        ref = schema["$ref"].rsplit("/", 1)[-1]
        return _example(defs.get(ref, {}), name, seed, defs)
    for combinator in ("anyOf", "oneOf", "allOf"):
        if combinator in schema:
            options = [s for s in schema[combinator] if s.get("type") != "null"] or schema[combinator]
            return _example(options[0], name, seed, defs)
    if "enum" in schema:
        options = schema["enum"]
        if all(isinstance(o, (int, float)) for o in options):  # the same high-but-not-top pick as for ranges
            return options[(len(options) - 1) * 85 // 100]
        return options[0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object":
        props: JsonObject = schema.get("properties", {})
        return {key: _example(sub, key, seed, defs) for key, sub in props.items()}
    if kind == "array":
        items = schema.get("items", {"type": "string"})
        count = max(1, int(schema.get("minItems", 1)))
        return [_example(items, name, f"{seed}{i}", defs) for i in range(count)]
    if kind in ("integer", "number"):
        low = schema.get("minimum", 0)
        high = schema.get("maximum", 100)
        value = low + (high - low) * 85 // 100 if isinstance(low, int) and isinstance(high, int) else low
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return False
    return f"Scripted {name.replace('_', ' ')}{(' ' + seed) if seed else ''}".strip()


WRITERS: dict[str, Callable[[str, str], str]] = {
    "proposal": scripted_debate.proposal,
    "critique": scripted_debate.critique,
    "refinement": scripted_debate.refinement,
}
"""The design debate's turns, written as a debate's (see :mod:`dialectic.llm.scripted_debate`), by purpose."""


def default_reply(request: CompletionRequest) -> ScriptedReply:
    """The reply used when no function or queue was given: deterministic in the request.

    A design debate's proposals, critiques, refinements, summaries and the judge's solution read like a
    small real debate (:mod:`dialectic.llm.scripted_debate`); any other request gets a short reply
    naming its purpose, or a value that satisfies its JSON schema."""
    purpose, _, role = (request.tag or "").partition(":")
    if request.json_schema is not None:
        value = example_for_schema(request.json_schema.schema, name=request.json_schema.name)
        if isinstance(value, dict) and "design debate" in request.last_user:
            written = scripted_debate.solution_fields(request.json_schema.name, request.last_user)
            value.update({key: text for key, text in written.items() if key in value})
        return ScriptedReply(text=json.dumps(value), structured=value)
    writer = WRITERS.get(purpose)
    if writer is not None and "design debate" in request.last_user:
        return ScriptedReply(text=writer(role, request.last_user))
    notes = scripted_debate.judge_summary(request.last_user) if purpose == "judge-summary" else None
    if notes is not None:
        return ScriptedReply(text=notes)
    digest = hashlib.sha256(request.last_user.encode("utf-8")).hexdigest()[:8]
    purpose = request.tag or "reply"
    first_line = next(
        (line.strip() for line in request.last_user.splitlines() if line.strip() and not line.startswith("#")), ""
    )
    text = (
        f"[{purpose}] Scripted answer {digest}.\n"
        f"Considering: {first_line[:120]}\n"
        "- Keep the design simple and observable.\n"
        "- Bound every queue and retry; measure before optimising."
    )
    return ScriptedReply(text=text)


class ScriptedProvider:
    """An :class:`~dialectic.llm.base.LLMProvider` whose replies are scripted.

    ``responder`` is called with every request; ``replies`` is consumed first if given.
    An ``Exception`` in either is raised instead of answering (for fault injection).
    Every request is recorded in ``calls``. :meth:`stream` yields the reply a word at a time,
    ``chunk_delay_s`` apart (0: all at once), so a watcher sees it arrive as from a real model.

    Its tokens are words (usage and :meth:`count_tokens` count them so). With ``window``, the model
    has a context window of that many: a prompt of ``window`` words or more is refused with
    :class:`~dialectic.core.errors.ContextWindowExceeded` (naming the window and the prompt's size unless
    ``names_sizes=False``) and recorded in ``refused``; :meth:`context_window` tells the window unless
    ``tells_window=False`` (a server that does not say).
    """

    supports_tools = True

    def __init__(
        self,
        responder: Responder | None = None,
        replies: Iterable[Script] | None = None,
        *,
        latency_s: float = 0.0,
        model: str = "scripted-1",
        name: str = "scripted",
        chunk_delay_s: float = 0.0,
        window: int | None = None,
        tells_window: bool = True,
        names_sizes: bool = True,
    ) -> None:
        self.name = name
        self.window = window
        self.tells_window = tells_window
        self.names_sizes = names_sizes
        self.refused: list[CompletionRequest] = []
        self.chunk_delay_s = chunk_delay_s
        self.model = model
        self._responder = responder
        self._queue: deque[Script] = deque(replies or [])
        self._latency_s = latency_s
        self.calls: list[CompletionRequest] = []

    def _next_script(self, request: CompletionRequest) -> Script:
        if self._queue:
            return self._queue.popleft()
        if self._responder is not None:
            return self._responder(request)
        return default_reply(request)

    async def context_window(self, model: str) -> int | None:
        """The window given at construction, in words; ``None`` without one or with ``tells_window=False``."""
        return self.window if self.tells_window else None

    def count_tokens(self, request: CompletionRequest) -> int:
        """The prompt's words: this model's tokens."""
        return sum(count_words(m.content) for m in request.messages)

    def _refuse_if_too_long(self, request: CompletionRequest) -> None:
        if self.window is None:
            return
        used = self.count_tokens(request)
        if used < self.window:
            return
        self.refused.append(request)
        raise ContextWindowExceeded(
            f"{self.name}: the request exceeds the available context size",
            provider=self.name,
            status_code=400,
            window=self.window if self.names_sizes else None,
            prompt_tokens=used if self.names_sizes else None,
        )

    def _reply_room(self, request: CompletionRequest) -> int | None:
        """Words the reply may have: ``max_tokens``, and what the window leaves after the prompt."""
        if self.window is None:
            return request.max_tokens
        room = self.window - self.count_tokens(request)
        return room if request.max_tokens is None else min(room, request.max_tokens)

    async def complete(self, request: CompletionRequest) -> Completion:
        clock = asyncio.get_running_loop().time  # the loop's clock, so a virtual-time test measures virtual time
        started = clock()
        self._refuse_if_too_long(request)
        self.calls.append(request)
        script = self._next_script(request)
        if isinstance(script, Exception):
            raise script
        reply = script if isinstance(script, ScriptedReply) else ScriptedReply(text=script)
        delay = reply.delay_s or self._latency_s
        if delay:
            await asyncio.sleep(delay)
        text, finish = reply.text, reply.finish_reason
        limit = self._reply_room(request)
        if limit is not None and count_words(text) > limit:
            text = " ".join(text.split()[:limit])
            finish = FINISH_LENGTH
        tool_calls = reply.tool_calls if request.tools else ()
        if tool_calls:
            finish = FINISH_TOOL_CALLS
        structured = reply.structured
        if structured is None and request.json_schema is not None and finish == FINISH_STOP:
            try:
                structured = loads_model_json(text)
            except ValueError:
                structured = None
        prompt_words = sum(count_words(m.content) for m in request.messages)
        out_words = count_words(text)
        return Completion(
            text=text,
            model=request.model or self.model,
            usage=Usage(input_tokens=prompt_words, output_tokens=out_words, total_tokens=prompt_words + out_words),
            latency_ms=round((clock() - started) * 1000),
            finish_reason=finish,
            structured=structured,
            tool_calls=tool_calls,
        )

    async def stream(self, request: CompletionRequest) -> AsyncIterator[Delta]:
        completion = await self.complete(request)
        words = completion.text.split(" ")
        for i, word in enumerate(words):
            if i:  # a turn of the event loop between chunks at least, as over a network
                await asyncio.sleep(self.chunk_delay_s)
            yield Delta(text=word if i == 0 else " " + word)
        yield Delta(finish_reason=completion.finish_reason, usage=completion.usage, model=completion.model)

    async def aclose(self) -> None:
        return None
