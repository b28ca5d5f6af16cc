"""OpenTelemetry traces of ADK agents (OTLP/JSON and OTLP/protobuf), in both of ADK's telemetry schemas:
`spans` reads the files, `conversations` turns their spans into the trace model every run becomes."""
