"""Cached input tokens, where the providers report them, reach the completion's usage."""

from __future__ import annotations

from dialectic.llm import anthropic_provider, openai_provider


def test_openai_replies_report_cached_prompt_tokens() -> None:
    chat = {
        "prompt_tokens": 1000,
        "completion_tokens": 10,
        "total_tokens": 1010,
        "prompt_tokens_details": {"cached_tokens": 768},
    }
    usage = openai_provider._usage_json(chat, "prompt_tokens", "completion_tokens")
    assert (usage.input_tokens, usage.output_tokens, usage.cached_input_tokens) == (1000, 10, 768)
    responses = {"input_tokens": 900, "output_tokens": 20, "input_tokens_details": {"cached_tokens": 512}}
    usage = openai_provider._usage_json(responses, "input_tokens", "output_tokens")
    assert (usage.input_tokens, usage.total_tokens, usage.cached_input_tokens) == (900, 920, 512)
    assert openai_provider._usage_json(None, "input_tokens", "output_tokens").total_tokens == 0
    assert openai_provider._usage(5, 1, 6).cached_input_tokens is None


def test_anthropic_counts_cache_reads_and_writes_as_input_and_reads_as_cached() -> None:
    usage = anthropic_provider._usage(100, 20, 50, 800)
    assert (usage.input_tokens, usage.output_tokens, usage.cached_input_tokens) == (950, 20, 800)
    assert anthropic_provider._usage(100, 20).cached_input_tokens is None
