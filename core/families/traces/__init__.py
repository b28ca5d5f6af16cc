"""OpenTelemetry traces as a format family: each traced conversation not yet a case is a pending case."""
