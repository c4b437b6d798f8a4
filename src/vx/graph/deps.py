"""dependsOn specs: `name`, `^name`, `pkg#name` and `//#name`, parsed into frozen values."""

from __future__ import annotations

from enum import StrEnum
from typing import NoReturn

from vx.ids import ROOT
from vx.util.record import Frozen


class DepKind(StrEnum):
    """Where a spec looks for its task."""

    SAME = "same"  # the declaring project
    UPSTREAM = "upstream"  # every workspace package the declaring project depends on
    ANCHORED = "anchored"  # one named project (`//` for the root)


class DepSpec(Frozen):
    """One parsed dependsOn entry; `project` is set exactly when the spec is anchored."""

    __slots__ = ("kind", "project", "task")
    kind: DepKind
    task: str
    project: str | None

    def __init__(self, kind: DepKind, task: str, project: str | None = None) -> None:
        if (project is not None) != (kind is DepKind.ANCHORED):
            msg = f"only an anchored spec names a project: {kind}, {task!r}, {project!r}"
            raise ValueError(msg)
        self._init(kind=kind, task=task, project=project)

    @property
    def is_root(self) -> bool:
        """Anchored on the workspace root (`//#name`)."""
        return self.project == ROOT

    def __str__(self) -> str:
        if self.kind is DepKind.UPSTREAM:
            return f"^{self.task}"
        if self.kind is DepKind.ANCHORED:
            return f"{self.project}#{self.task}"
        return self.task


def parse_dep(text: str) -> DepSpec:
    """Read one dependsOn entry.

    A malformed entry raises `ValueError` whose message quotes the entry and says what is
    wrong with it, so the caller only adds the file and field it came from.
    """
    if text.startswith("^"):
        name = text[1:]
        if "#" in name:
            _, _, task = name.rpartition("#")
            _refuse(text, f"mixes ^ with pkg#task: write ^{task} or {name}")
        _check_task(text, name, "after ^")
        return DepSpec(DepKind.UPSTREAM, name)
    if "#" not in text:
        _check_task(text, text, "")
        return DepSpec(DepKind.SAME, text)
    project, _, task = text.partition("#")
    if "#" in task:
        _refuse(text, "holds more than one #")
    if not project:
        _refuse(text, f"names no project before # (the root's task is //#{task})")
    if _has_space(project):
        _refuse(text, "holds whitespace in its project name")
    _check_task(text, task, "after #")
    return DepSpec(DepKind.ANCHORED, task, project)


def _check_task(text: str, task: str, where: str) -> None:
    if not task:
        _refuse(text, f"names no task {where}".rstrip())
    if task.startswith("^"):
        _refuse(text, "has a task name starting with ^")
    if _has_space(task):
        _refuse(text, "holds whitespace in its task name")


def _has_space(name: str) -> bool:
    return any(ch.isspace() for ch in name)


def _refuse(text: str, reason: str) -> NoReturn:
    raise ValueError(f'"{text}" {reason}')
