"""Where a server may listen: loopback freely, any other address only behind a token.

Shared by ``dialectic serve`` (:mod:`dialectic.web.security`) and ``dialectic mcp``
(:mod:`dialectic.mcp_server.security`), so both refuse and word the same things.
"""

from __future__ import annotations

import ipaddress
import socket

from dialectic.core import environment
from dialectic.core.errors import InvalidArgumentsError

TOKEN_ENV = environment.TOKEN
MIN_TOKEN_CHARS = 16


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) only ever means this machine."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


MAKE_TOKEN = 'python -c "import secrets; print(secrets.token_urlsafe(24))"'


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve on a non-loopback address without a token, or with one that is not a token: too short,
    or holding a space or a control character (no client could send it in an ``Authorization`` header, so a
    blank token would be a server nobody can use, not a secret)."""
    if token is not None and any(char.isspace() or not char.isprintable() for char in token):
        raise InvalidArgumentsError(
            f"the token must not hold spaces or control characters; make one with: {MAKE_TOKEN}"
        )
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise InvalidArgumentsError(
            f"the token must have at least {MIN_TOKEN_CHARS} characters; make one with: {MAKE_TOKEN}"
        )
    if token is None and not is_loopback(host):
        raise InvalidArgumentsError(
            f"--host {host} would let other machines reach the server: give a token with --token "
            f"or the {TOKEN_ENV} environment variable (or keep the default --host 127.0.0.1)"
        )


def check_port(port: int) -> None:
    """``--port``: 0 (any free port) to 65535."""
    if not 0 <= port <= 65535:
        raise InvalidArgumentsError(f"--port must be between 0 and 65535 (got {port})")


def listen(host: str, port: int, *, backlog: int = 128) -> socket.socket:
    """The listening socket, bound before anything else starts (so a taken port fails at once, exit 2)."""
    check_port(port)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise InvalidArgumentsError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(backlog)
    sock.set_inheritable(True)
    return sock
