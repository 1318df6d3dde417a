"""What an OpenAI-compatible server really does with the requests dialectic sends: one probe each.

Run it against a llama.cpp server (``llama-server`` or ``python -m llama_cpp.server``) serving any model::

    .venv/bin/python benchmarks/probe_server.py --base-url http://127.0.0.1:8080/v1
    .venv/bin/python benchmarks/probe_server.py --base-url http://127.0.0.1:8080/v1 --json > findings.json

Each probe sends one request and prints what came back: the status, the fields that matter, and for
an error its exact body. The probes:

* ``GET /v1/models``, ``GET /props``, ``GET /health``: what the server says about itself (``/props``
  is llama-server's: the context size per slot is ``default_generation_settings.n_ctx``);
* Responses API: an input whose assistant turn is an untyped item (``{"role", "content"}`` without
  ``"type": "message"``, which OpenAI accepts), the same turn typed, ``text.format`` json_schema (is
  the schema enforced?), and a reply cut at ``max_output_tokens`` (which ``status``?);
* Chat Completions: ``response_format`` json_schema, and ``json_object`` with a ``schema`` beside it
  (llama-cpp-python's own form), a reply cut at ``max_tokens``, and ``tools`` (are calls parsed into
  ``tool_calls``, or left in the text?);
* a prompt longer than the context, on both APIs: the status and the exact error body.

"Enforced" for a schema means: asked for prose ("in one sentence"), the model still answered with
one JSON object holding exactly the schema's fields with the right types and labels. A small model
left free writes prose, so the answer tells a grammar-enforced schema from an ignored one.

Nothing here is specific to dialectic's code: only the standard library is used, so the script can
be pointed at any server.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from typing import Any

TIMEOUT_S = 300.0
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "colour": {"type": "string", "enum": ["red", "yellow", "blue"]},
        "confidence": {"type": "integer", "minimum": 0, "maximum": 100},
    },
    "required": ["colour", "confidence"],
    "additionalProperties": False,
}
PROSE_QUESTION = "In one sentence of plain prose, which primary colour do you like best, and why?"
READ_TOOL: dict[str, Any] = {
    "name": "file_read",
    "description": "Read a text file of the project and return its contents.",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "The file's path, e.g. notes.md"}},
        "required": ["path"],
    },
}


@dataclass
class Finding:
    """One probe: what was sent (in words), the HTTP status, and what the reply showed."""

    probe: str
    sent: str
    status: int | None = None
    seconds: float = 0.0
    facts: dict[str, Any] = field(default_factory=dict)
    error_body: str | None = None


@dataclass
class Reply:
    status: int | None
    body: Any
    text: str
    seconds: float


def call(method: str, url: str, payload: dict[str, Any] | None = None, timeout: float = TIMEOUT_S) -> Reply:
    """One HTTP request; an HTTP error is a reply like any other (its status and body are the finding)."""
    data = json.dumps(payload).encode() if payload is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
        return Reply(None, None, f"no reply: {error}", time.perf_counter() - started)
    text = raw.decode("utf-8", errors="replace")
    try:
        body: Any = json.loads(text)
    except ValueError:
        body = None
    return Reply(status, body, text, time.perf_counter() - started)


def clip(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def schema_kept(text: str) -> bool:
    """Whether ``text`` is one JSON object with exactly SCHEMA's fields, of the right types and labels."""
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return (
        isinstance(value, dict)
        and set(value) == {"colour", "confidence"}
        and value["colour"] in SCHEMA["properties"]["colour"]["enum"]
        and isinstance(value["confidence"], int)
        and 0 <= value["confidence"] <= 100
    )


def responses_text(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    return "".join(
        part.get("text") or ""
        for item in body.get("output") or ()
        if isinstance(item, dict) and item.get("type") == "message"
        for part in item.get("content") or ()
        if isinstance(part, dict) and part.get("type") == "output_text"
    )


def chat_choice(body: Any) -> dict[str, Any]:
    if isinstance(body, dict) and body.get("choices"):
        choice: dict[str, Any] = body["choices"][0]
        return choice
    return {}


class Prober:
    def __init__(self, base_url: str, model: str | None, n_ctx: int | None) -> None:
        self.base = base_url.rstrip("/")
        self.root = self.base.removesuffix("/v1")
        self.model = model
        self.n_ctx = n_ctx
        self.findings: list[Finding] = []

    def record(self, finding: Finding, reply: Reply, *, keep_error: bool = True) -> Finding:
        finding.status = reply.status
        finding.seconds = round(reply.seconds, 2)
        if keep_error and (reply.status is None or reply.status >= 400):
            finding.error_body = reply.text
        self.findings.append(finding)
        return finding

    def post(self, path: str, payload: dict[str, Any]) -> Reply:
        return call("POST", self.base + path, {"model": self.model, **payload})

    def run(self) -> list[Finding]:
        self.server_info()
        self.responses_items()
        self.responses_schema()
        self.responses_cut()
        self.chat_schema()
        self.chat_json_object()
        self.chat_cut()
        self.chat_tools()
        self.overflow()
        return self.findings

    def server_info(self) -> None:
        reply = call("GET", self.base + "/models")
        finding = self.record(Finding("models", "GET /v1/models"), reply)
        body = reply.body if isinstance(reply.body, dict) else {}
        models = body.get("data") or []
        finding.facts["top_level_keys"] = sorted(body)
        if models and isinstance(models[0], dict):
            finding.facts["ids"] = [m.get("id") for m in models]
            finding.facts["model_keys"] = sorted(models[0])
            finding.facts["meta"] = models[0].get("meta")
            self.model = self.model or models[0].get("id")

        reply = call("GET", self.root + "/props")
        finding = self.record(Finding("props", "GET /props"), reply)
        if isinstance(reply.body, dict):
            props = reply.body
            settings = props.get("default_generation_settings") or {}
            finding.facts["keys"] = sorted(props)
            finding.facts["n_ctx"] = settings.get("n_ctx", props.get("n_ctx"))
            for key in ("total_slots", "build_info", "model_path", "modalities"):
                if key in props:
                    finding.facts[key] = props[key]
            finding.facts["chat_template_chars"] = len(props.get("chat_template") or "")
            if isinstance(finding.facts["n_ctx"], int):
                self.n_ctx = self.n_ctx or finding.facts["n_ctx"]

        reply = call("GET", self.root + "/health")
        finding = self.record(Finding("health", "GET /health"), reply)
        finding.facts["body"] = clip(reply.text, 200)

    def responses_items(self) -> None:
        earlier = "Name a fruit."
        answer = "An apple."
        untyped = [
            {"role": "user", "content": earlier},
            {"role": "assistant", "content": answer},
            {"role": "user", "content": "Name another one, in one word."},
        ]
        typed = [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": earlier}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]},
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Name another one, in one word."}],
            },
        ]
        for name, items in (("responses_untyped_assistant", untyped), ("responses_typed_items", typed)):
            sent = "POST /v1/responses, input: user, assistant, user " + (
                "as bare {role, content} items" if name.endswith("assistant") else "as typed message items"
            )
            reply = self.post("/responses", {"input": items, "max_output_tokens": 16, "temperature": 0})
            finding = self.record(Finding(name, sent), reply)
            if reply.status == 200:
                finding.facts["status_field"] = reply.body.get("status")
                finding.facts["text"] = clip(responses_text(reply.body), 120)

    def responses_schema(self) -> None:
        reply = self.post(
            "/responses",
            {
                "input": PROSE_QUESTION,
                "max_output_tokens": 64,
                "temperature": 0,
                "text": {"format": {"type": "json_schema", "name": "Pick", "schema": SCHEMA, "strict": True}},
            },
        )
        finding = self.record(
            Finding("responses_json_schema", "POST /v1/responses with text.format json_schema"), reply
        )
        if reply.status == 200:
            text = responses_text(reply.body)
            finding.facts["schema_enforced"] = schema_kept(text)
            finding.facts["text"] = clip(text, 200)
            finding.facts["text_field"] = reply.body.get("text")

    def responses_cut(self) -> None:
        reply = self.post(
            "/responses",
            {"input": "Explain TCP congestion control in detail.", "max_output_tokens": 8, "temperature": 0},
        )
        finding = self.record(Finding("responses_cut", "POST /v1/responses with max_output_tokens 8"), reply)
        if reply.status == 200:
            body = reply.body
            finding.facts["status_field"] = body.get("status")
            finding.facts["incomplete_details"] = body.get("incomplete_details")
            finding.facts["usage"] = body.get("usage")
            finding.facts["output_types"] = [item.get("type") for item in body.get("output") or ()]
            finding.facts["text"] = clip(responses_text(body), 120)

    def chat_schema(self) -> None:
        reply = self.post(
            "/chat/completions",
            {
                "messages": [{"role": "user", "content": PROSE_QUESTION}],
                "max_tokens": 64,
                "temperature": 0,
                "response_format": {"type": "json_schema", "json_schema": {"name": "Pick", "schema": SCHEMA}},
            },
        )
        sent = "POST /v1/chat/completions with response_format json_schema"
        finding = self.record(Finding("chat_json_schema", sent), reply)
        if reply.status == 200:
            text = (chat_choice(reply.body).get("message") or {}).get("content") or ""
            finding.facts["schema_enforced"] = schema_kept(text)
            finding.facts["text"] = clip(text, 200)
            finding.facts["finish_reason"] = chat_choice(reply.body).get("finish_reason")

    def chat_json_object(self) -> None:
        """llama-cpp-python's own form of a schema: ``json_object`` with a ``schema`` beside it."""
        reply = self.post(
            "/chat/completions",
            {
                "messages": [{"role": "user", "content": PROSE_QUESTION}],
                "max_tokens": 64,
                "temperature": 0,
                "response_format": {"type": "json_object", "schema": SCHEMA},
            },
        )
        sent = "POST /v1/chat/completions with response_format json_object + schema"
        finding = self.record(Finding("chat_json_object_schema", sent), reply)
        if reply.status == 200:
            text = (chat_choice(reply.body).get("message") or {}).get("content") or ""
            finding.facts["schema_enforced"] = schema_kept(text)
            finding.facts["text"] = clip(text, 200)

    def chat_cut(self) -> None:
        reply = self.post(
            "/chat/completions",
            {
                "messages": [{"role": "user", "content": "Explain TCP congestion control in detail."}],
                "max_tokens": 8,
                "temperature": 0,
            },
        )
        finding = self.record(Finding("chat_cut", "POST /v1/chat/completions with max_tokens 8"), reply)
        if reply.status == 200:
            finding.facts["finish_reason"] = chat_choice(reply.body).get("finish_reason")
            finding.facts["usage"] = reply.body.get("usage")

    def chat_tools(self) -> None:
        reply = self.post(
            "/chat/completions",
            {
                "messages": [
                    {"role": "system", "content": "You answer from the project's files, which you read with tools."},
                    {"role": "user", "content": "What does notes.md say? Read it first."},
                ],
                "tools": [{"type": "function", "function": READ_TOOL}],
                "max_tokens": 64,
                "temperature": 0,
            },
        )
        finding = self.record(Finding("chat_tools", "POST /v1/chat/completions with one function tool"), reply)
        if reply.status == 200:
            choice = chat_choice(reply.body)
            message = choice.get("message") or {}
            finding.facts["finish_reason"] = choice.get("finish_reason")
            finding.facts["tool_calls"] = message.get("tool_calls")
            finding.facts["content"] = clip(message.get("content") or "", 200)

    def overflow(self) -> None:
        window = self.n_ctx or 32_768
        prompt = "lorem ipsum " * (window + 200)  # about two tokens a repetition: well past the window
        sent = f"a prompt of about {2 * (window + 200)} tokens (context {self.n_ctx or 'unknown'})"
        reply = self.post("/chat/completions", {"messages": [{"role": "user", "content": prompt}], "max_tokens": 4})
        self.record(Finding("overflow_chat", "POST /v1/chat/completions, " + sent), reply)
        reply = self.post("/responses", {"input": prompt, "max_output_tokens": 4})
        self.record(Finding("overflow_responses", "POST /v1/responses, " + sent), reply)


def show(findings: list[Finding]) -> None:
    for finding in findings:
        print(f"## {finding.probe}: {finding.sent}")
        print(f"   status {finding.status} in {finding.seconds} s")
        for key, value in finding.facts.items():
            print(f"   {key}: {json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value}")
        if finding.error_body is not None:
            print(f"   error body: {clip(finding.error_body, 1000)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--base-url", required=True, help="The server's OpenAI base URL, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--model", help="The model name to send (default: the first of GET /v1/models)")
    parser.add_argument("--n-ctx", type=int, help="The context size, where the server has no /props")
    parser.add_argument("--json", action="store_true", help="Print the findings as JSON")
    args = parser.parse_args(argv)
    findings = Prober(args.base_url, args.model, args.n_ctx).run()
    if args.json:
        json.dump([asdict(f) for f in findings], sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        show(findings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
