"""The content-addressed call cache: its key, its value, and the store's table (issue 24, part 1)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dialectic.core.domain import Usage
from dialectic.core.errors import StoreError
from dialectic.engine.lease import LeasedStore
from dialectic.llm.base import (
    Completion,
    CompletionRequest,
    Delta,
    JsonSchema,
    Message,
    TokenLogprob,
    ToolCall,
    ToolSpec,
)
from dialectic.llm.call_cache import DrawCounter, ReplyCache, cache_key, dump_completion, parse_completion
from dialectic.llm.client import LLMClient
from dialectic.store import AbsentStore, CallCache, DebateStore, MemoryStore, SqliteStore

ENDPOINT = "openai|http://127.0.0.1:8080/v1"

REQUEST = CompletionRequest(
    messages=(Message("system", "You are terse."), Message("user", "Is P = NP?")),
    model="qwen",
    temperature=0.7,
    max_tokens=256,
    tag="proposal:architect",
)


def key(
    request: CompletionRequest = REQUEST, *, provider: str = "openai", endpoint: str = ENDPOINT, draw: int = 0
) -> str:
    return cache_key(request, provider=provider, endpoint=endpoint, draw=draw)


def test_the_same_inputs_give_the_same_key() -> None:
    assert key() == key(CompletionRequest(messages=REQUEST.messages, model="qwen", temperature=0.7, max_tokens=256))


@pytest.mark.parametrize(
    "changed",
    [
        {"provider": "anthropic"},
        {"endpoint": "openai|http://127.0.0.1:9090/v1"},
        {"request": REQUEST.with_changes(model="llama")},
        {
            "request": REQUEST.with_changes(
                messages=(Message("system", "You are terse."), Message("user", "Is P != NP?"))
            )
        },
        {"request": REQUEST.with_changes(messages=(Message("system", "You are verbose."), *REQUEST.conversation))},
        {"request": REQUEST.with_changes(temperature=0.0)},
        {"request": REQUEST.with_changes(temperature=None)},
        {"request": REQUEST.with_changes(max_tokens=512)},
        {"request": REQUEST.with_changes(json_schema=JsonSchema("answer", {"type": "object"}))},
        {"request": REQUEST.with_changes(tools=(ToolSpec("read", "read a file", {"type": "object"}),))},
        {"request": REQUEST.with_changes(logprobs=True)},
        {
            "request": REQUEST.with_changes(
                messages=(*REQUEST.messages, Message("assistant", "", tool_calls=(ToolCall("c1", "read", {"p": 1}),)))
            )
        },
        {"draw": 1},
    ],
)
def test_each_input_that_decides_a_reply_changes_the_key(changed: dict[str, object]) -> None:
    assert key(**changed) != key()  # type: ignore[arg-type]


def test_the_timeout_and_the_tag_do_not_change_the_key() -> None:
    assert key(REQUEST.with_changes(timeout_s=5.0, tag="critique:skeptic")) == key()


def test_a_negative_draw_is_refused() -> None:
    with pytest.raises(ValueError, match="draw"):
        key(draw=-1)


def test_identical_requests_in_a_run_are_separate_draws() -> None:
    counter = DrawCounter()
    first = counter.next_key(REQUEST, provider="openai", endpoint=ENDPOINT)
    second = counter.next_key(REQUEST, provider="openai", endpoint=ENDPOINT)
    other = counter.next_key(REQUEST.with_changes(model="llama"), provider="openai", endpoint=ENDPOINT)
    assert [first, second] == [key(draw=0), key(draw=1)]
    assert other == key(REQUEST.with_changes(model="llama"), draw=0)
    again = DrawCounter()  # a replay counts from the start again: sample k meets entry k
    assert [again.next_key(REQUEST, provider="openai", endpoint=ENDPOINT) for _ in range(2)] == [first, second]


def test_a_completion_and_its_usage_round_trip() -> None:
    completion = Completion(
        text="No one knows.",
        model="qwen",
        usage=Usage(input_tokens=12, output_tokens=4, total_tokens=16, cached_input_tokens=8),
        latency_ms=321,
        finish_reason="tool_calls",
        structured={"answer": "unknown", "confidence": 0.4},
        truncated=True,
        attempts=2,
        tool_calls=(ToolCall("c1", "read", {"path": "a.txt"}, '{"path": "a.txt"}'),),
        served_model="qwen2.5-0.5b-instruct-q4_k_m.gguf",
        logprobs=(TokenLogprob("No", -0.25), TokenLogprob(" one", -1.5)),
    )
    assert parse_completion(dump_completion(completion)) == completion
    assert parse_completion(dump_completion(Completion(text="", model="m"))) == Completion(text="", model="m")


@pytest.mark.parametrize("value", ["", "[]", "{}", '{"text": "x"}', '{"text": "x", "model": "m", "usage": 3}'])
def test_a_value_that_is_not_a_completion_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match="not a cached completion"):
        parse_completion(value)


@pytest.fixture
def store(contract_store: DebateStore) -> SqliteStore | MemoryStore:
    """Each backend in turn (tests/conftest.py: SQLite, memory, Postgres), all of which keep the call cache."""
    assert isinstance(contract_store, CallCache)
    return contract_store  # type: ignore[return-value]


def test_the_store_keeps_each_reply_by_key(store: SqliteStore | MemoryStore) -> None:
    assert isinstance(store, CallCache)
    value = dump_completion(Completion(text="Yes.", model="qwen", usage=Usage(input_tokens=3, output_tokens=1)))
    assert store.cached_call(key()) is None
    store.cache_call(key(), value)
    store.cache_call(key(draw=1), dump_completion(Completion(text="No.", model="qwen")))
    assert store.cached_call(key()) == value
    assert parse_completion(store.cached_call(key(draw=1)) or "").text == "No."
    store.cache_call(key(), dump_completion(Completion(text="Maybe.", model="qwen")))  # filed again: the newer wins
    assert parse_completion(store.cached_call(key()) or "").text == "Maybe."


def test_cached_replies_outlive_the_process(tmp_path: Path) -> None:
    path = tmp_path / "debates.sqlite3"
    with SqliteStore(path) as first:
        first.cache_call(key(), "value")
    with SqliteStore(path) as again:
        assert again.cached_call(key()) == "value"


def test_an_older_database_gets_the_table_when_it_is_opened(tmp_path: Path) -> None:
    path = tmp_path / "debates.sqlite3"
    with SqliteStore(path):
        pass
    with sqlite3.connect(path) as db:  # as a version without the call cache left it
        db.execute("DROP TABLE call_cache")
        db.execute("DELETE FROM migrations WHERE name = 'm007_call_cache'")
    with SqliteStore(path) as upgraded:
        upgraded.cache_call(key(), "value")
        assert upgraded.cached_call(key()) == "value"


def test_a_store_that_is_not_there_serves_nothing_and_keeps_nothing(tmp_path: Path) -> None:
    absent = AbsentStore(str(tmp_path / "none.sqlite3"))
    assert absent.cached_call(key()) is None
    with pytest.raises(StoreError):
        absent.cache_call(key(), "value")


class CountingProvider:
    """Answers each request with a numbered reply and counts the requests that reach it."""

    name = "counting"

    def __init__(self, *, cut_first: bool = False) -> None:
        self.requests: list[CompletionRequest] = []
        self.cut_first = cut_first

    async def complete(self, request: CompletionRequest) -> Completion:
        self.requests.append(request)
        cut = self.cut_first and len(self.requests) == 1
        return Completion(
            text=f"reply {len(self.requests)}.",
            model=request.model,
            usage=Usage(input_tokens=10, output_tokens=3, total_tokens=13),
            finish_reason="length" if cut else "stop",
        )

    def stream(self, request: CompletionRequest) -> AsyncIterator[Delta]:
        raise NotImplementedError

    async def aclose(self) -> None:
        pass


def run_twice(keeper: MemoryStore, *, read: bool, cut_first: bool = False) -> tuple[list[str], list[str], int, int]:
    """A run of three requests (two of them identical), then the same run again: the texts of each, the
    requests the second run sent, and its cache hits."""

    async def one_run(provider: CountingProvider, cache: ReplyCache) -> list[str]:
        client = LLMClient(provider, cache=cache)
        asks = [REQUEST, REQUEST, REQUEST.with_changes(model="llama")]
        return [(await client.complete(ask)).text for ask in asks]

    first = asyncio.run(one_run(CountingProvider(cut_first=cut_first), ReplyCache(keeper, endpoint=ENDPOINT)))
    second_provider = CountingProvider()
    second_cache = ReplyCache(keeper, endpoint=ENDPOINT, read=read)
    second = asyncio.run(one_run(second_provider, second_cache))
    return first, second, len(second_provider.requests), second_cache.hits


def test_a_run_that_reads_the_cache_sends_nothing_and_gets_the_same_replies() -> None:
    with MemoryStore() as keeper:
        first, second, sent, hits = run_twice(keeper, read=True)
    assert first == ["reply 1.", "reply 2.", "reply 3."]  # identical requests: separate draws
    assert second == first
    assert (sent, hits) == (0, 3)


def test_a_run_that_does_not_read_the_cache_asks_again_and_files_its_replies() -> None:
    with MemoryStore() as keeper:
        _, second, sent, hits = run_twice(keeper, read=False)
        assert (sent, hits) == (3, 0)
        third = ReplyCache(keeper, endpoint=ENDPOINT, read=True)  # the newer replies are the ones filed
        assert third.lookup(third.key(REQUEST, "counting")) is not None


def test_continuations_are_cached_as_their_own_requests() -> None:
    with MemoryStore() as keeper:
        first, second, sent, hits = run_twice(keeper, read=True, cut_first=True)
    assert first == ["reply 1. reply 2.", "reply 3.", "reply 4."]  # the first reply was cut off and continued
    assert second == first
    assert (sent, hits) == (0, 4)


def test_a_changed_request_misses_and_only_it_is_sent() -> None:
    with MemoryStore() as keeper:
        run_twice(keeper, read=False)
        provider = CountingProvider()
        cache = ReplyCache(keeper, endpoint=ENDPOINT, read=True)
        client = LLMClient(provider, cache=cache)

        async def run() -> None:
            await client.complete(REQUEST)
            await client.complete(REQUEST.with_changes(temperature=0.1))

        asyncio.run(run())
    assert [r.temperature for r in provider.requests] == [0.1]
    assert (cache.hits, cache.misses) == (1, 1)


def test_an_unreadable_entry_is_a_miss_and_a_refusing_store_keeps_nothing(tmp_path: Path) -> None:
    with MemoryStore() as keeper:
        cache = ReplyCache(keeper, read=True)
        key_ = cache.key(REQUEST, "counting")
        keeper.cache_call(key_, "not json")
        assert cache.lookup(key_) is None
        assert (cache.hits, cache.misses) == (0, 1)
    absent = ReplyCache(AbsentStore(str(tmp_path / "none.sqlite3")), read=True)
    provider = CountingProvider()
    assert asyncio.run(LLMClient(provider, cache=absent).complete(REQUEST)).text == "reply 1."
    assert len(provider.requests) == 1


def test_a_leased_store_passes_the_cache_through(store: SqliteStore | MemoryStore) -> None:
    leased = LeasedStore(store, "owner-1")
    leased.cache_call(key(), "value")
    assert store.cached_call(key()) == "value"
    assert leased.cached_call(key()) == "value"
