"""The reliable-call layer: continuation of cut-off replies, structured output with one repair, JSON extraction."""

from __future__ import annotations

import asyncio
import json

from dialectic.llm.base import FINISH_LENGTH, CompletionRequest, Message
from dialectic.llm.client import LLMClient, extract_json
from dialectic.llm.retry import RetryPolicy
from dialectic.llm.scripted import ScriptedProvider, ScriptedReply
from dialectic.testing.samples import ConfidenceOutput

FAST = RetryPolicy(max_attempts=2, base_delay_s=0.001, max_delay_s=0.001, jitter_s=0.0)


def request(max_tokens: int | None = None) -> CompletionRequest:
    return CompletionRequest(messages=(Message("system", "s"), Message("user", "u")), model="m", max_tokens=max_tokens)


def test_complete_reply_passes_through() -> None:
    client = LLMClient(ScriptedProvider(replies=["hello world"]), retry=FAST)
    result = asyncio.run(client.complete(request()))
    assert result.text == "hello world" and not result.truncated and result.attempts == 1


def test_cut_off_reply_is_continued_and_usage_summed() -> None:
    provider = ScriptedProvider(
        replies=[ScriptedReply("The limiter", finish_reason=FINISH_LENGTH), ScriptedReply("uses a token bucket.")]
    )
    result = asyncio.run(LLMClient(provider, retry=FAST, max_continuations=1).complete(request()))
    assert result.text == "The limiter uses a token bucket."
    assert not result.truncated and result.attempts == 2
    assert result.usage.output_tokens == 2 + 4


def test_still_cut_off_after_continuations_is_marked_truncated() -> None:
    provider = ScriptedProvider(replies=[ScriptedReply("x", finish_reason=FINISH_LENGTH)] * 5)
    result = asyncio.run(LLMClient(provider, retry=FAST, max_continuations=2).complete(request()))
    assert result.truncated and result.attempts == 3 and len(provider.calls) == 3


def test_structured_cut_off_is_retried_with_more_room() -> None:
    good = {"confidence": 70, "reasoning": "ok"}
    provider = ScriptedProvider(
        replies=[
            ScriptedReply('{"confid', finish_reason=FINISH_LENGTH),
            ScriptedReply(json.dumps(good), structured=good),
        ]
    )
    result = asyncio.run(LLMClient(provider, retry=FAST).complete_structured(request(max_tokens=50), ConfidenceOutput))
    assert result.value == ConfidenceOutput(confidence=70, reasoning="ok")
    assert provider.calls[1].max_tokens == 100


def test_structured_output_is_repaired_once() -> None:
    bad = {"confidence": 170}
    good = {"confidence": 70}
    provider = ScriptedProvider(
        replies=[ScriptedReply(json.dumps(bad), structured=bad), ScriptedReply(json.dumps(good))]
    )
    result = asyncio.run(LLMClient(provider, retry=FAST).complete_structured(request(), ConfidenceOutput))
    assert result.value is not None and result.value.confidence == 70
    repair = provider.calls[1]
    assert repair.json_schema is not None and "confidence" in repair.messages[-1].content
    assert repair.messages[-2].role == "assistant"


def test_structured_output_that_never_validates_reports_the_error() -> None:
    provider = ScriptedProvider(replies=["not json", "still not json"])
    result = asyncio.run(LLMClient(provider, retry=FAST).complete_structured(request(), ConfidenceOutput))
    assert result.value is None and result.error and "JSON" in result.error
    assert result.completion.usage.total_tokens > 0


def test_a_repair_that_cannot_fit_the_window_is_not_made() -> None:
    long_invalid = "Here is my answer: " + "very " * 20 + "good."
    provider = ScriptedProvider(replies=[long_invalid, "{}"], window=30)
    result = asyncio.run(LLMClient(provider, retry=FAST).complete_structured(request(), ConfidenceOutput))
    assert result.value is None and result.completion.text == long_invalid
    assert result.error is not None and "no room in the context window" in result.error
    assert len(provider.refused) == 1 and len(provider.calls) == 1  # the repair was refused, not answered


def test_schema_is_sent_with_camel_case_names() -> None:
    from dialectic.agents.outputs import SynthesisOutput

    provider = ScriptedProvider()
    result = asyncio.run(LLMClient(provider, retry=FAST).complete_structured(request(), SynthesisOutput))
    schema = provider.calls[0].json_schema
    assert schema is not None and "unfulfilledMajorRequirements" in schema.schema["properties"]
    assert result.value is not None


def test_extract_json_finds_fenced_and_embedded_objects() -> None:
    assert extract_json('{"a": 1}') == {"a": 1}
    assert extract_json('```json\n{"a": 2}\n```') == {"a": 2}
    assert extract_json('Sure! Here it is: {"a": 3} Hope that helps.') == {"a": 3}
    assert extract_json("no json here") is None


def test_a_continuation_that_starts_over_is_not_pasted_twice() -> None:
    from dialectic.llm.client import _join_continuation

    head = "1. Use a token bucket per API key, kept in Redis.\n2. Fail open when Redis is"
    restarted = "1. Use a token bucket per API key, kept in Redis.\n2. Fail open when Redis is down, and alert."
    assert _join_continuation(head, restarted) == restarted
    rewritten = "2. Fail open when Redis is unreachable; page the on-call."
    head2 = "1. Use a token bucket per API key, kept in Redis.\n2. Fail open when Redis is down and"
    assert _join_continuation(head2, rewritten) == (
        "1. Use a token bucket per API key, kept in Redis.\n2. Fail open when Redis is unreachable; page the on-call."
    )
    assert _join_continuation("The limiter", "uses a bucket.") == "The limiter uses a bucket."


def test_a_continuation_is_told_where_the_reply_stopped_and_how_briefly_to_end() -> None:
    from dialectic.llm.client import finish_words

    provider = ScriptedProvider(
        replies=[
            ScriptedReply('1. Use a "token bucket" per API key, kept in', finish_reason=FINISH_LENGTH),
            ScriptedReply("Redis."),
        ]
    )
    asyncio.run(LLMClient(provider, retry=FAST, max_continuations=1).complete(request(max_tokens=200)))
    ask = provider.calls[1].messages[-1]
    assert ask.role == "user"
    assert "after \"a 'token bucket' per API key, kept in\"" in ask.content  # its last 8 words
    assert f"at most {finish_words(200)} words" in ask.content
    assert provider.calls[1].messages[-2].content == '1. Use a "token bucket" per API key, kept in'


def test_finish_words_is_a_small_share_of_the_turn() -> None:
    from dialectic.llm.client import DEFAULT_FINISH_WORDS, finish_words

    assert finish_words(200) == 44
    assert finish_words(10) == 15
    assert finish_words(None) == DEFAULT_FINISH_WORDS


def test_a_reply_still_cut_off_ends_at_its_last_complete_point_and_stays_truncated() -> None:
    provider = ScriptedProvider(
        replies=[
            ScriptedReply("1. **Token bucket** per key.\n2. **Redis** holds the buck", finish_reason=FINISH_LENGTH),
            ScriptedReply("buckets for every", finish_reason=FINISH_LENGTH),
        ]
    )
    result = asyncio.run(LLMClient(provider, retry=FAST, max_continuations=1).complete(request(max_tokens=50)))
    assert result.truncated and result.attempts == 2
    assert result.text == "1. **Token bucket** per key."


def test_a_cut_off_reply_is_trimmed_even_without_continuations() -> None:
    provider = ScriptedProvider(replies=[ScriptedReply("Use Redis. Fail open wh", finish_reason=FINISH_LENGTH)])
    result = asyncio.run(LLMClient(provider, retry=FAST, max_continuations=0).complete(request()))
    assert result.truncated and result.text == "Use Redis." and len(provider.calls) == 1
