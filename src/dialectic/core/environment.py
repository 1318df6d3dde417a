"""The one module that reads the ``DIALECTIC_*`` environment variables: their names and typed accessors.

Every other module asks here (``environment.home()``, ``environment.token()``…) instead of reading
``os.environ`` itself, so a variable's name, its trimming and what "unset" means are decided once.
Each accessor takes the environment as a mapping (``os.environ`` when none is given), so a caller
that was handed an environment, and a test, pass their own. A value that is empty or only blanks
counts as unset (``None``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from dialectic.core.errors import ConfigError

PREFIX = "DIALECTIC_"
HOME = "DIALECTIC_HOME"
"""The directory debates, caches and settings are kept under (the user's data directory when unset)."""
STORE = "DIALECTIC_STORE"
"""Where debates are kept: a directory, a database file or a ``postgresql://`` URL (wins over ``HOME``)."""
CACHE = "DIALECTIC_CACHE"
"""Where downloaded local models are cached."""
LOCAL_N_CTX = "DIALECTIC_LOCAL_N_CTX"
"""The local model's context size, in tokens."""
TOKEN = "DIALECTIC_TOKEN"
"""The bearer token ``serve`` and ``mcp --http`` require."""
RECEIPT_KEY = "DIALECTIC_RECEIPT_KEY"
"""The private key file that signs receipts (``--sign-key`` wins)."""
HOOK_SECRET = "DIALECTIC_HOOK_SECRET"
"""The default variable holding a webhook's signing secret (``hooks.secretEnv``)."""
PROMPT_CACHE = "DIALECTIC_PROMPT_CACHE"
"""``off`` asks no provider to reuse cached prompt prefixes (``benchmarks/speed.py`` compares the two)."""
STORE_OUTAGE_S = "DIALECTIC_STORE_OUTAGE_S"
"""How many seconds a run waits for an unreachable store before it stops as ``interrupted`` (60 when unset)."""


def value(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """``name``'s value without surrounding blanks; ``None`` when unset or blank."""
    raw = (os.environ if env is None else env).get(name, "").strip()
    return raw or None


def home(env: Mapping[str, str] | None = None) -> str | None:
    return value(HOME, env)


def store(env: Mapping[str, str] | None = None) -> str | None:
    return value(STORE, env)


def cache(env: Mapping[str, str] | None = None) -> str | None:
    return value(CACHE, env)


def local_n_ctx(env: Mapping[str, str] | None = None) -> str | None:
    """As written: :mod:`dialectic.llm.local_provider` checks it is a number of tokens."""
    return value(LOCAL_N_CTX, env)


def token(env: Mapping[str, str] | None = None) -> str | None:
    return value(TOKEN, env)


def receipt_key(env: Mapping[str, str] | None = None) -> str | None:
    return value(RECEIPT_KEY, env)


def store_outage_s(env: Mapping[str, str] | None = None) -> float | None:
    """The store outage bound in seconds; ``None`` when unset; :class:`ConfigError` when it is not a positive
    number."""
    raw = value(STORE_OUTAGE_S, env)
    if raw is None:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise ConfigError(f"{STORE_OUTAGE_S} must be a positive number of seconds, not {raw!r}")
    return seconds


def own_variables(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every ``DIALECTIC_*`` variable set, as given (a Ray worker is handed them: it does not inherit them)."""
    return {name: raw for name, raw in (os.environ if env is None else env).items() if name.startswith(PREFIX)}


def prompt_cache(env: Mapping[str, str] | None = None) -> bool:
    """Whether providers are asked to reuse cached prompt prefixes: on unless ``off``, ``0``, ``false`` or ``no``."""
    return (value(PROMPT_CACHE, env) or "on").lower() not in ("off", "0", "false", "no")
