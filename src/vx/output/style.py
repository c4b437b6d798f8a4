"""The palette and how text is painted: status and cache hues, identity colours for task ids."""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

from vx.util.record import Record

if TYPE_CHECKING:
    from vx.ids import TaskId

RGB = tuple[int, int, int]

SUCCESS: RGB = (34, 197, 94)
ERROR: RGB = (239, 68, 68)
WARN: RGB = (234, 179, 8)
ACCENT: RGB = (6, 182, 212)

MISS: RGB = (249, 115, 22)
NO_CACHE: RGB = (156, 163, 175)
FRESH: RGB = (20, 184, 166)
LOCAL: RGB = (34, 197, 94)
REMOTE: RGB = (56, 189, 248)

TASK_HUE: RGB = (244, 114, 182)
PROJECT_HUES: tuple[RGB, ...] = (
    (167, 139, 250),
    (129, 140, 248),
    (196, 181, 253),
    (214, 184, 138),
    (192, 132, 151),
    (148, 163, 214),
)
"""Identity hues sit outside the status and cache hues, so an id never reads as an outcome."""

RESET = "\x1b[0m"


def project_hue(project: str) -> RGB:
    """A hue that depends on the name alone: the same project looks the same in every run."""
    return PROJECT_HUES[zlib.crc32(project.encode()) % len(PROJECT_HUES)]


def sgr(rgb: RGB | None = None, *, bold: bool = False, dim: bool = False) -> str:
    """One Select Graphic Rendition sequence: bold, dim, then a truecolor foreground."""
    codes = [c for c, on in (("1", bold), ("2", dim)) if on]
    if rgb is not None:
        codes.append("38;2;{};{};{}".format(*rgb))
    return f"\x1b[{';'.join(codes)}m" if codes else ""


class Style(Record):
    """Paints text when colour is on and returns it untouched when it is off.

    Blank text is never painted, so an empty table cell carries no escape.
    """

    color: bool

    def paint(
        self, text: str, rgb: RGB | None = None, *, bold: bool = False, dim: bool = False
    ) -> str:
        if not self.color or not text.strip():
            return text
        start = sgr(rgb, bold=bold, dim=dim)
        return f"{start}{text}{RESET}" if start else text

    def dim(self, text: str) -> str:
        return self.paint(text, dim=True)

    def bold(self, text: str) -> str:
        return self.paint(text, bold=True)

    def task_id(self, task: TaskId) -> str:
        """`project#task`: the project in its own hue, the task in a fixed pink, `#` dim."""
        if not self.color:
            return str(task)
        return (
            self.paint(task.project, project_hue(task.project))
            + self.dim("#")
            + self.paint(task.task, TASK_HUE)
        )
