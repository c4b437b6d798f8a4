"""Whether a run is traced: the `otel` extra installed and an OTLP endpoint set; no SDK import."""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

ENDPOINT = "OTEL_EXPORTER_OTLP_ENDPOINT"
TRACES_ENDPOINT = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"


def traces_endpoint(env: Mapping[str, str]) -> str | None:
    """Where spans go: the traces endpoint as given, else the base endpoint's `/v1/traces`."""
    own = env.get(TRACES_ENDPOINT, "").strip()
    if own:
        return own
    base = env.get(ENDPOINT, "").strip()
    return f"{base.rstrip('/')}/v1/traces" if base else None


def installed() -> bool:
    """The SDK and its OTLP/HTTP exporter can be imported (`pip install 'vx-runner[otel]'`)."""
    try:
        return (
            importlib.util.find_spec("opentelemetry.sdk") is not None
            and importlib.util.find_spec("opentelemetry.exporter.otlp.proto.http") is not None
        )
    except ModuleNotFoundError:
        return False


def wanted(env: Mapping[str, str]) -> bool:
    """Tracing is on by the environment: an endpoint is set (checked first: it costs nothing)
    and the extra is installed; `OTEL_SDK_DISABLED=true` turns it off, as for any SDK."""
    if traces_endpoint(env) is None:
        return False
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return installed()


def export_bound(env: Mapping[str, str], default: float) -> float:
    """How long a run's export may take, in seconds: the standard
    `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT` or `OTEL_EXPORTER_OTLP_TIMEOUT` as the Python SDK reads
    them (seconds), else `default`; a value that is not a positive number is ignored."""
    for name in ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"):
        try:
            value = float(env.get(name, ""))
        except ValueError:
            continue
        if 0 < value < float("inf"):
            return value
    return default
