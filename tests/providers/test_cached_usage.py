"""Cached input tokens, where the providers report them, reach the completion's usage."""

from __future__ import annotations

from openai.types.chat.chat_completion import ChatCompletion

from dialectic.llm import anthropic_provider, openai_provider


def test_openai_chat_reports_cached_prompt_tokens() -> None:
    completion = ChatCompletion.model_validate(
        {
            "id": "c",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": 1000,
                "completion_tokens": 10,
                "total_tokens": 1010,
                "prompt_tokens_details": {"cached_tokens": 768},
            },
        }
    )
    u = completion.usage
    assert u is not None
    usage = openai_provider._usage(u.prompt_tokens, u.completion_tokens, u.total_tokens, u.prompt_tokens_details)
    assert (usage.input_tokens, usage.cached_input_tokens) == (1000, 768)
    assert openai_provider._usage(5, 1, 6).cached_input_tokens is None


def test_anthropic_counts_cache_reads_and_writes_as_input_and_reads_as_cached() -> None:
    usage = anthropic_provider._usage(100, 20, 50, 800)
    assert (usage.input_tokens, usage.output_tokens, usage.cached_input_tokens) == (950, 20, 800)
    assert anthropic_provider._usage(100, 20).cached_input_tokens is None
