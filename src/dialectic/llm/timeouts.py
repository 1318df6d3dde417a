"""Per-call timeouts: one default sized for a debate turn, and how the HTTP clients apply it.

A per-call timeout measures **inactivity**, never total length, so a call that is making progress
is not cut short:

* HTTP adapters (``openai``, ``anthropic``) pass an explicit ``httpx`` timeout whose ``read``
  part is the per-call timeout. httpx applies ``read`` to every single read of the socket, so a
  streamed reply fails only when no bytes arrive for that long, however long the whole reply
  takes; a non-streamed reply (which sends nothing until it is complete) has that long to answer.
  ``connect`` is capped at :data:`CONNECT_TIMEOUT_S`: an unreachable host is known quickly.
* The in-process ``local`` model counts each completed decode (a batch of the prompt, or one
  generated token) as progress, through llama.cpp's abort callback.

A call that times out is tried once more (``RetryPolicy.max_timeout_attempts``), so a silent
endpoint costs at most two timeouts and one short backoff before the call fails:
``2 × 120 s + at most 0.75 s ≈ 4 minutes`` with the defaults.
"""

from __future__ import annotations

DEFAULT_CALL_TIMEOUT_S = 120.0
"""Used when an agent sets no ``timeout``: ample for one debate turn from a healthy endpoint."""

CONNECT_TIMEOUT_S = 10.0


def http_timeout_parts(seconds: float | None) -> dict[str, float]:
    """The ``connect``/``read``/``write``/``pool`` parts of an httpx timeout for a per-call timeout.

    ``read`` (and ``write``, ``pool``) is the per-call timeout itself; ``connect`` is at most
    :data:`CONNECT_TIMEOUT_S`. ``None`` means :data:`DEFAULT_CALL_TIMEOUT_S`.
    """
    timeout = seconds or DEFAULT_CALL_TIMEOUT_S
    return {"connect": min(CONNECT_TIMEOUT_S, timeout), "read": timeout, "write": timeout, "pool": timeout}


def silence_message(provider: str, model: str, seconds: float | None) -> str:
    """The one-line message of a per-call timeout: what happened and which setting governs it."""
    waited = seconds or DEFAULT_CALL_TIMEOUT_S
    return (
        f"{provider}: model {model} sent nothing for {waited:g} s "
        "(the agent's per-call `timeout`, in milliseconds, sets how long to wait)"
    )
