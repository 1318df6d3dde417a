"""Streaming through the reliable-call layer: pieces at their offsets, one complete reply, retries, continuations."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from dialectic.core.errors import ProviderUnavailable
from dialectic.llm import base
from dialectic.llm.base import FINISH_LENGTH, CompletionRequest, Delta, Message
from dialectic.llm.client import LLMClient, streaming_to
from dialectic.llm.retry import RetryPolicy
from dialectic.llm.scripted import ScriptedProvider, ScriptedReply
from dialectic.testing.samples import ConfidenceOutput

FAST = RetryPolicy(max_attempts=3, base_delay_s=0.001, max_delay_s=0.001, jitter_s=0.0)


def request() -> CompletionRequest:
    return CompletionRequest(messages=(Message("system", "s"), Message("user", "u")), model="m")


class Recorder:
    """Writes every piece at its offset, as the web page does, and keeps the raw calls."""

    def __init__(self) -> None:
        self.pieces: list[tuple[int, str]] = []
        self.text = ""

    def __call__(self, offset: int, text: str) -> None:
        self.pieces.append((offset, text))
        self.text = self.text[:offset] + text


class CountingProvider(ScriptedProvider):
    """The scripted model, counting how often each entry point is used."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.streams = 0

    async def stream(self, request: CompletionRequest) -> AsyncIterator[Delta]:
        self.streams += 1
        async for delta in super().stream(request):
            yield delta


class FailsMidStream(ScriptedProvider):
    """The first stream breaks after two pieces (as a dropped connection would); later ones finish."""

    def __init__(self, text: str) -> None:
        super().__init__(replies=[text, text])
        self.attempts = 0

    async def stream(self, request: CompletionRequest) -> AsyncIterator[Delta]:
        self.attempts += 1
        count = 0
        async for delta in super().stream(request):
            if self.attempts == 1 and count == 2:
                raise ProviderUnavailable("scripted: connection dropped")
            count += 1
            yield delta


class Buffered(ScriptedProvider):
    """Every chunk already received: the stream never waits between them (a fast server, or a burst)."""

    async def stream(self, request: CompletionRequest) -> AsyncIterator[Delta]:
        completion = await self.complete(request)
        for word in completion.text.split(" "):
            yield Delta(text=word + " ")
        yield Delta(finish_reason=completion.finish_reason, usage=completion.usage, model=completion.model)


async def streamed(client: LLMClient, recorder: Recorder) -> str:
    with streaming_to(recorder):
        completion = await client.complete(request())
    return completion.text


def test_a_watched_call_streams_its_pieces_and_returns_the_same_complete_reply() -> None:
    provider = CountingProvider(replies=["The limiter uses a token bucket."])
    recorder = Recorder()
    text = asyncio.run(streamed(LLMClient(provider, retry=FAST), recorder))
    assert text == "The limiter uses a token bucket."
    assert recorder.text == text
    assert [offset for offset, _ in recorder.pieces] == [0, 3, 11, 16, 18, 24]
    assert provider.streams == 1


def test_pieces_that_arrive_in_one_turn_of_the_loop_go_out_as_one() -> None:
    provider = Buffered(replies=["one two three four"])
    recorder = Recorder()
    text = asyncio.run(streamed(LLMClient(provider, retry=FAST), recorder))
    assert recorder.pieces == [(0, "one two three four ")] and recorder.text == text


def test_draining_a_buffered_stream_lets_other_work_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "HOLD_LIMIT_S", 0.0)  # let go after every chunk
    provider = Buffered(replies=["one two three four"])
    recorder = Recorder()
    seen: list[str] = []

    async def other_work() -> None:
        while True:
            seen.append(recorder.text)
            await asyncio.sleep(0)

    async def both() -> str:
        other = asyncio.ensure_future(other_work())
        try:
            return await streamed(LLMClient(provider, retry=FAST), recorder)
        finally:
            other.cancel()

    text = asyncio.run(both())
    assert recorder.text == text
    assert [offset for offset, _ in recorder.pieces] == [0, 4, 8, 14]  # handed on at each let-go
    assert {"one ", "one two ", "one two three "} <= set(seen)  # the other task ran in between


def test_an_unwatched_call_does_not_stream() -> None:
    provider = CountingProvider(replies=["plain reply"])
    completion = asyncio.run(LLMClient(provider, retry=FAST).complete(request()))
    assert completion.text == "plain reply" and provider.streams == 0


def test_a_retried_attempt_streams_again_from_offset_zero() -> None:
    provider = FailsMidStream("one two three four")
    recorder = Recorder()
    text = asyncio.run(streamed(LLMClient(provider, retry=FAST), recorder))
    assert text == "one two three four"
    assert recorder.pieces[:2] == [(0, "one"), (3, " two")]
    assert recorder.pieces[2] == (0, "one")  # the second attempt starts over
    assert recorder.text == text


def test_a_continuation_streams_on_after_the_text_so_far() -> None:
    provider = ScriptedProvider(
        replies=[ScriptedReply("The limiter", finish_reason=FINISH_LENGTH), ScriptedReply("uses a token bucket.")]
    )
    recorder = Recorder()
    text = asyncio.run(streamed(LLMClient(provider, retry=FAST, max_continuations=1), recorder))
    assert text == "The limiter uses a token bucket."
    assert (len("The limiter"), "uses") in recorder.pieces


def test_structured_calls_do_not_stream() -> None:
    value = {"confidence": 70, "reasoning": "ok"}
    provider = CountingProvider(replies=[ScriptedReply(json.dumps(value), structured=value)])
    recorder = Recorder()

    async def call() -> ConfidenceOutput | None:
        with streaming_to(recorder):
            result = await LLMClient(provider, retry=FAST).complete_structured(request(), ConfidenceOutput)
        return result.value

    assert asyncio.run(call()) == ConfidenceOutput(confidence=70, reasoning="ok")
    assert provider.streams == 0 and recorder.pieces == []


def test_the_hook_is_gone_after_the_block() -> None:
    provider = CountingProvider(replies=["a b", "c d"])
    recorder = Recorder()

    async def both() -> None:
        client = LLMClient(provider, retry=FAST)
        with streaming_to(recorder):
            await client.complete(request())
        await client.complete(request())

    asyncio.run(both())
    assert provider.streams == 1 and recorder.text == "a b"


@pytest.mark.parametrize("delay", [0.0, 0.001])
def test_the_scripted_stream_joins_to_the_reply(delay: float) -> None:
    provider = ScriptedProvider(replies=["  spaced  words here "], chunk_delay_s=delay)

    async def pieces() -> str:
        return "".join([d.text async for d in provider.stream(request())])

    assert asyncio.run(pieces()) == "  spaced  words here "
