"""The content-addressed call cache's key and value (issue 24, part 1).

A reply is filed under a key that hashes everything that decides it: the provider, the endpoint,
the model, the messages, the tools, the schema, the sampling parameters, and a draw index, so the
k-th of several identical requests in one run (the samples of a self-consistency run) is an entry
of its own. The value is the completion and its usage, as JSON text: the store keeps it opaque
(:class:`~dialectic.store.base.CallCache`), and :func:`dump_completion` / :func:`parse_completion`
turn it back into a :class:`~dialectic.llm.base.Completion`.

What does not decide a reply stays out of the key: the per-call timeout and the tag (a label for
logs and the scripted model).

In a debate the draw index counts per *seat* (the participant's id, beside the request's content):
three identical seats (same model, role and prompt) send identical requests, and a count shared
between them would serve one seat's reply to another on replay, in whatever order the calls happen
to arrive. So a seat's key names the seat, and its k-th identical request is its own k-th draw.
Keys without a seat (the bench's samples, :func:`cache_key` without ``seat``) are as before. A cache
filed before seats were counted (one draw count shared by every seat) is still read: a seat's key
that is not filed falls back to the key the shared count gives (:attr:`ReplyCache.legacy_hits`), so
an older recording replays with no call made, though identical seats may then trade replies as
they did when it was recorded.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from collections import Counter
from typing import Protocol

from dialectic.core.domain import Usage
from dialectic.core.errors import StoreError
from dialectic.core.json_values import JsonObject, JsonValue
from dialectic.llm.base import Completion, CompletionRequest, Message, TokenLogprob, ToolCall

KEY_VERSION = 1
"""Part of every key: a change to what the key covers files replies under new keys."""


def _tool_call(call: ToolCall) -> JsonObject:
    return {"id": call.id, "name": call.name, "arguments": call.arguments, "arguments_text": call.arguments_text}


def _message(message: Message) -> JsonObject:
    return {
        "role": message.role,
        "content": message.content,
        "tool_calls": [_tool_call(c) for c in message.tool_calls],
        "tool_call_id": message.tool_call_id,
    }


def request_inputs(request: CompletionRequest, *, provider: str, endpoint: str) -> JsonObject:
    """Everything about ``request`` on ``provider`` at ``endpoint`` that decides its reply."""
    schema = request.json_schema
    return {
        "version": KEY_VERSION,
        "provider": provider,
        "endpoint": endpoint,
        "model": request.model,
        "messages": [_message(m) for m in request.messages],
        "tools": [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in request.tools],
        "schema": None if schema is None else {"name": schema.name, "schema": schema.schema},
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "logprobs": request.logprobs,
    }


def _digest(value: JsonValue) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def base_key(request: CompletionRequest, *, provider: str, endpoint: str) -> str:
    """The key of ``request`` before its draw index: identical requests share it."""
    return _digest(request_inputs(request, provider=provider, endpoint=endpoint))


def cache_key(
    request: CompletionRequest, *, provider: str, endpoint: str, draw: int = 0, seat: str | None = None
) -> str:
    """The key ``request``'s reply is filed under: the ``draw``-th (from 0) identical request of a run, of
    ``seat`` when given (see the module's docstring)."""
    return _drawn(base_key(request, provider=provider, endpoint=endpoint), draw, seat)


def _drawn(base: str, draw: int, seat: str | None = None) -> str:
    """The key of the ``draw``-th request whose :func:`base_key` is ``base`` (of ``seat``, when given)."""
    if draw < 0:
        raise ValueError(f"a draw index is 0 or more, not {draw}")
    if seat is None:
        return _digest({"request": base, "draw": draw})
    return _digest({"request": base, "seat": seat, "draw": draw})


class DrawCounter:
    """Numbers identical requests within one run: the first of a base key is draw 0, the next draw 1, ….

    With a ``seat``, the count is the seat's own (see the module's docstring). A replay that sends the
    same requests in the same order so meets sample k under entry k. Safe to share between the tasks
    and threads of one run.
    """

    def __init__(self) -> None:
        self._seen: Counter[str] = Counter()
        self._seats: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()

    def next_key(self, request: CompletionRequest, *, provider: str, endpoint: str) -> str:
        """The key of this occurrence of ``request`` (each call counts one more draw of it)."""
        return self.next_keys(request, provider=provider, endpoint=endpoint)[0]

    def next_keys(
        self, request: CompletionRequest, *, provider: str, endpoint: str, seat: str | None = None
    ) -> tuple[str, str]:
        """The key of this occurrence of ``request`` by ``seat``, and the key the count shared by every
        seat gives it (the one a cache filed before seats were counted has it under); the same key twice
        without a seat."""
        base = base_key(request, provider=provider, endpoint=endpoint)
        with self._lock:
            shared = self._seen[base]
            self._seen[base] = shared + 1
            own = shared
            if seat is not None:
                own = self._seats[(seat, base)]
                self._seats[(seat, base)] = own + 1
        legacy = _drawn(base, shared)  # what cache_key gives, without digesting the request a second time
        return (legacy if seat is None else _drawn(base, own, seat)), legacy


def dump_completion(completion: Completion) -> str:
    """``completion`` and its usage as the cache's JSON value."""
    return json.dumps(
        {
            "text": completion.text,
            "model": completion.model,
            "usage": completion.usage.model_dump(),
            "latency_ms": completion.latency_ms,
            "finish_reason": completion.finish_reason,
            "structured": completion.structured,
            "truncated": completion.truncated,
            "attempts": completion.attempts,
            "tool_calls": [_tool_call(c) for c in completion.tool_calls],
            "served_model": completion.served_model,
            "logprobs": [[t.token, t.logprob] for t in completion.logprobs],
        },
        ensure_ascii=False,
    )


def parse_completion(value: str) -> Completion:
    """The completion :func:`dump_completion` wrote; ``ValueError`` when ``value`` is not one."""
    try:
        data = json.loads(value)
        return Completion(
            text=str(data["text"]),
            model=str(data["model"]),
            usage=Usage.model_validate(data.get("usage") or {}),
            latency_ms=int(data.get("latency_ms", 0)),
            finish_reason=data.get("finish_reason"),
            structured=data.get("structured"),
            truncated=bool(data.get("truncated", False)),
            attempts=int(data.get("attempts", 1)),
            tool_calls=tuple(
                ToolCall(
                    id=str(c["id"]),
                    name=str(c["name"]),
                    arguments=dict(c.get("arguments") or {}),
                    arguments_text=str(c.get("arguments_text", "")),
                )
                for c in data.get("tool_calls") or ()
            ),
            served_model=data.get("served_model"),
            logprobs=tuple(TokenLogprob(str(t), float(p)) for t, p in data.get("logprobs") or ()),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"not a cached completion: {exc}") from exc


class _Tally:
    """Hits and misses, counted across threads."""

    def __init__(self) -> None:
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def count(self, *, hit: bool) -> None:
        with self._lock:
            if hit:
                self.hits += 1
            else:
                self.misses += 1


class _Shared:
    """Counts shared by every view of one cache, across threads."""

    def __init__(self) -> None:
        self.legacy_hits = 0
        self._lock = threading.Lock()

    def count_legacy(self) -> None:
        with self._lock:
            self.legacy_hits += 1


class CallKeeper(Protocol):
    """Where replies are filed: a store that keeps a call cache (:class:`~dialectic.store.base.CallCache`)."""

    def cached_call(self, key: str) -> str | None: ...

    def cache_call(self, key: str, value: str) -> None: ...


class ReplyCache:
    """One run's view of the call cache, for :class:`~dialectic.llm.client.LLMClient`.

    Every reply the client receives is filed under its key (``keeper`` may refuse: a store error
    only means the reply is not kept). With ``read``, a request whose key is filed is answered from
    the cache without reaching the provider; without it (a new debate's default: a user who asks
    again expects fresh samples) nothing is served. ``hits`` and ``misses`` count the requests
    answered from the cache and those sent. Share one between the clients of a run: its draw
    counter numbers identical requests across them.
    """

    def __init__(self, keeper: CallKeeper, *, endpoint: str = "", read: bool = False, seat: str | None = None) -> None:
        self.keeper = keeper
        self.endpoint = endpoint
        """The provider endpoint this view's keys name (see :meth:`at`)."""
        self.seat = seat
        """The participant whose requests this view files: its draws are counted apart (see the module's docstring)."""
        self.read = read
        self._tally = _Tally()
        self._draws = DrawCounter()
        self._legacy: dict[str, str] = {}
        self._legacy_lock = threading.Lock()
        self._shared = _Shared()

    @property
    def hits(self) -> int:
        """Requests answered from the cache (by this cache and every view :meth:`at` made of it)."""
        return self._tally.hits

    @property
    def misses(self) -> int:
        """Requests the cache did not answer (sent to the provider)."""
        return self._tally.misses

    @property
    def legacy_hits(self) -> int:
        """Requests answered under the key of a cache filed before seats were counted (see the module's docstring)."""
        return self._shared.legacy_hits

    def at(self, endpoint: str, seat: str | None = None) -> ReplyCache:
        """This cache as a client of ``endpoint`` uses it for ``seat``: its keys name that endpoint and that
        seat; the keeper, the reading, the draw counter and the hit and miss counts are shared with this one."""
        view = copy.copy(self)
        view.endpoint = endpoint
        view.seat = seat
        return view

    def key(self, request: CompletionRequest, provider: str) -> str:
        """The key of this occurrence of ``request`` to ``provider`` (counts one more draw of it)."""
        key, legacy = self._draws.next_keys(request, provider=provider, endpoint=self.endpoint, seat=self.seat)
        if legacy != key and self.read:
            with self._legacy_lock:
                self._legacy[key] = legacy
        return key

    def lookup(self, key: str) -> Completion | None:
        """The reply filed under ``key`` when reading is on, else ``None`` (counted as a miss); a seat's key
        not filed falls back to the key a cache filed before seats were counted has it under."""
        found: Completion | None = None
        if self.read:
            found = self._filed(key)
            with self._legacy_lock:
                legacy = self._legacy.pop(key, None)
            if found is None and legacy is not None:
                found = self._filed(legacy)
                if found is not None:
                    self._shared.count_legacy()
        self._tally.count(hit=found is not None)
        return found

    def _filed(self, key: str) -> Completion | None:
        try:
            value = self.keeper.cached_call(key)
            return parse_completion(value) if value is not None else None
        except (StoreError, ValueError):
            return None  # an unreadable entry is a miss: the provider answers again

    def keep(self, key: str, completion: Completion) -> None:
        """File ``completion`` under ``key``; a store that refuses only leaves it out of the cache."""
        try:
            self.keeper.cache_call(key, dump_completion(completion))
        except StoreError:
            pass
