"""Where a server may listen: loopback freely, any other address only behind a token.

Shared by ``dialectic serve`` (:mod:`dialectic.web.security`) and ``dialectic mcp``
(:mod:`dialectic.mcp_server.security`), so both refuse and word the same things.
"""

from __future__ import annotations

import ipaddress

from dialectic.core.errors import InvalidArgumentsError

TOKEN_ENV = "DIALECTIC_TOKEN"
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


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve on a non-loopback address without a token, or with a token too short to be one."""
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise InvalidArgumentsError(
            f"the token must have at least {MIN_TOKEN_CHARS} characters; make one with: "
            'python -c "import secrets; print(secrets.token_urlsafe(24))"'
        )
    if token is None and not is_loopback(host):
        raise InvalidArgumentsError(
            f"--host {host} would let other machines reach the server: give a token with --token "
            f"or the {TOKEN_ENV} environment variable (or keep the default --host 127.0.0.1)"
        )
