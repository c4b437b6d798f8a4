"""Task ids: `pkg#task`, and `//#task` for the root project."""

from __future__ import annotations

from typing import NamedTuple

ROOT = "//"


class TaskId(NamedTuple):
    """One task of one project; orders by project then task, and prints as `project#task`."""

    project: str
    task: str

    @classmethod
    def parse(cls, text: str) -> TaskId:
        """Split on the last `#`: task names may not hold one, scoped package names may hold `/`."""
        project, sep, task = text.rpartition("#")
        if not sep or not project or not task:
            msg = f"not a task id: {text!r}"
            raise ValueError(msg)
        return cls(project, task)

    def __str__(self) -> str:
        return f"{self.project}#{self.task}"


def is_task_id(text: str) -> bool:
    """A word naming `pkg#task` rather than a bare task name."""
    return "#" in text
