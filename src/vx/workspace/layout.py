"""Which projects sit inside which: a project's files and outputs stop where a nested one starts."""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vx.workspace.model import Workspace


def nested_dirs(ws: Workspace) -> dict[str, tuple[str, ...]]:
    """Each project's nested projects, as root-relative dirs, found by one sort and bisects.

    Linear in the workspace plus the nesting it has, so a warm run over thousands of projects
    does not pay a pairwise comparison.
    """
    dirs = sorted(p.rel_dir for p in ws.projects if p.rel_dir not in (".", ""))
    out: dict[str, tuple[str, ...]] = {}
    for project in ws.projects:
        if project.rel_dir in (".", ""):
            out[project.name] = tuple(dirs)
            continue
        prefix = project.rel_dir + "/"
        start = bisect.bisect_left(dirs, prefix)
        end = bisect.bisect_left(dirs, project.rel_dir + "0")  # "0" sorts right after "/"
        out[project.name] = tuple(dirs[start:end])
    return out
