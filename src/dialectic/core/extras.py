"""The optional features and the extras that install them: one way to say that one is missing.

A command that needs an extra checks for it before it imports anything of it, so a missing
library is one line naming the extra to install and exit 4 (as ``--trace`` without the
OpenTelemetry SDK is), never ``unexpected ModuleNotFoundError``. The check only looks the
modules up (``importlib.util.find_spec``), so it costs no import.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

from dialectic.core.errors import ConfigError

EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "web": ("fastapi", "uvicorn", "sse_starlette", "markdown_it", "nh3"),
    "plot": ("matplotlib",),
    "mcp": ("mcp",),
    "receipts": ("cryptography",),
    "postgres": ("psycopg", "psycopg_pool"),
    "tasks": ("reasoning_gym",),
}
"""The top-level modules each extra installs that dialectic imports (``pyproject.toml``'s extras)."""


class MissingExtraError(ConfigError):
    """An optional feature was asked for without the extra that installs it (exit 4)."""

    def __init__(self, feature: str, extra: str, module: str) -> None:
        super().__init__(
            f"{feature} needs the '{extra}' extra, which is not installed (no module named '{module}'): "
            f"{install_hint(extra)}"
        )
        self.extra = extra
        self.module = module


def install_hint(extra: str) -> str:
    return f"pip install 'dialectic-debate[{extra}]'"


def missing_module(modules: Sequence[str]) -> str | None:
    """The first of ``modules`` that cannot be imported, or ``None`` when all can (nothing is imported)."""
    for name in modules:
        try:
            found = importlib.util.find_spec(name)
        except (ImportError, ValueError):  # a parent package is missing, or a module stubbed out as None
            found = None
        if found is None:
            return name
    return None


def require_extra(feature: str, extra: str) -> None:
    """Raise :class:`MissingExtraError` unless every module of ``extra`` can be imported."""
    missing = missing_module(EXTRA_MODULES[extra])
    if missing is not None:
        raise MissingExtraError(feature, extra, missing)
