"""Keeping secrets out of every response: the server's token and the API keys in its environment.

The server never puts a key in a response on purpose (keys stay in its environment; a
configuration sent over the API cannot name one). This is the last line: any response text
that holds one of those exact values has it replaced before it leaves. Only exact values are
replaced, so a model's reply is never mangled by patterns that merely look like keys.
"""

from __future__ import annotations

from collections.abc import Iterable

from dialectic.core.redaction import REDACTED, secret_values


class SecretScrubber:
    """Replaces the given secret values (and the environment's key values) in outgoing text."""

    def __init__(self, extra: Iterable[str] = ()) -> None:
        values = {v for v in (*secret_values(), *extra) if v}
        self._values = sorted(values, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, REDACTED)
        return text
