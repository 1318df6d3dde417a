"""Tracing debates with OpenTelemetry (the optional ``tracing`` extra).

:mod:`dialectic.tracing.settings` decides whether and where to trace from the flags and the
environment without loading OpenTelemetry; :mod:`dialectic.tracing.otel` holds the tracer and
is imported only when tracing is on, so the engine never needs the SDK installed.
"""
