"""Telemetry plugins on a run: each event goes to the sink, then to each hook; and the
variables their `task_env` hooks hand each task."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from vx.events import Notice

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from vx.events import Event
    from vx.ids import TaskId

    Sink = Callable[[Event], None]
    Handed = Callable[[TaskId, tuple[TaskId, ...]], Mapping[str, str]]


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


def handed_env(emit: Sink, hooks: tuple[tuple[str, Handed], ...]) -> Handed:
    """Every named `task_env` hook's variables for a task, merged in order; one that raises is
    told once and asked no more, and the task runs without its variables.

    The hooks are asked once per task, when a worker takes it up; asking again (as the
    executor does when it builds the environment) returns that first answer.
    """
    live = dict(hooks)
    answered: dict[TaskId, Mapping[str, str]] = {}
    lock = threading.Lock()

    def handed(tid: TaskId, deps: tuple[TaskId, ...]) -> Mapping[str, str]:
        with lock:
            if tid in answered:
                return answered[tid]
        merged: dict[str, str] = {}
        for name, hook in list(live.items()):
            try:
                merged.update(hook(tid, deps))
            except Exception as err:  # noqa: BLE001  telemetry never fails a run
                live.pop(name, None)
                line = f"[vx] plugin '{name}' failed in task_env: {type(err).__name__}: {err}"
                emit(Notice(line))
        with lock:
            return answered.setdefault(tid, merged)

    return handed
