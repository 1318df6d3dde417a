"""Context windows, provider-neutral: counting prompts, asking a provider its window, the thresholds."""

from __future__ import annotations

import asyncio
import math
import struct
from pathlib import Path
from typing import Any

import pytest

from dialectic.core.errors import ContextWindowExceeded
from dialectic.engine.windows import act_line, warn_line, window_after_refusal
from dialectic.llm.base import CompletionRequest, Message, ToolCall, ToolSpec
from dialectic.llm.local_provider import N_CTX_ENV, LocalProvider
from dialectic.llm.scripted import ScriptedProvider
from dialectic.llm.windows import (
    CHARS_PER_TOKEN,
    MESSAGE_OVERHEAD_TOKENS,
    PromptCount,
    count_prompt,
    estimate_prompt,
    estimate_tokens,
    learn_window,
)


def request(*texts: str, model: str = "m") -> CompletionRequest:
    messages = tuple(Message("system" if i == 0 else "user", text) for i, text in enumerate(texts))
    return CompletionRequest(messages=messages, model=model)


class Counting:
    """A provider with a tokenizer: one token per character (or whatever ``answer`` says)."""

    name = "counting"

    def __init__(self, answer: Any = None) -> None:
        self.answer = answer

    def count_tokens(self, req: CompletionRequest) -> Any:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


class Telling:
    name = "telling"

    def __init__(self, answer: Any, *, sync: bool = False) -> None:
        self.answer = answer
        self.sync = sync
        self.asked: list[str] = []

    def context_window(self, model: str) -> Any:
        self.asked.append(model)
        if isinstance(self.answer, Exception):
            raise self.answer
        if self.sync:
            return self.answer

        async def later() -> Any:
            return self.answer

        return later()


# -- counting


def test_an_estimate_takes_three_characters_a_token_and_a_few_tokens_a_message() -> None:
    assert CHARS_PER_TOKEN == 3
    assert estimate_tokens("") == 0 and estimate_tokens("abc") == 1 and estimate_tokens("abcd") == 2
    two = request("s" * 30, "u" * 31)
    assert estimate_prompt(two) == 10 + 11 + 2 * MESSAGE_OVERHEAD_TOKENS


def test_an_estimate_counts_the_tools_offered_and_the_calls_made() -> None:
    tool = ToolSpec("file_read", "Read a file.", {"type": "object"})
    call = Message("assistant", "", tool_calls=(ToolCall("1", "file_read", {"path": "a.md"}, '{"path": "a.md"}'),))
    plain = request("s" * 30)
    richer = plain.with_changes(messages=(*plain.messages, call), tools=(tool,))
    tool_chars = len("file_read") + len("Read a file.") + len('{"type": "object"}')
    call_tokens = math.ceil((len("file_read") + len('{"path": "a.md"}')) / 3) + MESSAGE_OVERHEAD_TOKENS
    assert estimate_prompt(richer) == estimate_prompt(plain) + call_tokens + math.ceil(tool_chars / 3)


def test_a_prompt_is_counted_by_the_providers_tokenizer_when_it_has_one() -> None:
    assert count_prompt(Counting(123), request("x" * 300)) == PromptCount(123, exact=True)  # type: ignore[arg-type]


@pytest.mark.parametrize("answer", [None, RuntimeError("no tokenizer"), -1, "12", True])
def test_without_a_usable_tokenizer_a_prompt_is_estimated(answer: Any) -> None:
    prompt = request("x" * 300)
    assert count_prompt(Counting(answer), prompt) == PromptCount(estimate_prompt(prompt))  # type: ignore[arg-type]
    assert count_prompt(object(), prompt) == PromptCount(estimate_prompt(prompt))  # type: ignore[arg-type]


# -- asking the window


@pytest.mark.parametrize("sync", [False, True])
def test_the_window_is_what_the_provider_says(sync: bool) -> None:
    provider = Telling(8192, sync=sync)
    assert asyncio.run(learn_window(provider, "qwen")) == 8192  # type: ignore[arg-type]
    assert provider.asked == ["qwen"]


@pytest.mark.parametrize("answer", [None, 0, -5, "8192", 8192.0, True, RuntimeError("down")])
def test_a_provider_that_cannot_say_leaves_the_window_unknown(answer: Any) -> None:
    assert asyncio.run(learn_window(Telling(answer), "m")) is None  # type: ignore[arg-type]


def test_a_provider_without_the_method_leaves_the_window_unknown() -> None:
    assert asyncio.run(learn_window(object(), "m")) is None  # type: ignore[arg-type]


# -- the thresholds


def test_the_warning_comes_at_80_percent_and_the_strategy_past_90() -> None:
    assert warn_line(1500) == 1200
    assert act_line(1500) == 1350


def test_a_reply_that_would_not_fit_lowers_the_line_but_never_under_half_the_window() -> None:
    assert act_line(1500, max_tokens=100) == 1350
    assert act_line(1500, max_tokens=400) == 1100
    assert act_line(1500, max_tokens=1400) == 750


def test_a_refusal_teaches_the_window_it_names_else_a_ceiling_under_the_prompt() -> None:
    named = ContextWindowExceeded("too long", window=1500, prompt_tokens=1600)
    assert window_after_refusal(named, 1700) == 1500
    unnamed = ContextWindowExceeded("too long")
    assert window_after_refusal(unnamed, 1700) == 1530


# -- the scripted model's window, in words


def test_the_scripted_model_counts_words_and_refuses_prompts_that_fill_its_window() -> None:
    provider = ScriptedProvider(window=10)
    assert provider.count_tokens(request("one two three", "four five")) == 5
    assert asyncio.run(provider.context_window("m")) == 10
    with pytest.raises(ContextWindowExceeded) as refused:
        asyncio.run(provider.complete(request(" ".join(["w"] * 10))))
    assert (refused.value.window, refused.value.prompt_tokens) == (10, 10)
    assert len(provider.refused) == 1 and provider.calls == []


def test_the_scripted_model_cuts_a_reply_where_its_window_ends() -> None:
    provider = ScriptedProvider(replies=[" ".join(["r"] * 20)], window=12)
    completion = asyncio.run(provider.complete(request("one two three four five six seven eight")))
    assert completion.text.split() == ["r"] * 4 and completion.cut_off


def test_a_scripted_server_may_keep_its_window_and_the_sizes_to_itself() -> None:
    provider = ScriptedProvider(window=5, tells_window=False, names_sizes=False)
    assert asyncio.run(provider.context_window("m")) is None
    with pytest.raises(ContextWindowExceeded) as refused:
        asyncio.run(provider.complete(request("a b c d e f")))
    assert (refused.value.window, refused.value.prompt_tokens) == (None, None)


# -- the local model's window, known before the model is loaded


def tiny_gguf(path: Path, context_length: int) -> Path:
    def string(text: str) -> bytes:
        raw = text.encode()
        return struct.pack("<Q", len(raw)) + raw

    kvs = [
        string("general.architecture") + struct.pack("<I", 8) + string("qwen2"),
        string("qwen2.context_length") + struct.pack("<II", 4, context_length),
    ]
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs))
    return path


def test_the_local_model_window_is_read_from_its_file_capped_as_loading_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(N_CTX_ENV, raising=False)
    small = str(tiny_gguf(tmp_path / "small.gguf", 2048))
    large = str(tiny_gguf(tmp_path / "large.gguf", 32768))
    provider = LocalProvider(small)
    assert asyncio.run(learn_window(provider, small)) == 2048
    assert asyncio.run(learn_window(provider, large)) == 8192  # what loading would choose: capped
    monkeypatch.setenv(N_CTX_ENV, "4096")
    assert asyncio.run(learn_window(LocalProvider(str(tiny_gguf(tmp_path / "other.gguf", 32768))), "")) == 4096


def test_the_local_model_counts_no_tokens_before_its_tokenizer_is_loaded(tmp_path: Path) -> None:
    model = str(tiny_gguf(tmp_path / "unloaded.gguf", 2048))
    prompt = request("x" * 90, model="")  # the provider's own model
    assert LocalProvider(model).count_tokens(prompt) is None
    assert count_prompt(LocalProvider(model), prompt) == PromptCount(estimate_prompt(prompt))
    assert asyncio.run(learn_window(LocalProvider(str(tmp_path / "missing.gguf")), "")) is None


def test_a_claude_model_holds_200000_tokens_and_another_model_is_unknown() -> None:
    from dialectic.llm.anthropic_provider import AnthropicProvider

    provider = AnthropicProvider(api_key="test-key")
    assert asyncio.run(learn_window(provider, "claude-haiku-4-5")) == 200_000
    assert asyncio.run(learn_window(provider, "llama-3-8b")) is None
