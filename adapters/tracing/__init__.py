"""OpenTelemetry behind the tracing port. Imported only when an exporter is configured:
with tracing off not even the API package is loaded."""
