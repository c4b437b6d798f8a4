"""The built-in tracing plugin, `"vx.plugins.otel:plugin"`: each run as OpenTelemetry spans.

vx loads it by itself when `vx-runner[otel]` is installed and `OTEL_EXPORTER_OTLP_ENDPOINT` (or
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set; declaring it in `vx.workspace.*` turns it on
without the variable, sending to the SDK's default endpoint (`http://localhost:4318`).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from vx.plugins.model import Plugin

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import TextIO

NAME = "vx-otel"
DEFAULT_ENDPOINT = "http://localhost:4318/v1/traces"


def plugin(*, env: Mapping[str, str] | None = None, err: TextIO | None = None) -> Plugin:
    """A plugin whose `telemetry` seam traces the run and hands each task its `TRACEPARENT`."""
    from vx.otel.switch import export_bound, installed, traces_endpoint

    env = os.environ if env is None else env
    if not installed():
        from vx.errors import ErrorCode, UserError

        raise UserError(
            ErrorCode.CONFIG,
            f"plugin '{NAME}' needs opentelemetry-sdk and its OTLP/HTTP exporter, which are not"
            " installed — pip install 'vx-runner[otel]'",
        )
    from vx.otel.export import BOUND_S, Shipper, otlp_exporter, resource_for
    from vx.otel.tracer import RunTracer

    endpoint = traces_endpoint(env) or DEFAULT_ENDPOINT
    bound = export_bound(env, BOUND_S)
    shipper = Shipper(
        lambda: otlp_exporter(endpoint, bound),
        endpoint=endpoint,
        err=sys.stderr if err is None else err,
        bound_s=bound,
    )
    tracer = RunTracer(resource=resource_for(env), ship=shipper.ship, env=env)
    return Plugin(name=NAME, telemetry=tracer.on_event, task_env=tracer.task_env)
