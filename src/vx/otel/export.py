"""Sending a run's spans over OTLP/HTTP within a bound: a slow or absent collector costs a run
at most `BOUND_S`, then the spans are dropped and stderr says so, once per process."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import TextIO

    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExporter

BOUND_S = 2.0


class Shipper:
    """Exports batches of spans with one exporter, built in the background as the run starts.

    The exporter's import (it brings `requests`) overlaps the run instead of delaying it.
    Each `ship` waits at most `bound_s` for the exporter to be built and to answer.
    """

    def __init__(
        self,
        build: Callable[[], SpanExporter],
        *,
        endpoint: str,
        err: TextIO,
        bound_s: float = BOUND_S,
    ) -> None:
        self._endpoint = endpoint
        self._err = err
        self._bound_s = bound_s
        self._said = False
        self._exporter: SpanExporter | None = None
        self._problem: str | None = None
        self._built = threading.Thread(target=self._build, args=(build,), daemon=True)
        self._built.start()

    def _build(self, build: Callable[[], SpanExporter]) -> None:
        try:
            self._exporter = build()
        except Exception as err:  # noqa: BLE001  a broken setting drops traces, not the run
            self._problem = f"{type(err).__name__}: {err}"

    def ship(self, spans: list[ReadableSpan]) -> None:
        """Export `spans` or drop them, never taking longer than the bound."""
        if not spans:
            return
        import time

        deadline = time.monotonic() + self._bound_s
        self._built.join(self._bound_s)
        exporter = self._exporter
        if exporter is None:
            why = self._problem or f"it was not ready within {self._bound_s:g} s"
            self._say(f"could not set up the exporter ({why})", len(spans))
            return
        answer: list[bool] = []

        def send() -> None:
            from opentelemetry.sdk.trace.export import SpanExportResult

            try:
                answer.append(exporter.export(spans) is SpanExportResult.SUCCESS)
            except Exception:  # noqa: BLE001  any exporter failure is a drop, said once
                answer.append(False)

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        sender.join(max(0.0, deadline - time.monotonic()))
        if not answer:
            self._say(f"no answer within {self._bound_s:g} s", len(spans))
        elif not answer[0]:
            self._say("the collector refused them or could not be reached", len(spans))

    def _say(self, why: str, count: int) -> None:
        if self._said:
            return
        self._said = True
        noun = "span" if count == 1 else "spans"
        try:
            self._err.write(
                f"vx: dropped {count} trace {noun} for {self._endpoint}: {why}"
                " — check OTEL_EXPORTER_OTLP_ENDPOINT and that the collector is up\n"
            )
            self._err.flush()
        except (OSError, ValueError):
            pass


def otlp_exporter(endpoint: str, bound_s: float = BOUND_S) -> SpanExporter:
    """The official OTLP/HTTP exporter for `endpoint`; headers, certificates and compression
    come from the standard `OTEL_EXPORTER_OTLP_*` variables, which the SDK reads itself.

    The SDK's own log lines are silenced: a failed export is reported once, by `Shipper`.
    """
    for name in ("opentelemetry", "urllib3"):
        quiet = logging.getLogger(name)
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(endpoint=endpoint, timeout=bound_s)


def resource_for(env: Mapping[str, str]) -> Resource:
    """The resource every span carries: `OTEL_SERVICE_NAME` or `vx`, plus the standard
    `OTEL_RESOURCE_ATTRIBUTES`, which the SDK reads itself."""
    from opentelemetry.sdk.resources import SERVICE_NAME
    from opentelemetry.sdk.resources import Resource as Made

    return Made.create({SERVICE_NAME: env.get("OTEL_SERVICE_NAME", "").strip() or "vx"})
