"""The local model's tool-call format (Qwen2.5's), rendered and parsed as pure functions: no model needed."""

from __future__ import annotations

import json

import pytest

from dialectic.llm.base import Message, ToolCall, ToolSpec
from dialectic.llm.local_tools import (
    ANSWER_GRAMMAR,
    DEFAULT_SYSTEM,
    call_text,
    chat_messages,
    must_call,
    parse_reply,
    repeats_a_call,
    tools_system_prompt,
)

FILE_READ = ToolSpec(
    "file_read",
    "Read a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
LIST_FILES = ToolSpec("list_files", "List files.", {"type": "object", "properties": {}})
TOOLS = (FILE_READ, LIST_FILES)
NAMES = ("file_read", "list_files")


def test_the_system_prompt_carries_the_tools_as_qwens_template_writes_them() -> None:
    prompt = tools_system_prompt("You are an architect.", TOOLS)
    assert prompt.startswith("You are an architect.\n\n# Tools\n\nYou may call one or more functions")
    block = prompt.split("<tools>\n", 1)[1].split("\n</tools>", 1)[0]
    assert [json.loads(line) for line in block.splitlines()] == [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in TOOLS
    ]
    assert prompt.endswith(
        '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n'
        "</tool_call>"
    )


def test_no_system_message_gives_qwens_default_and_no_tools_give_no_block() -> None:
    assert tools_system_prompt("", TOOLS).startswith(DEFAULT_SYSTEM + "\n\n# Tools")
    assert tools_system_prompt("Be brief.", ()) == "Be brief."


def test_a_conversation_with_calls_and_results_becomes_plain_chat_turns() -> None:
    calls = (ToolCall("c1", "list_files", {}), ToolCall("c2", "file_read", {"path": "a.py"}))
    chat = chat_messages(
        (
            Message("system", "Sys A."),
            Message("system", "Sys B."),
            Message("user", "Which port?"),
            Message("assistant", "Looking.", tool_calls=calls),
            Message("tool", "a.py", tool_call_id="c1"),
            Message("tool", "PORT = 1", tool_call_id="c2"),
            Message("assistant", "", tool_calls=(ToolCall("c3", "file_read", {"path": "b.py"}),)),
            Message("tool", "x", tool_call_id="c3"),
        ),
        TOOLS,
    )
    assert [m["role"] for m in chat] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert chat[0]["content"] == tools_system_prompt("Sys A.\n\nSys B.", TOOLS)
    assert chat[2]["content"] == (
        "Looking.\n"
        '<tool_call>\n{"name": "list_files", "arguments": {}}\n</tool_call>\n'
        '<tool_call>\n{"name": "file_read", "arguments": {"path": "a.py"}}\n</tool_call>'
    )
    # consecutive results share one user turn
    assert chat[3]["content"] == "<tool_response>\na.py\n</tool_response>\n<tool_response>\nPORT = 1\n</tool_response>"
    assert chat[4]["content"] == '<tool_call>\n{"name": "file_read", "arguments": {"path": "b.py"}}\n</tool_call>'
    assert chat[5]["content"] == "<tool_response>\nx\n</tool_response>"


def test_the_rendering_matches_qwens_own_tools_template() -> None:
    """The plain turns, rendered by the ordinary ChatML template, give the text the tools template gives."""
    jinja2 = pytest.importorskip("jinja2")
    conversation = (
        Message("system", "Sys."),
        Message("user", "Q?"),
        Message("assistant", "", tool_calls=(ToolCall("c1", "file_read", {"path": "a.py"}),)),
        Message("tool", "R1", tool_call_id="c1"),
        Message("assistant", "Answer."),
    )
    chatml = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in chat_messages(conversation, TOOLS))
    env = jinja2.Environment()
    env.filters["tojson"] = lambda value: json.dumps(value, ensure_ascii=False)
    native = env.from_string(QWEN_TOOLS_TEMPLATE).render(
        tools=[
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in TOOLS
        ],
        messages=[
            {"role": "system", "content": "Sys."},
            {"role": "user", "content": "Q?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"function": {"name": "file_read", "arguments": {"path": "a.py"}}}],
            },
            {"role": "tool", "content": "R1"},
            {"role": "assistant", "content": "Answer."},
        ],
    )
    assert chatml == native


QWEN_TOOLS_TEMPLATE = """\
{{- '<|im_start|>system\\n' }}{{- messages[0]['content'] }}\
{{- "\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with \
function signatures within <tools></tools> XML tags:\\n<tools>" }}\
{%- for tool in tools %}{{- "\\n" }}{{- tool | tojson }}{%- endfor %}\
{{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within \
<tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}\\n\
</tool_call><|im_end|>\\n" }}\
{%- for message in messages %}\
{%- if (message.role == "user") or (message.role == "assistant" and not message.tool_calls) %}\
{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\
{%- elif message.role == "assistant" %}{{- '<|im_start|>' + message.role }}\
{%- if message.content %}{{- '\\n' + message.content }}{%- endif %}\
{%- for tool_call in message.tool_calls %}{%- if tool_call.function is defined %}\
{%- set tool_call = tool_call.function %}{%- endif %}\
{{- '\\n<tool_call>\\n{"name": "' }}{{- tool_call.name }}{{- '", "arguments": ' }}\
{{- tool_call.arguments | tojson }}{{- '}\\n</tool_call>' }}{%- endfor %}{{- '<|im_end|>\\n' }}\
{%- elif message.role == "tool" %}\
{%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}{{- '<|im_start|>user' }}{%- endif %}\
{{- '\\n<tool_response>\\n' }}{{- message.content }}{{- '\\n</tool_response>' }}\
{%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}{{- '<|im_end|>\\n' }}{%- endif %}\
{%- endif %}{%- endfor %}"""
"""Qwen2.5's chat template (the tools branch, as its GGUF carries it), minus the no-tools branch."""


def test_parse_a_call_and_the_text_around_it() -> None:
    text, calls = parse_reply(
        'I will read it.\n<tool_call>\n{"name": "file_read", "arguments": {"path": "a.py"}}\n</tool_call>', NAMES
    )
    assert text == "I will read it."
    assert [(c.name, c.arguments) for c in calls] == [("file_read", {"path": "a.py"})]
    assert json.loads(calls[0].arguments_text) == {"path": "a.py"} and calls[0].id.startswith("call_")


def test_parse_several_calls_with_distinct_ids() -> None:
    reply = (
        '<tool_call>\n{"name": "list_files", "arguments": {}}\n</tool_call>\n'
        '<tool_call>\n{"name": "file_read", "arguments": {"path": "b.py"}}\n</tool_call>'
    )
    text, calls = parse_reply(reply, NAMES)
    assert text == ""
    assert [(c.name, c.arguments) for c in calls] == [("list_files", {}), ("file_read", {"path": "b.py"})]
    assert len({c.id for c in calls}) == 2


def test_a_call_cut_off_before_its_closing_tag_still_counts() -> None:
    _, calls = parse_reply('<tool_call>\n{"name": "file_read", "arguments": {"path": "a.py"}}', NAMES)
    assert [(c.name, c.arguments) for c in calls] == [("file_read", {"path": "a.py"})]


def test_bad_json_in_a_block_gives_a_call_with_empty_arguments_and_the_raw_text() -> None:
    body = '{"name": "file_read", "arguments": {"path": "a.py"'
    text, calls = parse_reply(f"<tool_call>\n{body}\n</tool_call>", NAMES)
    assert text == ""
    assert (calls[0].name, calls[0].arguments, calls[0].arguments_text) == ("file_read", {}, body)


def test_arguments_given_as_a_json_string_are_parsed() -> None:
    _, calls = parse_reply('<tool_call>{"name": "file_read", "arguments": "{\\"path\\": \\"a.py\\"}"}</tool_call>')
    assert calls[0].arguments == {"path": "a.py"} and calls[0].arguments_text == '{"path": "a.py"}'


def test_arguments_that_are_not_an_object_give_empty_arguments() -> None:
    _, calls = parse_reply('<tool_call>{"name": "file_read", "arguments": ["a.py"]}</tool_call>')
    assert calls[0].arguments == {} and calls[0].arguments_text == '["a.py"]'


def test_a_bare_call_without_tags_is_a_call_only_when_it_names_a_tool() -> None:
    _, calls = parse_reply('{"name": "file_read", "arguments": {"path": "a.py"}}', NAMES)
    assert [(c.name, c.arguments) for c in calls] == [("file_read", {"path": "a.py"})]
    _, fenced = parse_reply('```json\n{"name": "list_files", "arguments": {}}\n```', NAMES)
    assert [c.name for c in fenced] == ["list_files"]
    answer = '{"name": "Alice", "arguments": {"strong": true}}'
    assert parse_reply(answer, NAMES) == (answer, ())


def test_plain_text_is_an_answer() -> None:
    assert parse_reply("  The port is 8731.\n", NAMES) == ("The port is 8731.", ())


def test_call_text_is_what_the_model_writes() -> None:
    call = ToolCall("c", "file_read", {"path": "é.py"})
    assert call_text(call) == '<tool_call>\n{"name": "file_read", "arguments": {"path": "é.py"}}\n</tool_call>'


def test_the_first_step_of_a_loop_must_call_and_later_ones_may_answer() -> None:
    asked = (Message("user", "Q?"),)
    assert must_call(asked, TOOLS)
    assert not must_call(asked, ())
    answered = (*asked, Message("assistant", "", tool_calls=(ToolCall("c", "list_files"),)), Message("tool", "a.py"))
    assert not must_call(answered, TOOLS)


def test_the_call_grammar_parses_and_names_every_tool() -> None:
    pytest.importorskip("llama_cpp")
    from llama_cpp import LlamaGrammar

    from dialectic.llm.local_tools import call_grammar

    grammar = call_grammar(TOOLS)
    assert grammar.startswith('root ::= "<tool_call>\\n" call "\\n</tool_call>"')
    assert '"\\"file_read\\""' in grammar and '"\\"list_files\\""' in grammar
    LlamaGrammar.from_string(grammar, verbose=False)  # raises if llama.cpp cannot parse it


def test_one_bare_call_a_line_is_several_calls_but_a_mixed_text_is_an_answer() -> None:
    lines = '{"name": "list_files", "arguments": {}}\n{"name": "file_read", "arguments": {"path": "a.py"}}'
    _, calls = parse_reply(lines, NAMES)
    assert [(c.name, c.arguments) for c in calls] == [("list_files", {}), ("file_read", {"path": "a.py"})]
    mixed = '{"name": "file_read", "arguments": {"path": "a.py"}}\n{"error": "no such file"}'
    assert parse_reply(mixed, NAMES) == (mixed, ())


def test_a_call_already_made_with_the_same_arguments_is_a_repeat() -> None:
    made = (
        Message("user", "Q?"),
        Message("assistant", "", tool_calls=(ToolCall("c1", "file_read", {"path": "a.py", "start_line": 1}),)),
        Message("tool", "x", tool_call_id="c1"),
    )
    assert repeats_a_call(made, (ToolCall("c9", "file_read", {"start_line": 1, "path": "a.py"}),))
    assert not repeats_a_call(made, (ToolCall("c9", "file_read", {"path": "b.py"}),))
    assert not repeats_a_call(made, (ToolCall("c9", "list_files", {"path": "a.py", "start_line": 1}),))
    assert not repeats_a_call((Message("user", "Q?"),), (ToolCall("c9", "file_read", {"path": "a.py"}),))


def test_the_answer_grammar_parses() -> None:
    pytest.importorskip("llama_cpp")
    from llama_cpp import LlamaGrammar

    LlamaGrammar.from_string(ANSWER_GRAMMAR, verbose=False)
