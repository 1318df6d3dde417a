"""Tool calling for the local model in Qwen2.5's own format, rendered and parsed here (pure functions).

Qwen2.5 (and its Coder variants) learned one tool format, the one its chat template writes when
given tools: the signatures as JSON lines inside ``<tools></tools>`` at the end of the system
prompt, each call answered as ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` in the
assistant turn, and each result sent back as ``<tool_response>…</tool_response>`` in a user
turn (consecutive results share one). :func:`chat_messages` writes a conversation with tools as
plain chat messages whose rendering by the model's ordinary template is, token for token, what
its tools template renders (so llama-cpp-python's prompt path and prefix reuse stay as they
are), and :func:`parse_reply` reads the calls back out of the generated text.

Why this format, with two grammar rules, rather than free generation or grammar-constrained
JSON throughout: measured on both catalogue models with questions that need a file read
(``benchmarks/local_tool_calls.py``, figures in its docstring). Left free, neither model ever
called a tool (it answered from a guess); a JSON grammar of "a call or an answer" got calls but
then the same call again and again, never an answer. So the first step of a loop is held to
one call (:func:`call_grammar`, when :func:`must_call`), later steps are free, and a call that
repeats one already made (:func:`repeats_a_call`) is asked again as text (:data:`ANSWER_GRAMMAR`).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence

from dialectic.core.json_values import JsonObject
from dialectic.llm.base import Message, ToolCall, ToolSpec
from dialectic.llm.tool_arguments import parse_arguments

Chat = list[dict[str, str]]

DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
"""The system prompt Qwen2.5's template uses when the conversation has none."""

_TOOLS_INTRO = (
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
_TOOLS_OUTRO = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n'
    "</tool_call>"
)
TOOL_STOPS = ("<tool_response>",)
"""Where generation stops on a step offering tools: past its calls, a small model goes on to invent their results."""
_CALL_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)


def tools_system_prompt(system: str, tools: Sequence[ToolSpec]) -> str:
    """``system`` followed by the tools block, as Qwen2.5's template writes it (no tools: ``system`` alone)."""
    if not tools:
        return system or DEFAULT_SYSTEM
    lines = "".join("\n" + json.dumps(tool_schema(tool), ensure_ascii=False) for tool in tools)
    return (system or DEFAULT_SYSTEM) + _TOOLS_INTRO + lines + _TOOLS_OUTRO


def tool_schema(tool: ToolSpec) -> JsonObject:
    """A tool as the OpenAI-style function object the template dumps."""
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


def call_text(call: ToolCall) -> str:
    """One call as the model writes it (the template's spacing: ``{"name": "…", "arguments": …}``)."""
    arguments = json.dumps(call.arguments, ensure_ascii=False)
    return f'<tool_call>\n{{"name": "{call.name}", "arguments": {arguments}}}\n</tool_call>'


def chat_messages(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Chat:
    """The conversation as plain ``{"role", "content"}`` messages carrying the tool format.

    System messages are joined into the first one, followed by the tools block; an assistant
    turn's calls follow its text; a run of ``tool`` messages becomes one user turn of
    ``<tool_response>`` blocks.
    """
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    chat: Chat = [{"role": "system", "content": tools_system_prompt(system, tools)}]
    responses: list[str] = []
    for message in messages:
        if message.role == "tool":
            responses.append(f"<tool_response>\n{message.content}\n</tool_response>")
            continue
        if responses:
            chat.append({"role": "user", "content": "\n".join(responses)})
            responses = []
        if message.role == "system":
            continue
        if message.role == "assistant" and message.tool_calls:
            calls = "\n".join(call_text(call) for call in message.tool_calls)
            chat.append({"role": "assistant", "content": f"{message.content}\n{calls}" if message.content else calls})
        else:
            chat.append({"role": message.role, "content": message.content})
    if responses:
        chat.append({"role": "user", "content": "\n".join(responses)})
    return chat


def must_call(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> bool:
    """Whether the next reply must be a tool call: tools are offered and none has been called yet.

    The catalogue models, offered tools, answer at once from what they guess (measured:
    ``benchmarks/local_tool_calls.py``), so the first step of a tool loop is held to one call;
    once a result is in, the model chooses between another call and its answer.
    """
    return bool(tools) and not any(m.role == "tool" for m in messages)


ANSWER_GRAMMAR = r"root ::= [^{<`\x00-\x20] [^\x00]*"
"""A GBNF grammar for a reply that is text, not a call: it may not open with ``{``, ``<`` or a code fence
(where the models put a call without its tags), nor be empty. Its reply is taken as text, whatever it holds."""


def repeats_a_call(messages: Sequence[Message], calls: Sequence[ToolCall]) -> bool:
    """Whether one of ``calls`` was already made in ``messages`` (same tool, same arguments).

    The catalogue models, given a result, tend to ask for it again rather than answer; the
    provider then asks once more with calls ruled out (:data:`ANSWER_GRAMMAR`).
    """
    made = {(c.name, json.dumps(c.arguments, sort_keys=True)) for m in messages for c in m.tool_calls}
    return any((c.name, json.dumps(c.arguments, sort_keys=True)) in made for c in calls)


def parse_reply(text: str, tool_names: Sequence[str] = ()) -> tuple[str, tuple[ToolCall, ...]]:
    """The reply's own text and the calls it makes.

    Each ``<tool_call>`` block (the last may lack its closing tag when generation stopped
    there) holding ``{"name", "arguments"}`` is a call; a block that is not such an object
    becomes a call named as best it can be, with empty arguments, so the loop answers with an
    error the model sees rather than losing the attempt. A reply with no block that is, in
    whole, one such object naming one of ``tool_names``, or one such object a line, is a call
    (or several) too: small models often drop the tags. The text is what remains outside the
    blocks, stripped.
    """
    blocks = list(_CALL_BLOCK.finditer(text))
    if not blocks:
        bare = _bare_calls(text, tool_names)
        return (text.strip(), ()) if not bare else ("", bare)
    calls = tuple(_call_from(block.group(1)) for block in blocks)
    remaining = _CALL_BLOCK.sub("", text).strip()
    return remaining, calls


def _new_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _call_from(body: str) -> ToolCall:
    payload = _json_object(body)
    if payload is None:
        match = re.search(r'"name"\s*:\s*"([^"]+)"', body)
        return ToolCall(id=_new_id(), name=match.group(1) if match else "", arguments={}, arguments_text=body)
    name = payload.get("name")
    raw = payload.get("arguments", payload.get("parameters", {}))
    if isinstance(raw, str):
        text, arguments = raw, parse_arguments(raw)
    else:
        text = json.dumps(raw, ensure_ascii=False)
        arguments = raw if isinstance(raw, dict) else {}
    return ToolCall(id=_new_id(), name=str(name) if name is not None else "", arguments=arguments, arguments_text=text)


def _bare_calls(text: str, tool_names: Sequence[str]) -> tuple[ToolCall, ...]:
    """The calls of an untagged reply: the whole text, or each of its lines, a call object; else none."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.strip("`").removeprefix("json").strip()
    if _names_a_tool(stripped, tool_names):
        return (_call_from(stripped),)
    lines = [line.strip() for line in stripped.splitlines() if line.strip()]
    if len(lines) > 1 and all(_names_a_tool(line, tool_names) for line in lines):
        return tuple(_call_from(line) for line in lines)
    return ()


def _names_a_tool(text: str, tool_names: Sequence[str]) -> bool:
    payload = _json_object(text)
    return payload is not None and payload.get("name") in tool_names and "arguments" in payload


def _json_object(text: str) -> JsonObject | None:
    parsed = parse_arguments(text)
    return parsed or None


def call_grammar(tools: Sequence[ToolSpec]) -> str:
    """A GBNF grammar for a reply that is exactly one ``<tool_call>`` block calling one of ``tools``.

    The block's JSON is ``{"name": <a tool's name>, "arguments": <that tool's parameters>}``, so the
    name is always a real tool and the arguments always parse (llama.cpp's JSON-schema converter).
    """
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    schema = {
        "oneOf": [
            {
                "type": "object",
                "properties": {"name": {"const": tool.name}, "arguments": tool.parameters or {"type": "object"}},
                "required": ["name", "arguments"],
            }
            for tool in tools
        ]
    }
    rules = json_schema_to_gbnf(json.dumps(schema), prop_order=["name", "arguments"])
    body = re.sub(r"^root ::=", "call ::=", rules, flags=re.MULTILINE)
    return 'root ::= "<tool_call>\\n" call "\\n</tool_call>"\n' + body
