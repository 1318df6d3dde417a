"""A model's JSON keeps the LaTeX it contains: ``\\boxed`` is not a backspace followed by "oxed".

Raw strings below hold what a model writes: single backslashes inside JSON strings.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from dialectic.llm import local_provider
from dialectic.llm.base import Completion, CompletionRequest, JsonSchema, Message
from dialectic.llm.client import LLMClient, extract_json, parse_structured
from dialectic.llm.json_text import loads_model_json, parse_json_text, repair_backslashes
from dialectic.llm.openai_provider import OpenAIProvider
from dialectic.llm.retry import RetryPolicy
from dialectic.llm.scripted import ScriptedReply
from dialectic.testing.fake_server import FakeLLMServer
from dialectic.testing.samples import ConfidenceOutput

LATEX = [r"\boxed{-141}", r"\frac{1}{2}", r"\text{m/s}", r"\nabla f", r"\rho"]


def judge_reply(reasoning: str) -> str:
    """What a judge writes: the reasoning pasted into the JSON as is, backslashes and all."""
    return '{"confidence": 80, "reasoning": "The result is ' + reasoning + '."}'


@pytest.mark.parametrize("latex", LATEX)
def test_latex_survives_parse_structured(latex: str) -> None:
    value, error = parse_structured(Completion(text=judge_reply(latex), model="m"), ConfidenceOutput)
    assert error is None and value is not None
    assert value.reasoning == f"The result is {latex}."


@pytest.mark.parametrize("latex", LATEX)
def test_latex_survives_a_fenced_or_embedded_reply(latex: str) -> None:
    fenced = "```json\n" + judge_reply(latex) + "\n```"
    embedded = "Here is my verdict: " + judge_reply(latex) + " Thanks."
    assert extract_json(fenced) == {"confidence": 80, "reasoning": f"The result is {latex}."}
    assert extract_json(embedded) == {"confidence": 80, "reasoning": f"The result is {latex}."}
    assert parse_json_text(fenced) == {"confidence": 80, "reasoning": f"The result is {latex}."}


def test_ordinary_newlines_tabs_and_escapes_keep_their_meaning() -> None:
    text = r'{"a": "first line\nsecond line\n\nThird\tcolumn", "b": "say \"hi\" C:\\temp caf\u00e9 a\/b"}'
    parsed = loads_model_json(text)
    assert parsed["a"] == "first line\nsecond line\n\nThird\tcolumn"
    assert parsed["b"] == 'say "hi" C:\\temp café a/b'


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (r"end.\ne.g. a cache", "end.\ne.g. a cache"),
        (r"end.\nnothing else", "end.\nnothing else"),
        (r"end.\ntext follows", "end.\ntext follows"),
        (r"name\tthen", "name\tthen"),
        (r"line\r\nrest", "line\r\nrest"),
    ],
)
def test_an_escape_before_an_ordinary_word_keeps_its_meaning(raw: str, expected: str) -> None:
    assert loads_model_json('{"a": "' + raw + '"}') == {"a": expected}


@pytest.mark.parametrize("escape", [r"\s", r"\(", r"\)", r"\[", r"\alpha", r"\sqrt{2}", r"\cdot", r"\le", r"\$"])
def test_invalid_escapes_are_read_as_literal_backslashes(escape: str) -> None:
    assert loads_model_json('{"a": "x ' + escape + ' y"}') == {"a": f"x {escape} y"}


def test_backslashes_outside_strings_and_well_formed_json_are_untouched() -> None:
    well_formed = '{"a": "line\\nnext", "b": [1, 2.5, true, null], "c": "\\\\boxed{1}"}'
    assert repair_backslashes(well_formed) == well_formed
    assert loads_model_json(well_formed)["c"] == r"\boxed{1}"


def test_a_raw_newline_typed_inside_a_string_is_accepted() -> None:
    assert loads_model_json('{"a": "one\ntwo"}') == {"a": "one\ntwo"}


@pytest.mark.parametrize("latex", LATEX)
@pytest.mark.parametrize("responses_api", [True, False], ids=["responses", "chat"])
def test_latex_survives_the_http_path_end_to_end(latex: str, responses_api: bool) -> None:
    """The fake server sends the judge's text; the OpenAI adapter and the client parse it."""

    async def ask(base_url: str) -> ConfidenceOutput | None:
        provider = OpenAIProvider(api_key="k", base_url=base_url)
        try:
            client = LLMClient(provider, retry=RetryPolicy(max_attempts=1))
            request = CompletionRequest(messages=(Message("user", "Judge."),), model="m")
            return (await client.complete_structured(request, ConfidenceOutput)).value
        finally:
            await provider.aclose()

    with FakeLLMServer(lambda request: ScriptedReply(text=judge_reply(latex)), responses_api=responses_api) as fake:
        value = asyncio.run(ask(fake.openai_base_url))
    assert value is not None and value.reasoning == f"The result is {latex}."
    assert fake.call_count == 1  # parsed the first time: no repair call


class GrammarConstrainedLlama:
    """Stands in for llama.cpp: answers a schema-constrained chat completion with a judge's JSON."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.options: dict[str, Any] = {}

    def create_chat_completion(self, **options: Any) -> dict[str, Any]:
        self.options = options
        return {
            "choices": [{"message": {"content": self.text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
        }


@pytest.mark.parametrize("latex", LATEX)
def test_the_local_grammar_path_parses_through_the_same_function(
    latex: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    llama = GrammarConstrainedLlama(judge_reply(latex))

    def run_without_a_model(self: object, job: object, messages: object, work: Any) -> Any:
        return work(llama)[0]

    monkeypatch.setattr(local_provider.SharedModel, "run", run_without_a_model)
    provider = local_provider.LocalProvider(str(tmp_path / "judge.gguf"))
    schema = JsonSchema("ConfidenceOutput", ConfidenceOutput.model_json_schema())
    request = CompletionRequest(messages=(Message("user", "Judge."),), model="", json_schema=schema)
    completion = asyncio.run(provider.complete(request))
    assert llama.options["response_format"] == {"type": "json_object", "schema": schema.schema}
    assert completion.structured == {"confidence": 80, "reasoning": f"The result is {latex}."}
    value, error = parse_structured(completion, ConfidenceOutput)
    assert error is None and value is not None and value.reasoning == f"The result is {latex}."
