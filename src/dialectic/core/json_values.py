"""Raw JSON at the boundaries: what a wire, a file, a provider or a template hands over before a model
validates it.

``Any`` stays in these two names and at a few third-party edges (each says why where it is used); the
rest of ``core``, ``engine`` and ``llm`` is typed. A JSON value's type is known only once it is validated,
so these aliases say "unvalidated JSON" where ``Any`` alone would say nothing.
"""

from __future__ import annotations

from typing import Any

JsonValue = Any
"""Any JSON value as parsed (an object, array, string, number, boolean or null), not yet validated."""

JsonObject = dict[str, Any]
"""A JSON object as parsed or about to be sent: request bodies, replies, schemas, tool arguments."""
