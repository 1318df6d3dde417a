"""Whether a run is traced, and where the spans go: from ``--trace``, ``--trace-content`` and the environment.

Tracing is off by default. It is on with ``--trace`` (or ``--trace-content``, which also puts
prompts and replies into the spans), or when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set; ``OTEL_SDK_DISABLED=true`` turns it off. Spans go
over OTLP/HTTP (protobuf) to, in this order:

1. ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` as given, or ``OTEL_EXPORTER_OTLP_ENDPOINT`` + ``/v1/traces``
   (headers from ``OTEL_EXPORTER_OTLP_HEADERS``, read by the exporter);
2. Langfuse, when ``LANGFUSE_PUBLIC_KEY`` and ``LANGFUSE_SECRET_KEY`` are set: its OTLP endpoint
   ``${LANGFUSE_HOST}/api/public/otel/v1/traces`` (``LANGFUSE_HOST`` defaults to Langfuse Cloud)
   with Basic auth of the two keys, as Langfuse documents;
3. a collector on this machine: ``http://localhost:4318/v1/traces``, OTLP's default.

Pure: reads the mapping it is given, imports nothing of OpenTelemetry.
"""

from __future__ import annotations

import base64
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field

from dialectic.core.errors import ConfigError

DEFAULT_ENDPOINT = "http://localhost:4318/v1/traces"
LANGFUSE_CLOUD = "https://cloud.langfuse.com"
LANGFUSE_OTLP_PATH = "/api/public/otel/v1/traces"
INSTALL_HINT = "pip install 'dialectic-debate[tracing]'"
SDK_MODULES = ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")


@dataclass(frozen=True)
class TraceSettings:
    endpoint: str
    """The full URL the spans are posted to (``…/v1/traces``)."""
    destination: str
    """In words, for the line that says where traces go."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Added to ``OTEL_EXPORTER_OTLP_HEADERS``, which the exporter reads itself."""
    content: bool = False
    """Prompts and replies in the spans (``--trace-content``); off, spans carry figures only."""
    service_name: str = "dialectic"


def trace_settings(*, trace: bool, content: bool, env: Mapping[str, str]) -> TraceSettings | None:
    """The run's tracing, or ``None`` when it is off. A half-set Langfuse configuration is a ``ConfigError``."""
    asked = trace or content
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    service = env.get("OTEL_SERVICE_NAME") or "dialectic"
    traces_endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    base_endpoint = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    if traces_endpoint or base_endpoint:
        endpoint = traces_endpoint or f"{base_endpoint.removesuffix('/')}/v1/traces"
        return TraceSettings(endpoint, f"the OTLP endpoint {endpoint}", content=content, service_name=service)
    if not asked:
        return None
    public, secret = env.get("LANGFUSE_PUBLIC_KEY", "").strip(), env.get("LANGFUSE_SECRET_KEY", "").strip()
    if public or secret:
        if not (public and secret):
            missing = "LANGFUSE_SECRET_KEY" if public else "LANGFUSE_PUBLIC_KEY"
            raise ConfigError(f"tracing to Langfuse needs LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY: set {missing}")
        host = (env.get("LANGFUSE_HOST", "").strip() or LANGFUSE_CLOUD).removesuffix("/")
        token = base64.b64encode(f"{public}:{secret}".encode()).decode("ascii")
        headers = {"Authorization": f"Basic {token}", "x-langfuse-ingestion-version": "4"}
        return TraceSettings(
            f"{host}{LANGFUSE_OTLP_PATH}", f"Langfuse at {host}", headers, content=content, service_name=service
        )
    where = f"the OTLP collector at {DEFAULT_ENDPOINT}"
    return TraceSettings(DEFAULT_ENDPOINT, where, content=content, service_name=service)


def sdk_installed() -> bool:
    """Whether the OpenTelemetry SDK and its OTLP/HTTP exporter can be imported (without importing them)."""
    try:
        return all(importlib.util.find_spec(name) is not None for name in SDK_MODULES)
    except ModuleNotFoundError:
        return False
