"""Keys and tokens removed from text before it is shown or saved.

A provider's error body may echo the request's credentials (some proxies print the
``Authorization`` header back, some servers quote the key they rejected). Every error line,
``--verbose`` detail and progress line the CLI prints goes through :func:`redact`, and so does
every provider error's message and detail when it is made (so a stored contribution's error
cannot hold a key either). It removes two kinds of secret:

* the values of the API-key environment variables in use: every provider's key variable,
  the ``apiKeyEnv`` names the configuration used, and any variable whose name says it holds
  a secret (``*_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``);
* anything shaped like a credential: ``sk-…`` keys, ``Bearer …`` tokens, the value after
  ``x-api-key``/``api_key``/``authorization``/``token``/``secret``/``password``, and long
  runs of base64- or hex-looking characters (32 or more, random-looking: see
  :func:`_looks_like_token`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

_KEY_ENV_NAMES: set[str] = set()
"""API-key variables named by providers and configurations (see :func:`note_key_env`)."""


def note_key_env(name: str) -> None:
    """Remember that environment variable ``name`` holds an API key, so its value is never shown."""
    _KEY_ENV_NAMES.add(name)


REDACTED = "[redacted]"
MIN_SECRET_CHARS = 6
"""Shorter environment values are not searched for: they would blank out ordinary words."""

_SECRET_NAME = re.compile(r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD)$", re.IGNORECASE)
_LABELLED = re.compile(
    r"""(?P<label>\b(?:x-api-key|api[_-]?key|apikey|authorization|access[_-]?token|refresh[_-]?token|token|secret|
    client[_-]?secret|password)\b["']?\s*[:=]\s*["']?)(?P<value>(?:Bearer\s+)?[^\s"',;}]+)""",
    re.IGNORECASE | re.VERBOSE,
)
_BEARER = re.compile(r"\b(?P<label>Bearer\s+)(?P<value>[A-Za-z0-9._~+/=-]+)", re.IGNORECASE)
_SK_KEY = re.compile(r"\bsk-[A-Za-z0-9_-]{6,}")
_LONG_RUN = re.compile(r"(?<![A-Za-z0-9+_=-])[A-Za-z0-9+_-]{32,}={0,2}(?![A-Za-z0-9+_=-])")
"""32+ characters of base64(url) or hex; "/" is left out so file paths stay whole."""
_HEX = re.compile(r"^[0-9a-fA-F]+$")


def secret_values(environ: Mapping[str, str] | None = None, names: Iterable[str] = ()) -> list[str]:
    """The values worth hiding: key variables of the providers and config, and secret-named variables."""
    env = os.environ if environ is None else environ
    wanted = set(names) | _KEY_ENV_NAMES
    wanted |= {name for name in env if _SECRET_NAME.search(name)}
    values = {env[name].strip() for name in wanted if name in env}
    return sorted((v for v in values if len(v) >= MIN_SECRET_CHARS), key=len, reverse=True)


def _looks_like_token(run: str) -> bool:
    """Whether a long run reads as random: hex with digits, or base64 mixing upper case, lower case and digits.

    Words joined by ``_`` or ``-`` (file names, test names, model names) mix at most two of those.
    """
    has_digit = any(c.isdigit() for c in run)
    if _HEX.match(run):
        return has_digit and any(c.isalpha() for c in run)
    return has_digit and any(c.isupper() for c in run) and any(c.islower() for c in run)


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with every secret replaced by ``[redacted]``; ``secrets`` defaults to :func:`secret_values`."""
    if not text:
        return text
    for value in secret_values() if secrets is None else secrets:
        text = text.replace(value, REDACTED)
    text = _LABELLED.sub(lambda m: m.group("label") + REDACTED, text)
    text = _BEARER.sub(lambda m: m.group("label") + REDACTED, text)
    text = _SK_KEY.sub(REDACTED, text)
    return _LONG_RUN.sub(lambda m: REDACTED if _looks_like_token(m.group(0)) else m.group(0), text)
