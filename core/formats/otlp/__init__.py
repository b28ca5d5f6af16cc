"""OpenTelemetry trace files (OTLP/JSON and OTLP/protobuf) as their spans (`spans`); `traces.otlp` makes
ADK's spans, in both of its telemetry schemas, the conversations every run becomes."""
