"""`vx.run.telemetry` and the handed variables: plugins' task_env hooks merge in order, are
asked once a task, a failing one is told once and dropped, and what they hand a task lands
last in its env."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.events import Event, Notice
from vx.ids import TaskId
from vx.run.taskenv import task_env
from vx.run.telemetry import handed_env
from vx.workspace.model import EnvSpec, ExecSpec

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

APP = TaskId("app", "build")


def test_hooks_merge_in_order_and_a_failing_one_is_dropped_once() -> None:
    said: list[Event] = []
    asked: list[str] = []

    def first(tid: TaskId, deps: tuple[TaskId, ...]) -> Mapping[str, str]:
        asked.append(f"first {tid} {len(deps)}")
        return {"TRACEPARENT": "00-a-b-01", "X": "1"}

    def second(_tid: TaskId, _deps: tuple[TaskId, ...]) -> Mapping[str, str]:
        return {"X": "2"}

    def broken(_tid: TaskId, _deps: tuple[TaskId, ...]) -> Mapping[str, str]:
        raise RuntimeError("no collector")

    handed = handed_env(said.append, (("one", first), ("bad", broken), ("two", second)))
    lib = TaskId("lib", "build")
    assert handed(APP, (lib,)) == {"TRACEPARENT": "00-a-b-01", "X": "2"}
    assert handed(APP, (lib,)) == {"TRACEPARENT": "00-a-b-01", "X": "2"}  # asked once a task
    assert handed(lib, ()) == {"TRACEPARENT": "00-a-b-01", "X": "2"}
    assert said == [
        Notice("[vx] plugin 'bad' failed in task_env: RuntimeError: no collector"),
    ]
    assert asked == ["first app#build 1", "first lib#build 0"]


def test_handed_variables_are_set_after_define(tmp_path: Path) -> None:
    spec = ExecSpec(
        "true", env=EnvSpec((), MappingProxyType({"TRACEPARENT": "mine", "A": "1"}), ())
    )
    env = task_env(
        base={"PATH": "/bin", "TRACEPARENT": "outer"},
        exec_spec=spec,
        project_dir=tmp_path,
        root=tmp_path,
        task_id=str(APP),
        handed={"TRACEPARENT": "00-t-s-01"},
    )
    assert env.env["TRACEPARENT"] == "00-t-s-01"
    assert env.env["A"] == "1"
