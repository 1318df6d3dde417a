"""The API's reference page (``/docs``), written on the server from the OpenAPI schema.

FastAPI's own ``/docs`` (Swagger UI) and ``/redoc`` load their scripts from a CDN: offline, or under
the page's Content-Security-Policy, they show a blank page. This one is plain HTML with the server's
own style sheet and no script: every operation with its parameters, body fields and answers, and a
link to the schema itself (``/openapi.json``) for tools.
"""

from __future__ import annotations

from html import escape
from typing import Any

_METHODS = ("get", "post", "put", "patch", "delete")


def _ref_name(schema: dict[str, Any]) -> str | None:
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    for combinator in ("anyOf", "oneOf", "allOf"):
        for option in schema.get(combinator, ()):
            name = _ref_name(option)
            if name is not None:
                return name
    return None


def _type_of(schema: dict[str, Any]) -> str:
    name = _ref_name(schema)
    if name is not None:
        return name
    if "anyOf" in schema:
        return " or ".join(_type_of(option) for option in schema["anyOf"])
    if schema.get("type") == "array":
        return f"list of {_type_of(schema.get('items', {}))}"
    return str(schema.get("type", "any"))


def _fields(name: str, components: dict[str, Any]) -> list[str]:
    """A body model's fields as table rows (name, type, required, description)."""
    schema = components.get(name, {})
    required = set(schema.get("required", ()))
    rows = []
    for field, sub in schema.get("properties", {}).items():
        rows.append(
            f"<tr><td><code>{escape(field)}</code></td><td>{escape(_type_of(sub))}</td>"
            f"<td>{'yes' if field in required else ''}</td><td>{escape(sub.get('description', ''))}</td></tr>"
        )
    return rows


def _operation(path: str, method: str, op: dict[str, Any], components: dict[str, Any]) -> str:
    parts = [f'<section class="card"><h3><code>{method.upper()} {escape(path)}</code></h3>']
    if op.get("summary"):
        parts.append(f"<p><strong>{escape(op['summary'])}</strong></p>")
    if op.get("description"):
        parts.extend(f"<p>{escape(para)}</p>" for para in op["description"].split("\n\n") if para.strip())
    params = op.get("parameters", [])
    if params:
        parts.append("<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>type</th><th>required</th></tr>")
        for p in params:
            parts.append(
                f"<tr><td><code>{escape(p['name'])}</code></td><td>{escape(p.get('in', ''))}</td>"
                f"<td>{escape(_type_of(p.get('schema', {})))}</td><td>{'yes' if p.get('required') else ''}</td></tr>"
            )
        parts.append("</table>")
    body = op.get("requestBody", {}).get("content", {})
    for media, content in body.items():
        name = _ref_name(content.get("schema", {}))
        parts.append(f"<h4>Body ({escape(media)}){': ' + escape(name) if name else ''}</h4>")
        rows = _fields(name, components) if name else []
        if rows:
            parts.append("<table><tr><th>field</th><th>type</th><th>required</th><th>description</th></tr>")
            parts.extend(rows)
            parts.append("</table>")
    answers = op.get("responses", {})
    if answers:
        listed = ", ".join(f"{escape(code)} {escape(r.get('description', ''))}" for code, r in answers.items())
        parts.append(f"<p>Answers: {listed}</p>")
    parts.append("</section>")
    return "\n".join(parts)


def api_docs_html(schema: dict[str, Any]) -> str:
    """The whole page for ``schema`` (an OpenAPI document, as ``app.openapi()`` gives it)."""
    info = schema.get("info", {})
    components = schema.get("components", {}).get("schemas", {})
    title = escape(f"{info.get('title', 'API')} {info.get('version', '')} API".strip())
    body = []
    for path, item in schema.get("paths", {}).items():
        for method in _METHODS:
            if method in item:
                body.append(_operation(path, method, item[method], components))
    summary = escape(info.get("summary", ""))
    operations = "\n".join(body)
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="/static/style.css">
</head>
<body>
<header class="top"><p class="brand"><a href="/">dialectic</a></p>
<nav><ul><li><a href="/openapi.json">OpenAPI schema (JSON)</a></li></ul></nav></header>
<main>
<h1>{title}</h1>
<p>{summary} Every operation of this server follows; the schema itself is at
<a href="/openapi.json"><code>/openapi.json</code></a> for tools that read it.</p>
{operations}
</main>
</body>
</html>
"""
