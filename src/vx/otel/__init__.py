"""OpenTelemetry traces of a run (`vx-runner[otel]`): events in, spans out over OTLP/HTTP.

`switch` says whether tracing is on and imports nothing; `tracer` and `export` load the SDK,
so only a traced run pays for it.
"""

from __future__ import annotations

__all__: list[str] = []
