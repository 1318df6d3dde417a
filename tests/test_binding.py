"""Where a server may listen (``dialectic serve`` and ``dialectic mcp`` share the rules)."""

from __future__ import annotations

import socket

import pytest

from dialectic.core.binding import check_bind, is_loopback, listen
from dialectic.core.errors import InvalidArgumentsError

TOKEN = "a-token-of-enough-characters"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.3.4.5", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("192.168.1.2", False),
        ("example.org", False),
        ("", False),
    ],
)
def test_loopback_names_and_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_binding_elsewhere_needs_a_long_enough_token() -> None:
    check_bind("127.0.0.1", None)
    check_bind("0.0.0.0", TOKEN)
    with pytest.raises(InvalidArgumentsError, match="--host 0.0.0.0 would let other machines reach the server"):
        check_bind("0.0.0.0", None)
    with pytest.raises(InvalidArgumentsError, match="at least 16 characters"):
        check_bind("127.0.0.1", "short")


def test_a_taken_port_or_one_out_of_range_is_one_line() -> None:
    taken = listen("127.0.0.1", 0)
    try:
        port = taken.getsockname()[1]
        with pytest.raises(InvalidArgumentsError, match=f"cannot listen on 127.0.0.1:{port}"):
            listen("127.0.0.1", port)
    finally:
        taken.close()
    with pytest.raises(InvalidArgumentsError, match="--port must be between 0 and 65535"):
        listen("127.0.0.1", 70000)
    assert isinstance(taken, socket.socket)
