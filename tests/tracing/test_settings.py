"""Whether a run is traced, and where to: flags, the OTLP environment, Langfuse, and a missing SDK."""

from __future__ import annotations

import base64

import pytest

from dialectic.cli import tracing_flags
from dialectic.cli.console import Terminal
from dialectic.core.errors import ConfigError
from dialectic.tracing.settings import DEFAULT_ENDPOINT, trace_settings

LANGFUSE = {"LANGFUSE_PUBLIC_KEY": "pk-lf-1", "LANGFUSE_SECRET_KEY": "sk-lf-2"}


def test_off_by_default_even_with_langfuse_keys_set() -> None:
    assert trace_settings(trace=False, content=False, env={}) is None
    assert trace_settings(trace=False, content=False, env=LANGFUSE) is None


def test_the_otlp_endpoint_in_the_environment_turns_it_on() -> None:
    settings = trace_settings(trace=False, content=False, env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"})
    assert settings is not None and settings.endpoint == "http://c:4318/v1/traces" and not settings.content
    traces = {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:9/traces", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}
    assert trace_settings(trace=False, content=False, env=traces).endpoint == "http://c:9/traces"  # type: ignore[union-attr]


def test_trace_without_an_endpoint_goes_to_langfuse_with_basic_auth() -> None:
    settings = trace_settings(trace=True, content=False, env={**LANGFUSE, "LANGFUSE_HOST": "https://lf.example/"})
    assert settings is not None
    assert settings.endpoint == "https://lf.example/api/public/otel/v1/traces"
    assert settings.headers["Authorization"] == "Basic " + base64.b64encode(b"pk-lf-1:sk-lf-2").decode()
    assert settings.headers["x-langfuse-ingestion-version"] == "4"
    cloud = trace_settings(trace=True, content=False, env=LANGFUSE)
    assert cloud is not None and cloud.endpoint == "https://cloud.langfuse.com/api/public/otel/v1/traces"


def test_the_otlp_environment_wins_over_langfuse_and_localhost_is_the_last_resort() -> None:
    env = {**LANGFUSE, "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}
    assert trace_settings(trace=True, content=False, env=env).endpoint == "http://c:4318/v1/traces"  # type: ignore[union-attr]
    assert trace_settings(trace=True, content=False, env={}).endpoint == DEFAULT_ENDPOINT  # type: ignore[union-attr]


def test_trace_content_turns_tracing_on_with_content() -> None:
    settings = trace_settings(trace=False, content=True, env={})
    assert settings is not None and settings.content


def test_half_a_langfuse_configuration_is_an_error() -> None:
    with pytest.raises(ConfigError, match="set LANGFUSE_SECRET_KEY"):
        trace_settings(trace=True, content=False, env={"LANGFUSE_PUBLIC_KEY": "pk"})


def test_otel_sdk_disabled_turns_it_off() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}
    assert trace_settings(trace=True, content=False, env=env) is None


def test_without_the_sdk_asking_is_an_error_and_the_environment_only_a_warning(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(tracing_flags, "sdk_installed", lambda: False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")
    with pytest.raises(ConfigError, match=r"--trace needs the OpenTelemetry SDK.*dialectic-debate\[tracing\]"):
        tracing_flags.tracing_for(True, False, Terminal())
    assert tracing_flags.tracing_for(False, False, Terminal()) is None
    assert "this run is not traced" in capsys.readouterr().err
