"""Telemetry plugins on a run's event stream: each event goes to the sink, then to each hook."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.events import Notice

if TYPE_CHECKING:
    from collections.abc import Callable

    from vx.events import Event

    Sink = Callable[[Event], None]


def tee(emit: Sink, hooks: tuple[tuple[str, Sink], ...]) -> Sink:
    """`emit`, then every named hook; one that raises is told once and called no more.

    Telemetry never fails a run: a hook's error is a notice naming its plugin.
    """
    live = dict(hooks)

    def sink(event: Event) -> None:
        emit(event)
        for name, hook in list(live.items()):
            try:
                hook(event)
            except Exception as err:  # noqa: BLE001  telemetry never fails a run
                live.pop(name, None)
                line = f"[vx] plugin '{name}' failed in telemetry: {type(err).__name__}: {err}"
                emit(Notice(line))

    return sink
