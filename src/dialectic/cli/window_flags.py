"""``--context-window``: participants' context windows set anew when a debate is resumed."""

from __future__ import annotations

from dialectic.core.errors import InvalidArgumentsError

EVERYONE = "*"
"""The key under which a window given without a participant's id applies to every participant."""


def parse_windows(values: list[str] | None) -> dict[str, int]:
    """``["8192", "agent-kiss=16384"]`` → ``{"*": 8192, "agent-kiss": 16384}``; a malformed value is an error."""
    windows: dict[str, int] = {}
    for value in values or []:
        who, _, tokens = value.rpartition("=")
        key = who.strip() or EVERYONE
        if "=" in value and not who.strip():
            raise InvalidArgumentsError(f"--context-window {value!r}: name a participant before '=' (ID=TOKENS)")
        if not tokens.strip().isdigit():
            raise InvalidArgumentsError(
                f"--context-window {value!r}: expected TOKENS or ID=TOKENS, a whole number of tokens (e.g. 8192)"
            )
        windows[key] = int(tokens)
    return windows
