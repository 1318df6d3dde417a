"""``--trace`` and ``--trace-content``: whether this run is traced, said on stderr, before anything is created."""

from __future__ import annotations

import os

from dialectic.cli.console import Terminal
from dialectic.core.errors import ConfigError
from dialectic.tracing.settings import INSTALL_HINT, TraceSettings, sdk_installed, trace_settings


def tracing_for(trace: bool, content: bool, term: Terminal) -> TraceSettings | None:
    """The run's tracing; asked for without the SDK it is a ``ConfigError``, implied by the environment a warning."""
    settings = trace_settings(trace=trace, content=content, env=os.environ)
    if settings is None:
        return None
    if not sdk_installed():
        if trace or content:
            flag = "--trace-content" if content else "--trace"
            raise ConfigError(f"{flag} needs the OpenTelemetry SDK, which is not installed: {INSTALL_HINT}")
        term.warning(
            f"OTEL_EXPORTER_OTLP_ENDPOINT is set but the OpenTelemetry SDK is not installed ({INSTALL_HINT}); "
            "this run is not traced"
        )
        return None
    term.line(f"tracing to {settings.destination}" + (" (with prompts and replies)" if settings.content else ""))
    return settings
