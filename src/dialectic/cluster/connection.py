"""Joining a Ray cluster: ``--ray ADDRESS`` joins the one at ``host:port``, ``--ray auto`` the one running on
this machine, else a new local one started for the command (stopped when the driver disconnects)."""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping
from typing import Any

from dialectic.core import environment
from dialectic.core.errors import DialecticError, InvalidArgumentsError

RAY_MISSING = "--ray needs Ray, which is not installed: pip install 'dialectic-debate[ray]'"
NAMESPACE = "dialectic"
_TOKEN_HINT = "set RAY_AUTH_MODE=token, and RAY_AUTH_TOKEN or ~/.ray/auth_token to its token"
_FORWARDED_SUFFIXES = ("_API_KEY", "_BASE_URL")
_FORWARDED_PREFIXES = (environment.PREFIX,)
PROBE_TIMEOUT_S = 5.0
"""How long joining waits for the cluster's address to accept a connection (Ray itself would retry for ever)."""


def import_ray() -> Any:
    """The ``ray`` module, or :class:`InvalidArgumentsError` (exit 2) telling to install the extra."""
    try:
        import ray
    except ImportError:
        raise InvalidArgumentsError(RAY_MISSING) from None
    return ray


def check_address(address: str) -> None:
    """A usage error for an empty ``--ray``, or when Ray is not installed: before anything is created."""
    if not address.strip():
        raise InvalidArgumentsError("--ray: give a cluster address (host:port) or 'auto'")
    import_ray()


def forwarded_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables the workers need to reach the providers as the driver does: API keys, base URLs,
    ``DIALECTIC_*`` (a worker started by ``ray start`` does not have the driver's environment)."""
    return {
        name: value
        for name, value in environ.items()
        if name.endswith(_FORWARDED_SUFFIXES) or name.startswith(_FORWARDED_PREFIXES)
    }


def host_and_port(address: str) -> tuple[str, int] | None:
    """``host:port`` of a cluster address (``ray://`` of Ray Client too); ``None`` when it names no port."""
    rest = address.split("://", 1)[-1].rstrip("/")
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def probe(address: str, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """A :class:`DialecticError` when nothing accepts a connection at ``address``: ``ray.init`` would wait on
    an address nobody answers at, retrying without end."""
    target = host_and_port(address)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=timeout_s):
            pass
    except OSError as exc:
        why = exc.strerror or str(exc) or type(exc).__name__
        raise DialecticError(f"cannot join the Ray cluster at {address}: nothing answers there ({why})") from None


def connect(address: str) -> str:
    """Join the cluster at ``address`` (``auto``: the one running on this machine, else a new local one);
    the address joined. A cluster that cannot be reached is a :class:`DialecticError`."""
    ray = import_ray()
    env_vars = forwarded_env(os.environ)
    options: dict[str, Any] = {
        "namespace": NAMESPACE,
        "log_to_driver": False,
        "logging_level": logging.WARNING,
        "runtime_env": {"env_vars": env_vars} if env_vars else None,
    }
    try:
        if address == "auto":
            try:
                context = ray.init(address="auto", **options)
            except ConnectionError:  # none running here: start one, for this command only
                context = ray.init(include_dashboard=False, **options)
        else:
            probe(address)
            context = ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        hint = "" if os.environ.get("RAY_AUTH_MODE") else f" (if it uses token authentication: {_TOKEN_HINT})"
        raise DialecticError(f"cannot join the Ray cluster at {address}: {exc}{hint}") from None
    return str(getattr(context, "address_info", {}).get("gcs_address") or address)


def disconnect() -> None:
    ray = import_ray()
    if ray.is_initialized():
        ray.shutdown()
